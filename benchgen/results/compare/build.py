"""Building a comparison: runs -> score matrices -> statistics, as one JSON-ready dict.

The dict is what ``compare.json`` holds; the markdown, the plots and the HTML page are made from
it alone. Floats stay floats here (``inf`` = infinite gameplay, ``nan`` = no score); the JSON
writer spells them ``"inf"`` and ``null``.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from benchgen.config import execution_settings
from benchgen.errors import UsageError
from benchgen.protocols import protocol_budget
from benchgen.results.compare import published_runs, stats
from benchgen.results.compare.gather import check_protocols, load_runs, views_of
from benchgen.results.compare.options import DEFAULTS
from benchgen.results.compare.references import (
    format_amount,
    parse_checkpoint_label,
    parse_reference_option,
    published_aggregate,
    scores_at,
)
from benchgen.results.rundir import RunDir
from benchgen.scoring import CLASSES, Normalizer, RangeNormalizer, resolve_baseline, score_class, score_ranges


def _execution_settings(registry, agent: str) -> frozenset[str]:
    """The settings of how ``agent`` runs (its config's ``execution_setting`` fields); none for
    an agent this installation does not know (its runs then split on every setting that differs)."""
    spec = registry.agents.get(agent)
    return execution_settings(spec.config_class) if spec is not None else frozenset()


def _list(a) -> list:
    return [float(x) for x in np.asarray(a, dtype=float).ravel()]


def _mean(values: np.ndarray) -> float:
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    return float(v.mean()) if v.size else math.nan


def _classes(per_task: dict[str, float]) -> dict[str, int]:
    counts = {name: 0 for name, _ in CLASSES}
    for v in per_task.values():
        if not math.isnan(v):
            counts[score_class(v)] += 1
    return counts


def build_comparison(
    paths: Iterable[str | Path],
    registry=None,
    *,
    baseline: str | None = DEFAULTS.baseline,
    normalization: str = DEFAULTS.normalization,
    baseline_set: Iterable[str] = DEFAULTS.baseline_set,
    references: Iterable[str] = DEFAULTS.references,
    phase: str = DEFAULTS.phase,
    at: int | None = DEFAULTS.at,
    view: str = DEFAULTS.view,
    reps: int = DEFAULTS.reps,
    ci: float = DEFAULTS.ci,
    seed: int = DEFAULTS.seed,
    force: bool = DEFAULTS.force,
    alpha: float = DEFAULTS.alpha,
    pairs: Iterable[tuple[str, str]] | None = DEFAULTS.pairs,
    curve_points: int = DEFAULTS.curve_points,
    show_references: bool = DEFAULTS.show_references,
) -> dict[str, Any]:
    """Gather the runs under ``paths`` and compute every table and statistic of the comparison
    (the settings are :class:`~benchgen.results.compare.options.CompareOptions`'s)."""
    if registry is None:
        from benchgen.registry import get_registry

        registry = get_registry()
    if reps < 1 or not 0 < ci < 1 or not 0 < alpha < 1 or curve_points < 1:
        raise UsageError("--reps and --curve-points must be positive, --ci and --alpha must lie in (0, 1)")
    runs, notes = load_runs(paths, phase, lambda agent: _execution_settings(registry, agent))
    diffs, forced = check_protocols(runs, force)
    meta0 = runs[0].record
    suite = registry.suite(meta0.suite)
    budgets = [protocol_budget(suite, r.record.protocol_choice) for r in runs]  # each run's own protocol's
    unit = meta0.budget_unit
    plugin_tables = dict(registry.reference_scores(suite))
    user_tables = {}
    for text in references:
        if "=" not in text and text in plugin_tables and not Path(text).exists():
            user_tables[text] = plugin_tables[text]  # a shipped table by name: shown even with --no-references
        else:
            table = parse_reference_option(text)
            user_tables[table.name] = table
    suite_scorer = registry.scorer(suite)
    if baseline is None:  # the runs' protocol may have a yardstick of its own (Atari 100K: human_atari100k)
        preferred = suite_scorer.default_baseline_for(meta0.protocol or {})
        baseline = preferred if preferred != suite_scorer.default_baseline else None
    scorer, base_name, base_notes = resolve_baseline(suite_scorer, {**plugin_tables, **user_tables}, baseline)
    notes += base_notes
    norm = Normalizer(scorer, base_name)
    if normalization not in NORMALIZATIONS:
        raise UsageError(f"--normalization {normalization}: choose one of {', '.join(NORMALIZATIONS)}")
    if normalization == "random":  # Bellemare et al. 2013, 4.1.1: r_min = 0, r_max = |random score|
        ranges = {t: (0.0, abs(r)) for t, r in scorer.random_scores.items()}
        norm = RangeNormalizer(ranges, "random score (0 to |random|)")
    elif normalization == "baseline-set":
        norm = _baseline_set(scorer, {**plugin_tables, **user_tables}, list(baseline_set))
    elif baseline_set:
        raise UsageError("--baseline-set is for --normalization baseline-set; add that, or leave the set out")

    views = [v for v in runs[0].views if all(v in r.views for r in runs)]
    if view not in views:
        raise UsageError(f"--view {view}: the runs record the views {', '.join(views)}")
    if at is not None:
        short = [r.name for r in runs if at > r.budget]
        if at <= 0 or short:
            raise UsageError(
                f"--at {at} lies outside the budget of run {', '.join(short[:3]) or '(all)'}; "
                f"give a checkpoint in (0, budget] {unit}"
            )
    amount = at if at is not None else min(r.budget for r in runs)

    labels = list(dict.fromkeys(r.label for r in runs))
    rows = {lab: [(r, s) for r in runs if r.label == lab for s in r.seeds] for lab in labels}
    all_tasks = set().union(*(r.tasks(s) for lab in labels for r, s in rows[lab]))
    common = set.intersection(*(r.tasks(s) for lab in labels for r, s in rows[lab]))
    order = [t for t in suite.tasks() if t in common] + sorted(common - set(suite.tasks()))
    if not order:
        raise UsageError("the runs share no task with episodes in every seed; compare runs of the same tasks")
    if all_tasks - common:
        notes.append(f"left out (not played by every run and seed): {', '.join(sorted(all_tasks - common))}")
    tasks = order

    raw = {
        lab: {
            v: np.array(
                [
                    [r.score(scorer, t, s, v, r.record.to_frames(at) if at else None) for t in tasks]
                    for r, s in rows[lab]
                ]
            )
            for v in views
        }
        for lab in labels
    }
    empty = [j for j, t in enumerate(tasks) if any(np.isnan(raw[lab][view][:, j]).any() for lab in labels)]
    if empty:
        notes.append(
            f"left out (some run finished no episode by {amount:,} {unit}): {', '.join(tasks[j] for j in empty)}"
        )
        keep = [j for j in range(len(tasks)) if j not in empty]
        if not keep:
            raise UsageError(f"no task has a finished episode in every run by {amount:,} {unit}; pick a later --at")
        tasks = [tasks[j] for j in keep]
        raw = {lab: {v: m[:, keep] for v, m in raw[lab].items()} for lab in labels}
    if normalization == "inter-algorithm":
        means = [{t: float(np.nanmean(raw[lab][view][:, j])) for j, t in enumerate(tasks)} for lab in labels]
        norm = RangeNormalizer(score_ranges(means), "inter-algorithm (the agents compared)")
    agg_tasks = norm.normalizable(tasks)
    if not norm.active:
        agg_tasks = [t for j, t in enumerate(tasks) if all(np.isfinite(raw[lab][view][:, j]).all() for lab in labels)]
    if set(tasks) - set(agg_tasks):
        notes.append(
            f"reported raw, left out of the aggregates ({'no baseline score' if norm.active else 'infinite gameplay'}):"
            f" {', '.join(t for t in tasks if t not in agg_tasks)}"
        )
    if not agg_tasks:
        raise UsageError(
            f"no task can be normalized against '{norm.baseline}'; pick another --baseline (or --baseline raw)"
        )
    idx = [tasks.index(t) for t in agg_tasks]
    normalized = {lab: norm.matrix(raw[lab][view][:, idx], agg_tasks) for lab in labels}
    metric_names = stats.METRICS if norm.active else stats.METRICS[:3]

    result: dict[str, Any] = {
        "title": f"{', '.join(labels)} on {suite.name}",
        "generated_at": time.strftime("%Y-%m-%d %H:%M:%S"),
        "forced": forced is not None,
        "forced_label": forced,
        "protocol_differences": diffs,
        "suite": suite.name,
        "budget_unit": unit,
        "amount": amount,
        "amount_label": format_amount(amount),
        "at": at,
        "protocol_length": all(r.budget >= budget for r, budget in zip(runs, budgets)),
        "protocol_budget": max(budgets),
        "view": view,
        "views": views,
        "view_labels": {v: label for v, label in views_of(meta0).items() if v in views},
        "baseline": norm.baseline,
        "normalization": normalization,
        "normalized": norm.active,
        "task_score_rule": meta0.task_score_rule,
        "statistics": {
            "reps": reps,
            "ci": ci,
            "seed": seed,
            "alpha": alpha,
            "bootstrap": "stratified (rliable), percentile",
            "infinite_cap": stats.INFINITE_CAP,
        },
        "metrics": list(metric_names),
        "runs": [
            {
                "path": str(r.path),
                "name": r.name,
                "agent": r.agent,
                "label": r.label,
                "phase": r.phase,
                "seeds": r.seeds,
                "budget": r.budget,
                "complete": r.complete,
            }
            for r in runs
        ],
        "labels": labels,
        "rows": {lab: [f"{r.name}:seed{s}" for r, s in rows[lab]] for lab in labels},
        "tasks": tasks,
        "aggregate_tasks": agg_tasks,
        "notes": notes,
    }
    result["agents"] = {
        lab: {
            "n_runs": len(rows[lab]),
            "aggregates": {
                m: e.as_dict() for m, e in stats.aggregates(normalized[lab], metric_names, reps, ci, seed, lab).items()
            },
            # SABER's classes are defined on normalized scores: none for raw ones (there was no
            # baseline to count tasks "at or above", and the table said "tasks >= None")
            "classes": _classes(dict(zip(agg_tasks, map(_mean, normalized[lab].T))))
            if norm.classes and norm.active
            else None,
        }
        for lab in labels
    }
    for a in result["agents"].values():  # tasks whose mean over seeds is at or above the baseline's score
        a["at_or_above_baseline"] = a["classes"]["superhuman"] if a["classes"] else None
    refs = _reference_rows(
        plugin_tables if show_references else {}, user_tables, tasks, agg_tasks, norm, amount, unit, metric_names
    )
    result["references"], result["published"] = refs
    if result["published"]:
        notes.append(
            f"published aggregates ({', '.join(result['published'])}) are the papers' numbers over their own "
            "task sets, without per-task scores; they are shown next to the agents' means, not recomputed"
        )
    for name, r in result["references"].items():
        parsed = parse_checkpoint_label(r["checkpoint"])
        if r["by_checkpoint"] and (not parsed or parsed[1] != amount):
            notes.append(
                f"reference {name} is shown at its checkpoint '{r['checkpoint']}', not at the runs' {amount:,} {unit}"
            )
    result["videos"] = _videos(runs, tasks)
    finals = _final_scores(scorer, rows, labels, tasks)
    result["per_task"] = _per_task(
        raw, normalized, tasks, agg_tasks, views, labels, result["references"], ci, classes=norm.classes
    )
    if finals:
        result["per_task"]["final_score"] = finals

    pairs = pairs if pairs is not None else list(itertools.combinations(labels, 2))
    for a, b in pairs:
        for lab in (a, b):
            if lab not in labels:
                raise UsageError(f"--pair {a}:{b}: '{lab}' is not one of the compared agents ({', '.join(labels)})")
    result["probability_of_improvement"] = [
        {"x": a, "y": b, **stats.improvement(normalized[a], normalized[b], reps, ci, seed, f"{a}>{b}").as_dict()}
        for a, b in pairs
    ]
    result["welch"] = [_welch_pair(raw, a, b, tasks, view, alpha) for a, b in pairs]

    shown_tables = {**(plugin_tables if show_references else {}), **user_tables}
    with_runs = {n: t for n, t in shown_tables.items() if n in result["references"] and t.runs and not t.by_checkpoint}
    placed, elsewhere = published_runs.same_protocol(with_runs, [r.record.protocol or {} for r in runs])
    if elsewhere:
        notes.append(
            f"published runs not placed (measured under another protocol than the runs'): {', '.join(elsewhere)}"
        )
    published = published_runs.gather(placed, tasks, agg_tasks, norm)  # runs released one by one (final scores)
    taus = stats.tau_grid(
        list(normalized.values())
        + [np.array([[r["normalized"].get(t, np.nan) for t in agg_tasks]]) for r in result["references"].values()]
        + [p.matrix for p in published.values() if p.matrix.size]
    )
    # Bellemare et al. 2013's normalizations plot their score distribution: a score "or better"
    # than each threshold counts (section 4.2.3); rliable's profiles count those above it
    at_or_above = normalization != "reference"
    result["performance_profile"] = {
        "tau": _list(taus),
        "counts": "at or above tau" if at_or_above else "above tau",
        "agents": {
            lab: {
                k: (None if v is None else _list(v))
                for k, v in stats.performance_profile(normalized[lab], taus, reps, ci, seed, lab, at_or_above).items()
            }
            for lab in labels
        },
        "references": {
            name: _list(
                stats.score_distribution(
                    np.array([[r["normalized"][t] for t in r["covered"]]]), taus, at_or_above=at_or_above
                )
            )
            for name, r in result["references"].items()
            if r["covered"]
        },
    }
    result["published_runs"] = published_runs.section(
        published,
        {lab: raw[lab][view] for lab in labels},
        normalized,
        tasks,
        agg_tasks,
        result["rows"],
        taus,
        metric_names,
        reps,
        ci,
        seed,
        at_or_above,
    )
    result["performance_profile"]["published_runs"] = {
        name: e["profile"] for name, e in result["published_runs"].items() if e["profile"]
    }
    result["curves"] = _curves(
        runs,
        rows,
        labels,
        tasks,
        agg_tasks,
        view,
        norm,
        scorer,
        at,
        curve_points,
        reps,
        ci,
        seed,
        {**(plugin_tables if show_references else {}), **user_tables},
        unit,
    )
    return result


def _final_scores(scorer, rows, labels, tasks) -> dict[str, dict[str, dict]]:
    """task -> label -> the suite's second per-task score (``Scorer.final_score``, e.g. Nichol et
    al.'s Final Score) over the label's seeds; empty when the suite has none."""
    out: dict[str, dict[str, dict]] = {}
    for task in tasks:
        for lab in labels:
            values = [r.final_score(scorer, task, s) for r, s in rows[lab]]
            if any(v is None for v in values):
                return {}
            values = [v for v in values if not math.isnan(v)]
            if values:
                out.setdefault(task, {})[lab] = {
                    "mean": float(np.mean(values)),
                    "std": float(np.std(values, ddof=1)) if len(values) > 1 else math.nan,
                    "n": len(values),
                }
    return out


def _videos(runs, tasks) -> dict[str, dict[str, str]]:
    """label -> task -> the first video (``benchgen video``) of that agent playing that task."""
    out: dict[str, dict[str, str]] = {}
    for run in runs:
        store = RunDir(run.path).store(readonly=True)
        try:
            episodes = list(store.episodes(phase="video"))
        finally:
            store.close()
        for ep in episodes:
            video = Path(run.path) / ep["extras"].get("video", "")
            if ep["task"] in tasks and video.is_file():
                out.setdefault(run.label, {}).setdefault(ep["task"], str(video))
    return out


#: ``--normalization`` choices (see ``CompareOptions.normalization``)
NORMALIZATIONS = ("reference", "random", "baseline-set", "inter-algorithm")


def _baseline_set(scorer, tables: dict, names: list[str]) -> RangeNormalizer:
    """Bellemare et al. 2013's baseline-set normalizer over the named tables (and ``random``)."""
    if len(names) < 2:
        raise UsageError("--baseline-set needs two tables at least (e.g. random,const_best), comma-separated")
    chosen = []
    for name in names:
        if name == "random":
            chosen.append(dict(scorer.random_scores))
        elif name in tables:
            chosen.append(dict(tables[name].scores))
        else:
            known = ["random", *tables]
            raise UsageError(
                f"--baseline-set: no table '{name}' (known: {', '.join(known)}); add one with --reference NAME=CSV"
            )
    return RangeNormalizer(score_ranges(chosen), f"baseline set ({', '.join(names)})")


def _reference_rows(plugin_tables, user_tables, tasks, agg_tasks, norm: Normalizer, amount, unit, metric_names):
    rows, published = {}, {}
    for name, table in {**plugin_tables, **user_tables}.items():
        scores, used = scores_at(table, amount, unit)
        agg = published_aggregate(table)
        if agg is not None:
            std = getattr(table, "aggregate_std", getattr(table, "std", None))
            published[name] = {"aggregate": agg, "std": std, "description": table.description}
        raw = {t: scores[t] for t in tasks if t in scores}
        if not raw:
            continue
        normed = norm.row(raw)
        covered = [t for t in agg_tasks if t in normed and not math.isnan(normed[t])]
        matrix = np.array([[normed[t] for t in covered]])
        rows[name] = {
            "description": table.description,
            "checkpoint": used,
            "by_checkpoint": list(table.by_checkpoint),
            "raw": raw,
            "normalized": {t: normed[t] for t in covered},
            "covered": covered,
            "aggregates": stats.aggregate_point(matrix, metric_names) if covered else {},
            "classes": _classes({t: normed[t] for t in covered}) if norm.classes and norm.active else None,
        }
        rows[name]["at_or_above_baseline"] = rows[name]["classes"]["superhuman"] if rows[name]["classes"] else None
    return rows, published


def _per_task(raw, normalized, tasks, agg_tasks, views, labels, ref_rows, ci, classes: bool = True):
    """Per-task tables: each view's raw means, and the normalized scores, labelled with SABER's
    class only where ``classes`` (scores normalized by a reference; not a range's)."""
    out: dict[str, Any] = {"views": {}, "normalized": {}}
    for v in views:
        table = {}
        for j, t in enumerate(tasks):
            cells = {}
            for lab in labels:
                col = raw[lab][v][:, j]
                mean, lo, hi = stats.mean_interval(col, ci)
                if np.isposinf(col).any():
                    mean = math.inf
                cells[lab] = {
                    "mean": mean,
                    "ci_low": lo,
                    "ci_high": hi,
                    "n": int((~np.isnan(col)).sum()),
                    "std": float(np.std(col, ddof=1)) if col.size > 1 and np.isfinite(col).all() else math.nan,
                }
            if v == "score":
                for name, r in ref_rows.items():
                    if t in r["raw"]:
                        cells[f"{name} (ref)"] = {
                            "mean": r["raw"][t],
                            "ci_low": math.nan,
                            "ci_high": math.nan,
                            "n": 1,
                            "std": math.nan,
                        }
            table[t] = cells
        out["views"][v] = table
    for j, t in enumerate(agg_tasks):
        cells = {
            lab: _mean(normalized[lab][:, j]) if not np.isposinf(normalized[lab][:, j]).any() else math.inf
            for lab in labels
        }
        for name, r in ref_rows.items():
            if t in r["normalized"]:
                cells[f"{name} (ref)"] = r["normalized"][t]
        out["normalized"][t] = {
            k: {"value": v, "class": score_class(v) if classes and not math.isnan(v) else None}
            for k, v in cells.items()
        }
    return out


def _welch_pair(raw, a, b, tasks, view, alpha):
    per_task = {t: stats.welch(raw[a][view][:, j], raw[b][view][:, j], alpha) for j, t in enumerate(tasks)}
    counts = {
        name: sum(1 for r in per_task.values() if r["result"] == k)
        for k, name in (("win", "wins"), ("loss", "losses"), ("tie", "ties"), ("n/a", "not_tested"))
    }
    return {
        "x": a,
        "y": b,
        "alpha": alpha,
        "tasks": per_task,
        **counts,
        "method": f"Welch's t-test per task (unequal variances, two-sided, alpha {alpha}) on raw per-seed scores; "
        "win/loss counted as in Bellemare et al. 2013; not corrected for multiple comparisons",
    }


def _curves(runs, rows, labels, tasks, agg_tasks, view, norm, scorer, at, points, reps, ci, seed, tables, unit):
    meta = runs[0].record
    top = min(r.record.to_frames(at if at is not None else r.budget) for r in runs)
    grid = sorted({max(1, round(top * (i + 1) / points)) for i in range(points)})
    idx = [tasks.index(t) for t in agg_tasks]
    out: dict[str, Any] = {
        "frames": [float(g) for g in grid],
        "view": view,
        "aggregate": {},
        "tasks": {},
        "references": {},
    }
    for lab in labels:
        cube = np.array([[[r.score(scorer, t, s, view, g) for g in grid] for t in tasks] for r, s in rows[lab]])
        agg = stats.iqm_curve(norm.matrix(cube[:, idx, :], agg_tasks), reps, ci, seed, lab)
        out["aggregate"][lab] = {k: _list(v) for k, v in agg.items()}
        per = {}
        for j, t in enumerate(tasks):
            m = [
                stats.mean_interval(np.where(np.isinf(cube[:, j, k]), np.nan, cube[:, j, k]), ci)
                for k in range(len(grid))
            ]
            per[t] = {"mean": [x[0] for x in m], "ci_low": [x[1] for x in m], "ci_high": [x[2] for x in m]}
        out["tasks"][lab] = per
    for name, table in tables.items():
        marks = []
        for label, scores in table.by_checkpoint.items():
            parsed = parse_checkpoint_label(str(label))
            if not parsed or parsed[0] not in (None, unit):
                continue
            frames = meta.to_frames(parsed[1])
            if frames > top:
                continue
            normed = norm.row({t: scores[t] for t in agg_tasks if t in scores})
            vals = [normed[t] for t in agg_tasks if t in normed and not math.isnan(normed[t])]
            iqm = float(stats.aggregate_point(np.array([vals]), ("iqm",))["iqm"]) if vals else math.nan
            marks.append(
                {
                    "label": str(label),
                    "frames": float(frames),
                    "iqm": iqm,
                    "tasks": {t: scores[t] for t in tasks if t in scores},
                }
            )
        if marks:
            out["references"][name] = marks
    return out
