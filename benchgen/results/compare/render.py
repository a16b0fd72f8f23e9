"""Text outputs of a comparison: JSON for machines, markdown for people, a terminal summary."""

from __future__ import annotations

import json
import math
from typing import Any

from benchgen.results.compare.stats import METRIC_TITLES
from benchgen.scoring import CLASSES, strict_json


def to_json(result: dict) -> str:
    return json.dumps(strict_json(result), indent=1, allow_nan=False)


def fmt_raw(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, float) and math.isinf(v):
        return "inf"
    v = float(v)
    return f"{v:,.1f}" if abs(v) >= 100 else f"{v:.3g}"


def fmt_value(v: Any, normalized: bool) -> str:
    """A normalized score as a percentage, a raw one as a number."""
    if v is None or (isinstance(v, float) and (math.isnan(v) or math.isinf(v))) or not normalized:
        return fmt_raw(v)
    return f"{float(v) * 100:.2f}%"


def fmt_estimate(e: dict, normalized: bool) -> str:
    s = fmt_value(e["value"], normalized)
    if e.get("ci_low") is not None and not math.isnan(e["ci_low"]):
        s += f" [{fmt_value(e['ci_low'], normalized)}, {fmt_value(e['ci_high'], normalized)}]"
    return s


def metric_title(result: dict, m: str) -> str:
    return METRIC_TITLES[m] if result["normalized"] or m != "mean" else "Mean"


def header_lines(result: dict) -> list[str]:
    """The lines that say what was compared and how (shared by markdown and HTML)."""
    unit = result["budget_unit"]
    when = (
        f"at {result['amount']:,} {unit} (--at)"
        if result["at"]
        else f"at the end of training ({result['amount']:,} {unit})"
    )
    phases = sorted({r["phase"] for r in result["runs"]})
    lines = [
        (
            f"Suite {result['suite']}, phase {', '.join(phases)}, per-task scores {when}, "
            f"view {result['view_labels'].get(result['view'], result['view'])}; per-task score: {result['task_score_rule']}."
        )
    ]
    if result["normalized"] and result.get("normalization", "reference") != "reference":
        lines.append(
            f"Scores normalized by the range of the **{result['baseline']}**: (a - r_min) / (r_max - r_min) per "
            f"task (Bellemare et al. 2013, section 4.1), over {len(result['aggregate_tasks'])} tasks; the "
            "performance profile is that paper's score distribution (section 4.2.3): the fraction of scores at or "
            "above each threshold."
        )
    elif result["normalized"]:
        lines.append(
            f"Scores normalized against **{result['baseline']}**: (a - random) / |{result['baseline']} - random| "
            f"(SABER eq. 1/2), over {len(result['aggregate_tasks'])} tasks; infinite gameplay counts as "
            f"{result['statistics']['infinite_cap'] * 100:.0f}% in every aggregate."
        )
    else:
        lines.append(f"Scores are **raw** (no normalization) over {len(result['aggregate_tasks'])} tasks.")
    st = result["statistics"]
    lines.append(
        f"Intervals: {st['ci'] * 100:g}% {st['bootstrap']} bootstrap, {st['reps']} replications, seed {st['seed']}; "
        "each (run, seed) is one row of an agent's (runs x tasks) matrix (Agarwal et al. 2021)."
    )
    if not result["protocol_length"]:
        lines.append(
            f"**Not protocol-length**: the protocol's budget is {result['protocol_budget']:,} {unit}; "
            "do not compare these numbers with published ones."
        )
    return lines


def _counts_at_or_above(result: dict) -> bool:
    """Whether the comparison counts tasks at or above the baseline (reference normalization)."""
    return any(a.get("at_or_above_baseline") is not None for a in result["agents"].values())


def aggregate_head(result: dict) -> list[str]:
    """The aggregate table's header: the metrics, then the count of tasks at or above the baseline
    (normalized >= 1: Atari 100K's "games superhuman" against ``human_atari100k``)."""
    head = ["agent", "runs"] + [metric_title(result, m) for m in result["metrics"]]
    return head + ([f">= {result['baseline']}"] if _counts_at_or_above(result) else [])


