"""The generalization gap in a run's report, for suites whose evaluation phases play held-out
instances of each task (``Suite.held_out_evaluation``; a suite of procedurally generated levels tests
on levels it never trained on).

For every phase that has an evaluation phase (``train`` and ``train_eval``), per task: the score on
what the unit trained on, the score on what it never trained on, and their difference, the
generalization gap (the measure of generalization benchmarks: train and test returns side by side);
both raw, and normalized where the report normalized them. A module of its own beside
``report.py``, which calls it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from benchgen.phases import evaluation_phase


def gaps(phases: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Phase -> ``{"held_out": its evaluation phase, "tasks": {task: {train, test, gap, train_normalized,
    test_normalized}}, "mean": {...}}`` for each phase of ``phases`` (a report's) that has an
    evaluation phase with final scores."""
    out = {}
    for phase, section in phases.items():
        held_out = phases.get(evaluation_phase(phase))
        if held_out is None or not section.get("final") or not held_out.get("final"):
            continue
        train, test = section["final"].get("score", {}), held_out["final"].get("score", {})
        train_norm = (
            section.get("normalized", {}).get("per_task", {}) if section.get("normalized", {}).get("classes") else {}
        )
        test_norm = (
            held_out.get("normalized", {}).get("per_task", {}) if held_out.get("normalized", {}).get("classes") else {}
        )
        tasks = {}
        for task in sorted(set(train) & set(test)):
            tasks[task] = {
                "train": train[task],
                "test": test[task],
                "gap": train[task] - test[task],
                "train_normalized": train_norm.get(task, math.nan),
                "test_normalized": test_norm.get(task, math.nan),
            }
        if tasks:
            keys = ("train", "test", "gap", "train_normalized", "test_normalized")
            mean = {
                k: float(np.nanmean([row[k] for row in tasks.values()])) if _any(tasks, k) else math.nan for k in keys
            }
            out[phase] = {"held_out": evaluation_phase(phase), "tasks": tasks, "mean": mean}
    return out


def _any(tasks: dict[str, dict[str, float]], key: str) -> bool:
    return any(not math.isnan(row[key]) for row in tasks.values())


def markdown(report: dict[str, Any], fmt) -> list[str]:
    """The report's generalization section (empty when it has none); ``fmt`` formats a number."""
    out: list[str] = []
    for phase, entry in (report.get("generalization") or {}).items():
        out += ["", f"## Generalization: {phase} against {entry['held_out']} (held-out instances)", ""]
        out.append(
            f"Per task: the {phase} score (what the units trained on), the {entry['held_out']} score (held-out "
            "instances of each task, never trained on) and the gap between them, raw and normalized."
        )
        out += [
            "",
            "| task | train | held out | gap | train (normalized) | held out (normalized) |",
            "|---|---|---|---|---|---|",
        ]
        for task, row in [*entry["tasks"].items(), ("(mean over tasks)", entry["mean"])]:
            cells = [fmt(row["train"]), fmt(row["test"]), fmt(row["gap"])]
            cells += [
                "-" if math.isnan(row[k]) else f"{row[k] * 100:.1f}%" for k in ("train_normalized", "test_normalized")
            ]
            out.append(f"| {task} | " + " | ".join(cells) + " |")
    return out
