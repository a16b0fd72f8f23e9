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
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from benchgen.registry import get_registry
from benchgen.results.rundir import RunDir
from benchgen.scoring import CLASSES
from benchgen.results.store import ResultsStore

VIEW_LABELS = {"score": "final", "score_5min": "5 min", "score_30min": "30 min"}


def _views(meta: dict) -> list[str]:
    return [f for f in meta.get("episode_fields", []) if f.startswith("score_")] + ["score"]


def _to_frames(meta: dict, amount: int) -> int:
    return amount if meta["budget_unit"] == "frames" else amount * meta["frames_per_step"]


def collect(run_dir: Path) -> dict[tuple[str, str, int], list[dict]]:
    """Episodes grouped by (phase, task, seed), in recording order."""
    store = ResultsStore(run_dir, readonly=True)
    groups: dict[tuple[str, str, int], list[dict]] = defaultdict(list)
    try:
        for ep in store.episodes():
            groups[(ep["phase"], ep["task"], ep["seed"])].append(ep)
    finally:
        store.close()
    return groups


def _short_zeroshot(run_dir: Path, groups, wanted: int) -> dict[str, int]:
    """Finished zero-shot units whose task got fewer than ``wanted`` episodes (none at all
    included): "task sSEED" -> episodes."""
    store = ResultsStore(run_dir, readonly=True)
    try:
        units = [u for u in store.units() if u.phase == "zeroshot" and u.status == "done"]
    finally:
        store.close()
    counts = {f"{u.tasks[0]} s{u.seed}": len(groups.get(("zeroshot", u.tasks[0], u.seed), [])) for u in units}
    return {name: n for name, n in sorted(counts.items()) if n < wanted}


def _value(ep: dict, view: str) -> float:
    return ep["score"] if view == "score" else ep["extras"].get(view, ep["score"])


def task_scores(groups, scorer, phase: str, views: list[str], upto_frames: int | None = None) -> dict[str, dict[str, float]]:
    """view -> task -> score (mean over seeds of the scorer's per-task rule)."""
    out: dict[str, dict[str, float]] = {v: {} for v in views}
    per: dict[tuple[str, str], list[float]] = defaultdict(list)
    for (ph, task, _seed), eps in groups.items():
        if ph != phase:
            continue
        chosen = [e for e in eps if upto_frames is None or e["frames_total"] <= upto_frames]
        if not chosen:
            continue
        for view in views:
            per[(view, task)].append(scorer.task_score([_value(e, view) for e in chosen]))
    for (view, task), values in per.items():
        out[view][task] = math.inf if any(math.isinf(v) for v in values) else float(np.mean(values))
    return out


def build_report(run_dir: Path, baseline: str | None = None) -> dict[str, Any]:
    run_dir = Path(run_dir)
    meta = RunDir(run_dir).meta()
    registry = get_registry()
    suite = registry.suite(meta["suite"])
    scorer = registry.scorer(suite)
    groups = collect(run_dir)
    views = _views(meta)
    wanted = meta["run"]["zeroshot_episodes"]
    short = _short_zeroshot(run_dir, groups, wanted)
    phases = {p for p, _, _ in groups} | ({"zeroshot"} if short else set())
    phases = sorted(phases, key=["train", "joint", "zeroshot", "finetune"].index)
    default_budget = suite.default_budget
    report: dict[str, Any] = {
        "run_dir": str(run_dir),
        "suite": meta["suite"],
        "agent": meta["agent"],
        "budget": meta["budget"],
        "budget_unit": meta["budget_unit"],
        "protocol_length": meta["budget"] >= default_budget,
        "protocol_budget": default_budget,
        "task_score_rule": meta.get("task_score_rule"),
        "seeds": meta["run"]["seeds"],
        "phases": {},
    }
    for phase in phases:
        section: dict[str, Any] = {"episodes": sum(len(e) for (p, _, _), e in groups.items() if p == phase)}
        if phase in ("train", "joint"):
            section["checkpoints"] = {
                str(c): task_scores(groups, scorer, phase, views, _to_frames(meta, c)) for c in meta["checkpoints"]
            }
        final = task_scores(groups, scorer, phase, views)
        section["final"] = final
        try:
            section["normalized"] = scorer.score(final["score"], baseline)
        except Exception as exc:  # noqa: BLE001 - a suite without references is reported raw
            section["normalized"] = {"error": str(exc)}
        section["raw_mean"] = float(np.mean([v for v in final["score"].values() if not math.isinf(v)] or [math.nan]))
        if phase == "zeroshot":
            section["short"], section["episodes_wanted"] = short, wanted
        report["phases"][phase] = section
    report["references"] = {
        name: {"description": ref.description, "aggregate": getattr(ref, "aggregate", None)}
        for name, ref in registry.reference_scores(suite).items()
    }
    return report


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
    out.append(f"Budget {report['budget']:,} {unit} per unit, seeds {report['seeds']}. "
               f"Per-task score: {report['task_score_rule']}.")
    if not report["protocol_length"]:
        out.append(f"\n**Not protocol-length**: the protocol's budget is {report['protocol_budget']:,} {unit}; "
                   "do not compare these numbers with published ones.")
    for phase, sec in report["phases"].items():
        out += ["", f"## Phase: {phase} ({sec['episodes']} episodes)", ""]
        if sec.get("short"):
            out.append(f"**Fewer than {sec['episodes_wanted']} episodes** within the zero-shot frame cap: "
                       + ", ".join(f"{name} ({n})" for name, n in sec["short"].items())
                       + "; raise it with `--set run.zeroshot_frames=N`.")
            out.append("")
        for ckpt, views in sec.get("checkpoints", {}).items():
            out += [f"### At {int(ckpt):,} {unit}", ""]
            names = list(views)
            out.append("| task | " + " | ".join(VIEW_LABELS.get(v, v) for v in names) + " |")
            out.append("|---|" + "---|" * len(names))
            for task in sorted(views["score"]):
                out.append(f"| {task} | " + " | ".join(_fmt(views[v].get(task, math.nan)) for v in names) + " |")
            out.append("")
        norm = sec["normalized"]
        if "error" in norm:
            out.append(f"Normalization unavailable: {norm['error']}")
            continue
        if not norm.get("classes"):  # a suite scored on its own scale (e.g. Sonic's 0..10,000)
            out += ["### Final scores", "", "| task | score |", "|---|---|"]
            out += [f"| {task} | {_fmt(v)} |" for task, v in sorted(norm["raw"].items())]
            out.append(f"\nMean over {norm['n_tasks']} tasks: **{_fmt(norm['mean'])}**")
            if norm.get("baseline_mean") is not None:
                out.append(f"(baseline {norm['baseline']}: {_fmt(norm['baseline_mean'])})")
            continue
        out += ["### Final scores", "", "| task | raw | normalized | class |", "|---|---|---|---|"]
        for task, raw in sorted(norm["raw"].items()):
            n = norm["per_task"].get(task)
            out.append(f"| {task} | {_fmt(raw)} | {'-' if n is None else f'{n * 100:.2f}%'} | "
                       f"{norm['per_task_class'].get(task, 'raw only')} |")
        if norm["n_tasks"]:
            out += ["", f"Baseline **{norm['baseline']}**: median {norm['median'] * 100:.2f}%, "
                        f"capped mean {norm['mean'] * 100:.2f}% over {norm['n_tasks']} tasks; classes "
                        + ", ".join(f"{k} {v}" for k, v in norm["classes"].items())]
        if norm["unnormalized"]:
            out.append(f"\nReported raw, left out of the aggregates: {', '.join(sorted(norm['unnormalized']))}")
        out.append(f"\nMean raw score over tasks: {_fmt(sec['raw_mean'])}")
    if report["references"]:
        out += ["", "## Published references", ""]
        for name, ref in report["references"].items():
            agg = f" (aggregate {ref['aggregate']})" if ref.get("aggregate") is not None else ""
            out.append(f"- {name}: {ref['description']}{agg}")
    return "\n".join(out) + "\n"


