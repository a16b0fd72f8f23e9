"""``benchgen report``: one run's tables (markdown + JSON) and plots (PNG).

Per task and reporting checkpoint: the suite's task score (Atari: mean raw score of the last 100
training episodes finished before the checkpoint, Machado et al. 2018) in every time view the
suite records (Atari: 5 min, 30 min and SABER's uncapped score), averaged over seeds; the
normalized scores, median, capped mean and SABER class histogram at the final checkpoint; and
learning curves. Joint runs add zero-shot and fine-tuning tables.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from benchgen.errors import UsageError
from benchgen.phases import (
    JOINT,
    REEVAL,
    REPORT_ORDER,
    TRAIN,
    TRANSFER,
    VIDEO,
    ZEROSHOT,
    best_policy_phase,
    evaluated_phase,
    evaluation_phase,
)
from benchgen.protocols import protocol_budget, protocol_label
from benchgen.registry import get_registry
from benchgen.results import figures, generalization, summaries
from benchgen.results.compare.gather import Run, load_phases, views_of
from benchgen.results.record import machines_ran_on, part_trained, resume_changes
from benchgen.results.rundir import RunDir, write_atomically
from benchgen.results.transfer import CURVES, has_transfer_units, transfer_rows
from benchgen.scoring import CLASSES, raw_summary, resolve_baseline

#: the order phases are reported in
PHASE_ORDER = list(REPORT_ORDER)


def _phase_rank(phase: str) -> tuple[int, str]:
    """Where a phase goes in the report: ``PHASE_ORDER``, then any other (by name)."""
    return (PHASE_ORDER.index(phase) if phase in PHASE_ORDER else len(PHASE_ORDER), phase)


def _short_zeroshot(runs: dict[str, Run], units, wanted: int) -> dict[str, int]:
    """Finished zero-shot units whose task got fewer than ``wanted`` episodes (none at all
    included): "task sSEED" -> episodes."""
    series = runs[ZEROSHOT].series if ZEROSHOT in runs else {}
    counts = {
        f"{u.tasks[0]} s{u.seed}": len(series[(u.tasks[0], u.seed)][0]) if (u.tasks[0], u.seed) in series else 0
        for u in units
        if u.phase == ZEROSHOT and u.status == "done"
    }
    return {name: n for name, n in sorted(counts.items()) if n < wanted}


def task_scores(run: Run, scorer, upto_frames: int | None = None) -> dict[str, dict[str, float]]:
    """view -> task -> score (mean over seeds of the scorer's per-task rule)."""
    return {view: run.task_scores(scorer, view, upto_frames) for view in run.views}


class _Normalization:
    """How a report normalizes: the suite's scorer and the baseline. A ``--baseline`` the user
    gave is resolved once, as ``benchgen score`` resolves it (``scoring.resolve_baseline``): an
    unknown name or a file that is not a task,score CSV is one line, ``raw`` reports raw scores,
    and a CSV's table stays known to the scorer by its name (the figures look it up again).
    Without one, the suite's default (or the run's protocol's own, e.g. Atari 100K's
    human_atari100k), and a suite that cannot normalize is reported raw."""

    def __init__(self, record, baseline: str | None):
        registry = get_registry()
        suite = registry.suite(record.suite)
        self.scorer = registry.scorer(suite)
        self.given = baseline is not None
        self.raw = False
        if self.given:
            self.scorer, baseline, _ = resolve_baseline(self.scorer, registry.reference_scores(suite), baseline)
            self.raw = baseline is None
        else:  # the run's protocol may have a yardstick of its own (Atari 100K: human_atari100k)
            preferred = self.scorer.default_baseline_for(record.protocol or {})
            baseline = preferred if preferred != self.scorer.default_baseline else None
        self.baseline = baseline

    def score(self, raw: dict[str, float]) -> dict[str, Any]:
        """``Scorer.score`` of ``raw``; ``{"error": ...}`` where the suite's default cannot normalize."""
        if self.raw:
            return raw_summary(raw)
        try:
            return self.scorer.score(raw, self.baseline)
        except Exception as exc:  # noqa: BLE001 - a suite without references is reported raw
            if self.given:
                raise
            return {"error": str(exc)}


def build_report(run_dir: Path, baseline: str | None = None) -> dict[str, Any]:
    """One run's report: the same reading and per-task scoring as ``benchgen compare``, per phase."""
    run_dir = Path(run_dir)
    record = RunDir(run_dir).record()
    registry = get_registry()
    suite = registry.suite(record.suite)
    normalization = _Normalization(record, baseline)
    scorer = normalization.scorer
    runs = load_phases(run_dir, run_dir.name)
    store = RunDir(run_dir).store(readonly=True)
    try:
        units = store.units()
        split = record.split or {}
        transfer = (
            transfer_rows(store, list(split.get("train", ())), list(split.get("test", ())), scorer)
            if has_transfer_units(store)
            else []
        )
    finally:
        store.close()
    wanted = record.run_config.zeroshot_episodes
    short = _short_zeroshot(runs, units, wanted)
    # the transfer phases (and their evaluation rounds) mix several joint checkpoints: reported
    # as curves, not as a phase
    phases = sorted(
        {p for p in runs if (evaluated_phase(p) or p) not in TRANSFER and p != VIDEO}
        | ({ZEROSHOT} if short else set()),
        key=_phase_rank,
    )
    default_budget = protocol_budget(suite, record.protocol_choice)
    report: dict[str, Any] = {
        "run_dir": str(run_dir),
        "suite": record.suite,
        "agent": record.agent,
        "budget": record.budget,
        "budget_unit": record.budget_unit,
        "protocol_length": record.budget >= default_budget,
        "protocol_budget": default_budget,
        "task_score_rule": record.task_score_rule,
        # the named protocol (None for a suite with one) and a custom protocol's changed values
        "protocol": protocol_label(record.protocol or {}),
        # a re-evaluation run (``benchgen evaluate``): the protocol its agents were trained under
        "reevaluation": {
            **{k: v for k, v in (record.reevaluation or {}).items() if k in ("source_run", "source_protocol_label")},
            # the agents evaluated before the end of their training budget (none: "")
            **({"part_trained": part_trained(record.reevaluation)} if record.reevaluation else {}),
        },
        # the file's changes, when they changed anything (a value equal to the preset's does not)
        "protocol_changes": (record.protocol_choice or {}).get("changes") or {}
        if (record.protocol or {}).get("protocol") == "custom"
        else {},
        "seeds": record.seeds,
        # what resumes changed (resume --set's settings, resume --force's protocol or software)
        "resume_changes": resume_changes(record),
        "machines": machines_ran_on(record),
        "view_labels": views_of(record),
        "phases": {},
        # per seed and joint checkpoint: zero-shot and fine-tuning means (benchgen.results.transfer)
        "transfer": [dict(row, joint_budget_units=record.from_frames(row["frames"])) for row in transfer],
    }
    for phase in phases:
        run = runs.get(phase)
        section: dict[str, Any] = {"episodes": sum(len(f) for f, _ in run.series.values()) if run else 0}
        unit_phase = evaluated_phase(phase) or phase  # evaluation episodes belong to their units' phase
        members = [u for u in units if u.phase == unit_phase]
        section["complete"] = all(u.status == "done" for u in members)
        if unit_phase in (TRAIN, JOINT):
            # a reporting point counts once every unit of the phase played past it; the others
            # are named as not reached, never filled with an earlier score
            played = min((u.frames_done for u in members), default=0)
            reached = [c for c in record.checkpoints if record.to_frames(c) <= played]
            section["checkpoints"] = {str(c): task_scores(run, scorer, record.to_frames(c)) for c in reached}
            section["not_reached"] = [c for c in record.checkpoints if c not in reached]
        final = task_scores(run, scorer) if run else {view: {} for view in views_of(record)}
        section["final"] = final
        section["normalized"] = normalization.score(final["score"])
        section["raw_mean"] = float(np.mean([v for v in final["score"].values() if not math.isinf(v)] or [math.nan]))
        # SABER Table 3: every time view normalized, not only the final score
        section["normalized_views"] = {}
        for view in final:
            if view != "score" and final[view] and "error" not in section["normalized"]:
                normed = normalization.score(final[view])
                if normed.get("classes"):
                    section["normalized_views"][view] = {k: normed[k] for k in ("median", "mean", "n_tasks")}
        finals = _final_scores(run, scorer) if run else {}
        if finals:
            section["final_score"] = finals
        if phase == ZEROSHOT:
            section["short"], section["episodes_wanted"] = short, wanted
        report["phases"][phase] = section
    if TRAIN in runs or evaluation_phase(TRAIN) in runs:  # Machado et al.'s summaries side by side
        reached = report["phases"].get(TRAIN, {}).get("checkpoints", {})
        report["learning_summaries"] = {
            "k": summaries.K,
            "tasks": summaries.learning_summaries(
                _scores(runs.get(TRAIN)),
                _scores(runs.get(evaluation_phase(TRAIN))),
                {c: record.to_frames(int(c)) for c in reached},
                reevaluated=_scores(runs.get(best_policy_phase(TRAIN))),
            ),
        }
    if suite.held_out_evaluation:
        report["generalization"] = generalization.gaps(report["phases"])
    report["references"] = {
        name: {"description": ref.description, "aggregate": getattr(ref, "aggregate", None)}
        for name, ref in registry.reference_scores(suite).items()
    }
    return report


def _scores(run: Run | None) -> dict:
    """(task, seed) -> (frames, raw scores) of a phase's episodes (the uncapped view)."""
    return {key: (frames, views["score"]) for key, (frames, views) in run.series.items()} if run else {}


def _final_scores(run: Run, scorer) -> dict[str, float]:
    """task -> the scorer's second per-task score (``Scorer.final_score``), mean over seeds; empty
    when the suite has none."""
    per_task: dict[str, list[float]] = {}
    for task, seed in run.series:
        value = run.final_score(scorer, task, seed)
        if value is None:
            return {}
        per_task.setdefault(task, []).append(value)
    return {t: float(np.mean(v)) for t, v in per_task.items()}


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        if math.isinf(v):
            return "inf"
        if math.isnan(v):
            return "-"
        return f"{v:,.1f}" if abs(v) >= 100 else f"{v:.3g}"
    return str(v)


def to_markdown(report: dict) -> str:
    unit = report["budget_unit"]
    out = [f"# {report['agent']} on {report['suite']}", ""]
    out.append(
        f"Budget {report['budget']:,} {unit} per unit, seeds {report['seeds']}. "
        f"Per-task score: {report['task_score_rule']}."
    )
    if report.get("protocol"):
        changed = ", ".join(f"{k} = {v}" for k, v in report["protocol_changes"].items())
        out.append(f"Protocol: {report['protocol']}" + (f"; changed: {changed}." if changed else "."))
    if report.get("reevaluation"):
        source = report["reevaluation"]
        out.append(
            f"Re-evaluation: the agents were trained under the protocol {source['source_protocol_label']} "
            f"(run {source['source_run']}) and are evaluated here under {report['protocol']}, from their last checkpoints."
        )
        if source.get("part_trained"):
            out.append(f"\n**Not fully trained**: evaluated from {source['part_trained']}.")
    if report.get("machines"):
        out.append(f"Ran on: {'; then '.join(report['machines'])}.")
    if report.get("resume_changes"):
        out += [
            "",
            "Resumed with changes (each later episode ran with them):",
            *(f"- {c}" for c in report["resume_changes"]),
        ]
    if not report["protocol_length"]:
        out.append(
            f"\n**Not protocol-length**: the protocol's budget is {report['protocol_budget']:,} {unit}; "
            "do not compare these numbers with published ones."
        )
    for phase, sec in report["phases"].items():
        out += ["", f"## Phase: {phase} ({sec['episodes']} episodes)", ""]
        if sec.get("short"):
            out.append(
                f"**Fewer than {sec['episodes_wanted']} episodes** within the zero-shot frame cap: "
                + ", ".join(f"{name} ({n})" for name, n in sec["short"].items())
                + "; raise it with `--set run.zeroshot_frames=N`."
            )
            out.append("")
        if not sec["complete"]:
            out += [
                "**Unfinished**: some units of this phase did not reach their budget; the scores below are "
                f"provisional (continue with `benchgen resume {report['run_dir']}`).",
                "",
            ]
        if sec.get("not_reached"):
            out += ["Reporting points not reached yet: " + ", ".join(f"{c:,} {unit}" for c in sec["not_reached"]), ""]
        for ckpt, views in sec.get("checkpoints", {}).items():
            out += [f"### At {int(ckpt):,} {unit}", ""]
            names = list(views)
            out.append("| task | " + " | ".join(report["view_labels"].get(v, v) for v in names) + " |")
            out.append("|---|" + "---|" * len(names))
            for task in sorted(views["score"]):
                out.append(f"| {task} | " + " | ".join(_fmt(views[v].get(task, math.nan)) for v in names) + " |")
            out.append("")
        norm = sec["normalized"]
        if "error" in norm:
            out.append(f"Normalization unavailable: {norm['error']}")
            continue
        if not norm.get("classes"):  # a suite scored on its own scale (e.g. Sonic's 0..10,000)
            finals = sec.get("final_score", {})
            out += ["### Final scores", ""]
            out += ["| task | score | final score |", "|---|---|---|"] if finals else ["| task | score |", "|---|---|"]
            out += [
                f"| {task} | {_fmt(v)} |" + (f" {_fmt(finals.get(task, math.nan))} |" if finals else "")
                for task, v in sorted(norm["raw"].items())
            ]
            out.append(f"\nMean over {norm['n_tasks']} tasks: **{_fmt(norm['mean'])}**")
            if norm.get("baseline_mean") is not None:
                out.append(f"(baseline {norm['baseline']}: {_fmt(norm['baseline_mean'])})")
            continue
        out += ["### Final scores", "", "| task | raw | normalized | class |", "|---|---|---|---|"]
        for task, raw in sorted(norm["raw"].items()):
            n = norm["per_task"].get(task)
            out.append(
                f"| {task} | {_fmt(raw)} | {'-' if n is None else f'{n * 100:.2f}%'} | "
                f"{norm['per_task_class'].get(task, 'raw only')} |"
            )
        if norm["n_tasks"]:
            out += [
                "",
                f"Baseline **{norm['baseline']}**: median {norm['median'] * 100:.2f}%, "
                f"capped mean {norm['mean'] * 100:.2f}% over {norm['n_tasks']} tasks; classes "
                + ", ".join(f"{k} {v}" for k, v in norm["classes"].items()),
            ]
        for view, agg in sec.get("normalized_views", {}).items():
            out.append(
                f"{report['view_labels'].get(view, view)} view: median {agg['median'] * 100:.2f}%, capped mean "
                f"{agg['mean'] * 100:.2f}% over {agg['n_tasks']} tasks"
            )
        if norm["unnormalized"]:
            out.append(f"\nReported raw, left out of the aggregates: {', '.join(sorted(norm['unnormalized']))}")
        out.append(f"\nMean raw score over tasks: {_fmt(sec['raw_mean'])}")
    out += generalization.markdown(report, _fmt)
    if report.get("learning_summaries"):
        out += summaries.markdown(report["learning_summaries"], unit)
    if report.get("transfer"):
        out += ["", "## Transfer during joint training", ""]
        out.append(
            "Joint checkpoints evaluated zero-shot on every train and test task and fine-tuned on every "
            "test task, as in Nichol et al. 2018, Figure 4: per seed and checkpoint, the mean over tasks "
            "of raw scores (zero-shot: each task's mean episode score; fine-tuning average: the mean of "
            "all its training episodes; final: its final score, as in the fine-tuning tables)."
        )
        out += [
            "",
            f"| seed | joint {unit} | " + " | ".join(CURVES.values()) + " |",
            "|---|---|" + "---|" * len(CURVES),
        ]
        for row in report["transfer"]:
            values = " | ".join(_fmt(row[key]) for key in CURVES)
            out.append(f"| {row['seed']} | {row['joint_budget_units']:,} | {values} |")
        out += ["", "![transfer during joint training](transfer.png)"]
    if report["references"]:
        out += ["", "## Published references", ""]
        for name, ref in report["references"].items():
            agg = f" (aggregate {ref['aggregate']})" if ref.get("aggregate") is not None else ""
            out.append(f"- {name}: {ref['description']}{agg}")
    return "\n".join(out) + "\n"


def plot(run_dir: Path, report: dict, scorer=None) -> list[Path]:
    """Learning curves (raw score vs frames, per task) and the class histogram, as PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    rundir = RunDir(run_dir)
    out_dir = rundir.report_dir()  # (every plot named after a phase is named through rundir.output_file)
    runs = load_phases(run_dir, run_dir.name)
    curves = sorted(
        (phase, task, seed, frames, values["score"])
        for phase, run in runs.items()
        if phase in PHASE_ORDER and phase != ZEROSHOT
        for (task, seed), (frames, values) in run.series.items()
    )
    fig, ax = plt.subplots(figsize=(8, 5))
    for phase, task, seed, frames, scores in curves:
        x = frames.astype(float)
        y = scores.astype(float).copy()
        y[np.isinf(y)] = np.nan
        window = min(100, max(1, len(y) // 5))
        smooth = np.convolve(np.nan_to_num(y), np.ones(window) / window, mode="valid") if len(y) >= window else y
        ax.plot(x[len(x) - len(smooth) :], smooth, label=f"{phase}:{task}:s{seed}")
    ax.set_xlabel("frames")
    ax.set_ylabel("raw episode score (moving mean)")
    ax.set_title(f"{report['agent']} on {report['suite']}")
    if 0 < len(curves) <= 12 and ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7)
    path = rundir.output_file(out_dir, "learning_curves.png")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    paths.append(path)
    paths += _paper_figures(run_dir, report, runs, scorer)
    for phase, sec in report["phases"].items():
        norm = sec["normalized"]
        if not norm.get("classes") or not norm["n_tasks"]:
            continue
        fig, ax = plt.subplots(figsize=(6, 4))
        names = [n for n, _ in CLASSES]
        ax.bar(names, [norm["classes"][n] for n in names], color="tab:blue")
        ax.set_ylabel("tasks")
        ax.set_title(f"{phase}: score classes vs {norm['baseline']}")
        path = rundir.output_file(out_dir, f"classes_{phase}.png")
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        plt.close(fig)
        paths.append(path)
    return paths


def _paper_figures(run_dir: Path, report: dict, runs: dict[str, Run], scorer=None) -> list[Path]:
    """SABER's median-normalized curves and classes per reporting point, or Nichol et al.'s
    instantaneous mean score curve, per learning phase (``benchgen.results.figures``); ``scorer``:
    the report's (:class:`_Normalization`), else the suite's."""
    if scorer is None:
        registry = get_registry()
        scorer = registry.scorer(registry.suite(report["suite"]))
    rundir = RunDir(run_dir)
    out_dir = rundir.report_dir()
    unit = report["budget_unit"]
    paths = []
    for phase, sec in report["phases"].items():
        run = runs.get(phase)
        if run is None or phase in (ZEROSHOT, REEVAL) or not run.series:
            continue
        grid = figures.frame_grid(run)
        x = np.array([run.record.from_frames(int(frames)) for frames in grid])  # in the run's budget unit
        norm = sec["normalized"]
        if norm.get("classes"):
            baseline = norm["baseline"]
            curves = figures.median_normalized_curves(run, scorer, baseline, grid)
            paths.append(
                figures.plot_seed_curves(
                    x,
                    curves,
                    f"{phase}: median normalized score",
                    f"median over tasks (1 = {baseline})",
                    unit,
                    rundir.output_file(out_dir, f"median_normalized_{phase}.png"),
                )
            )
            counts = figures.classes_by_checkpoint(sec, scorer, baseline)
            if counts:
                paths.append(
                    figures.plot_classes_by_checkpoint(
                        counts,
                        f"{phase}: score classes vs {baseline} by reporting point",
                        unit,
                        rundir.output_file(out_dir, f"classes_by_checkpoint_{phase}.png"),
                    )
                )
        elif "error" not in norm:
            curves = figures.instantaneous_mean_curves(run, grid)
            paths.append(
                figures.plot_seed_curves(
                    x,
                    curves,
                    f"{phase}: mean over tasks of the latest episode score",
                    "instantaneous score",
                    unit,
                    rundir.output_file(out_dir, f"mean_score_{phase}.png"),
                )
            )
    return paths


def write_report(run_dir: Path, baseline: str | None = None) -> str:
    """Write report/report.md, report.json and PNG plots; return a short text summary."""
    run_dir = Path(run_dir)
    report = build_report(run_dir, baseline)
    scorer = _Normalization(RunDir(run_dir).record(), baseline).scorer  # (a --baseline CSV's table included)
    out = RunDir(run_dir).report_dir()
    try:
        out.mkdir(exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot write the report into {out} ({exc.strerror or exc}); make the run directory writable")
    for link in [f for f in out.iterdir() if f.is_symlink()]:  # the plots are written in place: not through links
        link.unlink()
    write_atomically(out / "report.json", lambda tmp: tmp.write_text(json.dumps(report, indent=2, default=str)))
    write_atomically(out / "report.md", lambda tmp: tmp.write_text(to_markdown(report)))
    plot(run_dir, report, scorer)
    if report["transfer"]:
        rows = [dict(row, x=row["joint_budget_units"]) for row in report["transfer"]]
        figures.plot_transfer(rows, report["budget_unit"], out / "transfer.png")
    lines = [f"report: {out / 'report.md'}"]
    for phase, sec in report["phases"].items():
        norm = sec["normalized"]
        if norm.get("n_tasks") and not norm.get("classes"):
            lines.append(
                f"{phase}: {sec['episodes']} episodes; mean score over {norm['n_tasks']} tasks {_fmt(norm['mean'])}"
            )
        elif norm.get("n_tasks"):
            lines.append(
                f"{phase}: {sec['episodes']} episodes; median {norm['median'] * 100:.2f}%, capped mean "
                f"{norm['mean'] * 100:.2f}% ({norm['baseline']}); mean raw {_fmt(sec['raw_mean'])}"
            )
        else:
            lines.append(f"{phase}: {sec['episodes']} episodes; mean raw {_fmt(sec['raw_mean'])}")
    if not report["protocol_length"]:
        lines.append("(not protocol-length: scaled-down budget)")
    if not all(sec["complete"] for sec in report["phases"].values()):
        lines.append("(unfinished: scores are provisional; resume the run to finish it)")
    return "\n".join(lines)