def aggregate_rows(result: dict) -> list[list[str]]:
    """Agents (with intervals) then reference agents (point estimates) then published aggregates."""
    norm = result["normalized"]
    count = _counts_at_or_above(result)

    def above(row: dict) -> list[str]:
        if not count:
            return []
        n = row.get("at_or_above_baseline")
        return ["-" if n is None else f"{n}/{sum(row['classes'].values())}"]

    rows = []
    for lab, a in result["agents"].items():
        rows.append(
            [lab, str(a["n_runs"])] + [fmt_estimate(a["aggregates"][m], norm) for m in result["metrics"]] + above(a)
        )
    for name, r in result["references"].items():
        cells = [fmt_value(r["aggregates"].get(m), norm) for m in result["metrics"]]
        rows.append([f"{name} (reference, {r['checkpoint']}; {len(r['covered'])} tasks)", "-"] + cells + above(r))
    for name, p in result["published"].items():
        std = f" ± {fmt_raw(p['std'])}" if p.get("std") is not None and not math.isnan(p["std"]) else ""
        rows.append(
            [f"{name} (published aggregate)", "-"]
            + [f"{fmt_raw(p['aggregate'])}{std}" if m == "mean" else "-" for m in result["metrics"]]
            + (["-"] if count else [])
        )
    return rows


def runs_table(result: dict) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the compared runs (markdown and HTML alike)."""
    head = ["run", "agent (label)", "phase", "seeds", "budget", "complete"]
    rows = [
        [
            r["name"],
            r["label"],
            r["phase"],
            ",".join(map(str, r["seeds"])),
            f"{r['budget']:,}",
            "yes" if r["complete"] else "NO",
        ]
        for r in result["runs"]
    ]
    return head, rows


def improvement_table(result: dict) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the probability of improvement between agents."""
    rows = [
        [
            p["x"],
            p["y"],
            f"{p['value']:.3f}",
            "-" if p["ci_low"] is None else f"[{p['ci_low']:.3f}, {p['ci_high']:.3f}]",
        ]
        for p in result["probability_of_improvement"]
    ]
    return ["X", "Y", "P(X > Y)", "CI"], rows


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    return out + [""]


#: the heading of the per-task table of a suite's second score (Nichol et al. 2018's "Final Score")
FINAL_SCORE_TITLE = "Final score (the suite's second per-task score, mean ± std over seeds)"


def per_task_rows(result: dict, view: str) -> tuple[list[str], list[list[str]]]:
    """Rows of a per-task table: a view's raw scores, or ``final_score`` (``Scorer.final_score``)."""
    table = result["per_task"]["final_score"] if view == "final_score" else result["per_task"]["views"][view]
    cols = list(dict.fromkeys(k for cells in table.values() for k in cells))
    rows = []
    for task, cells in table.items():
        row = [task]
        for c in cols:
            cell = cells.get(c)
            if cell is None:
                row.append("-")
                continue
            s = fmt_raw(cell["mean"])
            if cell.get("std") is not None and not math.isnan(cell["std"]):
                s += f" ± {fmt_raw(cell['std'])}"
            if not c.endswith("(ref)"):
                s += f" (n={cell['n']})"
            row.append(s)
        rows.append(row)
    return ["task"] + cols, rows


def _normalized_cell(cell: dict) -> str:
    """A normalized score, with its SABER class when it has one (reference-normalized scores)."""
    shown = fmt_value(cell["value"], True)
    return f"{shown} ({cell['class']})" if cell["class"] is not None else shown


def normalized_rows(result: dict) -> tuple[list[str], list[list[str]]]:
    table = result["per_task"]["normalized"]
    cols = list(dict.fromkeys(k for cells in table.values() for k in cells))
    rows = [[task] + [_normalized_cell(cells[c]) if c in cells else "-" for c in cols] for task, cells in table.items()]
    return ["task"] + cols, rows