def plot(run_dir: Path, report: dict) -> list[Path]:
    """Learning curves (raw score vs frames, per task) and the class histogram, as PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    groups = collect(run_dir)
    fig, ax = plt.subplots(figsize=(8, 5))
    for (phase, task, seed), eps in sorted(groups.items()):
        if phase == "zeroshot":
            continue
        x = np.array([e["frames_total"] for e in eps], dtype=float)
        y = np.array([e["score"] for e in eps], dtype=float)
        y[np.isinf(y)] = np.nan
        window = min(100, max(1, len(y) // 5))
        smooth = np.convolve(np.nan_to_num(y), np.ones(window) / window, mode="valid") if len(y) >= window else y
        ax.plot(x[len(x) - len(smooth):], smooth, label=f"{phase}:{task}:s{seed}")
    ax.set_xlabel("frames")
    ax.set_ylabel("raw episode score (moving mean)")
    ax.set_title(f"{report['agent']} on {report['suite']}")
    if 0 < len(groups) <= 12 and ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7)
    path = Path(run_dir) / "report" / "learning_curves.png"
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    paths.append(path)
    for phase, sec in report["phases"].items():
        norm = sec["normalized"]
        if not norm.get("classes") or not norm["n_tasks"]:
            continue
        fig, ax = plt.subplots(figsize=(6, 4))
        names = [n for n, _ in CLASSES]
        ax.bar(names, [norm["classes"][n] for n in names], color="tab:blue")
        ax.set_ylabel("tasks")
        ax.set_title(f"{phase}: score classes vs {norm['baseline']}")
        path = Path(run_dir) / "report" / f"classes_{phase}.png"
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        plt.close(fig)
        paths.append(path)
    return paths


def write_report(run_dir: Path, baseline: str | None = None) -> str:
    """Write report/report.md, report.json and PNG plots; return a short text summary."""
    run_dir = Path(run_dir)
    report = build_report(run_dir, baseline)
    out = run_dir / "report"
    out.mkdir(exist_ok=True)
    (out / "report.json").write_text(json.dumps(report, indent=2, default=str))
    (out / "report.md").write_text(to_markdown(report))
    plot(run_dir, report)
    lines = [f"report: {out / 'report.md'}"]
    for phase, sec in report["phases"].items():
        norm = sec["normalized"]
        if norm.get("n_tasks") and not norm.get("classes"):
            lines.append(f"{phase}: {sec['episodes']} episodes; mean score over {norm['n_tasks']} tasks "
                         f"{_fmt(norm['mean'])}")
        elif norm.get("n_tasks"):
            lines.append(f"{phase}: {sec['episodes']} episodes; median {norm['median'] * 100:.2f}%, capped mean "
                         f"{norm['mean'] * 100:.2f}% ({norm['baseline']}); mean raw {_fmt(sec['raw_mean'])}")
        else:
            lines.append(f"{phase}: {sec['episodes']} episodes; mean raw {_fmt(sec['raw_mean'])}")
    if not report["protocol_length"]:
        lines.append("(not protocol-length: scaled-down budget)")
    return "\n".join(lines)