def class_rows(result: dict) -> list[list[str]]:
    names = [n for n, _ in CLASSES]
    rows = [[lab] + [str(a["classes"][n]) for n in names] for lab, a in result["agents"].items() if a["classes"]]
    rows += [
        [f"{name} (reference)"] + [str(r["classes"][n]) for n in names]
        for name, r in result["references"].items()
        if r["classes"]
    ]
    return rows


def welch_rows(pair: dict) -> list[list[str]]:
    rows = []
    for task, r in pair["tasks"].items():
        p = "-" if r["p"] is None or math.isnan(r["p"]) else f"{r['p']:.3g}"
        t = "-" if r["t"] is None or math.isnan(r["t"]) else f"{r['t']:.3g}"
        result = r["result"] + (f" ({r['why']})" if r.get("why") else "")
        rows.append([task, fmt_raw(r["mean_x"]), fmt_raw(r["mean_y"]), f"{r['n_x']}/{r['n_y']}", t, p, result])
    return rows


def to_markdown(result: dict, images: list[str] = ()) -> str:
    norm = result["normalized"]
    out = [f"# Comparison: {result['title']}", ""]
    if result["forced"]:
        out += [f"> **{result['forced_label']}**", ""]
    out += [*header_lines(result), ""]
    out += ["## Runs", ""] + _table(*runs_table(result))
    out += [f"## Aggregates ({len(result['aggregate_tasks'])} tasks)", ""]
    out += _table(aggregate_head(result), aggregate_rows(result))
    if result["probability_of_improvement"]:
        out += ["## Probability of improvement", ""]
        out += _table(*improvement_table(result))
    out += published_runs_markdown(result, norm)
    if norm and class_rows(result):
        out += ["## Score classes (SABER)", ""]
        out += _table(
            ["agent"] + [f"{n} (< {u * 100:g}%)" if u != math.inf else f"{n} (>= 100%)" for n, u in CLASSES],
            class_rows(result),
        )
    for pair in result["welch"]:
        out += [
            f"## Paired per-task comparison: {pair['x']} vs {pair['y']} (Welch's t-test)",
            "",
            (
                f"*{pair['method']}.* {pair['x']}: {pair['wins']} wins, {pair['losses']} losses, "
                f"{pair['ties']} ties, {pair['not_tested']} not tested."
            ),
            "",
        ]
        out += _table(["task", f"mean {pair['x']}", f"mean {pair['y']}", "seeds", "t", "p", "result"], welch_rows(pair))
    out += ["## Per-task scores", ""]
    if norm:
        head, rows = normalized_rows(result)
        out += [
            f"### Normalized ({result['baseline']}), view {result['view_labels'].get(result['view'], result['view'])}",
            "",
        ]
        out += _table(head, rows)
    for view in result["views"]:
        head, rows = per_task_rows(result, view)
        out += [f"### Raw scores, view {result['view_labels'].get(view, view)} (mean ± std over seeds)", ""] + _table(
            head, rows
        )
    if result["per_task"].get("final_score"):
        head, rows = per_task_rows(result, "final_score")
        out += [f"### {FINAL_SCORE_TITLE}", ""] + _table(head, rows)
    if result["notes"]:
        out += ["## Notes", ""] + [f"- {n}" for n in result["notes"]] + [""]
    if images:
        out += ["## Plots", ""] + [f"![{name}]({name})" for name in images] + [""]
    if result["forced"]:
        out += [f"**{result['forced_label']}**", ""]
    return "\n".join(out)


def summary(result: dict, out_dir=None) -> str:
    """A few lines for the terminal."""
    lines = []
    if result["forced"]:
        lines.append(result["forced_label"])
    metrics = result["metrics"]
    lines.append(f"{'agent':28} {'runs':>4}  " + "  ".join(f"{metric_title(result, m):>28}" for m in metrics))
    for lab, a in result["agents"].items():
        above = a.get("at_or_above_baseline")
        lines.append(
            f"{lab[:28]:28} {a['n_runs']:>4}  "
            + "  ".join(f"{fmt_estimate(a['aggregates'][m], result['normalized']):>28}" for m in metrics)
            + ("" if above is None else f"  {above}/{sum(a['classes'].values())} tasks >= {result['baseline']}")
        )
    for p in result["probability_of_improvement"]:
        ci = "" if p["ci_low"] is None else f" [{p['ci_low']:.3f}, {p['ci_high']:.3f}]"
        lines.append(f"P({p['x']} > {p['y']}) = {p['value']:.3f}{ci}")
    if out_dir is not None:
        lines.append(f"comparison: {out_dir}/compare.md, compare.json, compare.html")
    return "\n".join(lines)


# -- the published-runs section (benchgen.results.compare.published_runs gathers it) ----------------
def published_runs_blocks(
    result: dict[str, Any], normalized: bool
) -> list[tuple[str, list[str], list[tuple[str, list[str], list[list[str]]]]]]:
    """The section as (title, paragraphs, [(caption, head, rows)]) per table, for the markdown and
    the HTML page alike (empty when no table has runs)."""
    out = []
    for name, e in (result.get("published_runs") or {}).items():
        n = sorted(set(e["runs_per_task"].values()))
        count = f"{n[0]}-{n[-1]}" if len(n) > 1 else str(n[0])
        text = [
            f"{e['description']} ({e['source']}).",
            f"{count} published runs a task on {len(e['runs_per_task'])} of the compared tasks"
            + (
                f"; the aggregates' matrix uses the first {e['matrix_runs']} of each task's"
                if len(n) > 1 and e["aggregates"]
                else ""
            )
            + ".",
        ]
        tables = []
        if e["aggregates"]:
            head = ["", *(METRIC_TITLES.get(m, m) for m in e["aggregates"])]
            rows = [
                [f"{name} ({e['matrix_runs']} runs a task)"]
                + [fmt_estimate(v, normalized) for v in e["aggregates"].values()]
            ]
            for lab, aggs in e["agents_on_these_tasks"].items():
                rows.append(
                    [f"{lab}, same {len(e['aggregate_tasks'])} tasks"]
                    + [fmt_estimate(v, normalized) for v in aggs.values()]
                )
            tables.append(("Aggregates", head, rows))
            rows = [
                [lab, f"{v['value']:.3f}", "-" if v["ci_low"] is None else f"[{v['ci_low']:.3f}, {v['ci_high']:.3f}]"]
                for lab, v in e["improvement"].items()
            ]
            tables.append(("Probability of improvement", ["agent", f"P(agent > {name})", "CI"], rows))
        rows = []
        for lab, per_task in e["percentiles"].items():
            names = per_task.get("rows", [])
            for t, values in per_task.items():
                if t == "rows":
                    continue
                cells = ", ".join(
                    f"{names[i].rsplit(':', 1)[-1] if i < len(names) else i}: {v:.0f}" for i, v in enumerate(values)
                )
                rows.append([lab, t, str(e["runs_per_task"][t]), cells])
        tables.append(
            (
                "Each run's percentile among the published runs of its task (mid-rank: ties count one half)",
                ["agent", "task", "published runs", "percentile of each run"],
                rows,
            )
        )
        out.append((f"Published runs: {name}", text, tables))
    return out


def published_runs_markdown(result: dict[str, Any], normalized: bool) -> list[str]:
    """Markdown lines of the section (empty when no table has runs)."""
    lines: list[str] = []
    for title, text, tables in published_runs_blocks(result, normalized):
        lines += [f"## {title}", ""]
        for paragraph in text:
            lines += [paragraph, ""]
        for caption, head, rows in tables:
            lines += [f"{caption}:", ""] + _table(head, rows)
    return lines
