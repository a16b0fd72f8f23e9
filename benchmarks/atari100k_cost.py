"""The Atari 100K campaign's cost (issue 45, item 6): each run's wall time against the planner's estimate.

A run's wall time comes from its exported episodes (``wall_time``, seconds since the epoch, of each
episode's end); the estimate from ``benchgen run ... --plan`` for the same agent and game, planned
for the processor the run ran on (``BENCHGEN_PLAN_PROCESSOR``: the planner's measured speeds are
per processor), as ``machines.csv`` beside the episodes names it (``record_run_machine.py``). A run
whose processor is not known is shown without an estimate. The summary: the runs with a known
processor, started since the planner's speeds were measured, their pauses left out (a stretch
between two episode ends far longer than its frames at the run's own speed: a restart, or the
lanes stopped while CI ran); their median ratio and the sum of their wall times against the sum
of their estimates (the campaign's total as the planner would have put it). ``atari100k_aggregates.py`` puts these lines on the results page.
"""

from __future__ import annotations

import datetime
import functools
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

from benchgen.run.planning.cost import PLAN_PROCESSOR_VARIABLE

sys.path.insert(0, str(Path(__file__).resolve().parent))  # machines.csv's owner beside this script

from record_run_machine import read_machines  # noqa: E402

EVAL_PHASE = "train_eval"
#: a stretch between two episode ends that outlasts its episode's frames at the run's own median
#: speed (of that phase) by more than this is a pause: a restart, or the lanes stopped while CI or
#: a benchmark ran (SIGSTOP, which no record shows); the excess is counted, not the stretch
PAUSE_S = 5 * 60
#: the runs made since the speeds the planner's table holds were measured (plugins/atari_saber/data/speeds.csv,
#: 2026-11-26: the faster updates; README "What the whole table costs"): the earlier runs trained
#: with slower updates, most of them beside heavy other work, and are shown but not summarized
SINCE = "2026-11-26T19:00"


def wall_times(rows: list[dict]) -> dict[str, float]:
    """One run's wall-clock minutes from its episodes' ``wall_time`` (each episode's end) and
    ``length_frames``: ``train`` (first to last training episode's end), ``whole`` (first training
    episode's end to the last evaluation episode's), ``pauses`` and ``train_pauses`` (the time
    beyond what each stretch between two episode ends should have taken at the run's median
    frames per second in that phase, where that excess passes ``PAUSE_S``; a stretch's frames are
    the episode it ended, one sub-environment as the Atari 100K protocol has it)."""
    timed = sorted((float(r["wall_time"]), r) for r in rows if r.get("wall_time"))
    stretches = [(r["phase"], b - a, float(r.get("length_frames") or 0)) for (a, _), (b, r) in zip(timed, timed[1:])]
    speeds: dict[str, float] = {}
    for phase in {p for p, _, _ in stretches}:
        rates = [f / dt for p, dt, f in stretches if p == phase and dt > 0 and f > 0]
        speeds[phase] = float(np.median(rates)) if rates else float("inf")
    excess = [(p, dt - f / speeds[p]) for p, dt, f in stretches]
    pauses = [(p, e) for p, e in excess if e > PAUSE_S]
    times = [t for t, _ in timed]
    train = [t for t, r in timed if r["phase"] == "train"]
    return {
        "train": (train[-1] - train[0]) / 60 if len(train) > 1 else float("nan"),
        "whole": (times[-1] - times[0]) / 60 if len(times) > 1 else float("nan"),
        "pauses": sum(e for _, e in pauses) / 60,
        "train_pauses": sum(e for p, e in pauses if p == "train") / 60,
    }


@functools.cache
def planned_minutes(variant: str, game: str, processor: str) -> tuple[float, float, str]:
    """The planner's estimate for one game of ``variant`` (``benchgen run ... --plan``) on
    ``processor``: training minutes per unit, the whole unit's (training and the evaluation it
    counts where the suite measured the game's evaluation episodes; nan where it says evaluation
    is not estimated), and its line."""
    agent = "rainbow" if variant == "der" else "dqn"
    out = subprocess.run(
        [sys.executable, "-m", "benchgen", "run", "atari_saber", agent, "--protocol", "atari100k", "--tasks", game]
        + ["--set", f"variant={variant}", "--plan"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, PLAN_PROCESSOR_VARIABLE: processor},
    ).stdout
    line = next(line.strip() for line in out.splitlines() if "wall time (estimated)" in line)
    train = re.search(r"train ([\d.]+ (?:s|min|h)) per unit", line)
    total = re.search(r"; ([\d.]+ (?:s|min|h)) in total", line)
    whole = float("nan") if "not estimated" in line else _minutes(total.group(1))
    return _minutes(train.group(1)), whole, line


def _minutes(duration: str) -> float:
    """Minutes of one of the plan's durations (``40 s``, ``12 min``, ``3.5 h``)."""
    value, unit = duration.split()
    return float(value) * {"s": 1 / 60, "min": 1, "h": 60}[unit]


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    return (
        ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + ["| " + " | ".join(r) + " |" for r in rows] + [""]
    )


def cost_lines(
    episodes: dict, results: Path, labels: dict[str, str], since: str = SINCE
) -> tuple[list[str], dict[str, dict]]:
    """The page's cost section: for each variant of ``episodes`` (variant -> game -> seed -> its
    episode rows), every finished run's wall time beside the planner's estimate for its processor
    (``machines.csv`` in ``results``), and the summary over the runs with a known processor
    started at or after ``since`` (UTC), pauses left out; and that summary as numbers, per variant.
    ``labels``: variant -> its name on the page."""
    cutoff = datetime.datetime.fromisoformat(since).replace(tzinfo=datetime.timezone.utc).timestamp()
    machines = read_machines(results)
    lines = [
        "## Cost: measured wall time per run against the planner's estimate",
        "",
        "Each run against the plan for the processor it ran on (`benchmarks/results/atari100k/machines.csv`: "
        "recorded in its run.json, or inferred from its start date where the record predates that; "
        "no estimate where it is not known; `BENCHGEN_PLAN_PROCESSOR` plans for a given processor).",
        "",
    ]
    summary: dict[str, dict] = {}
    for variant, games in episodes.items():
        rows, counted, processors = [], [], []
        for g, seeds in sorted(games.items()):
            for s, eps in sorted(seeds.items()):
                if not any(r["phase"] == EVAL_PHASE for r in eps):
                    continue
                w = wall_times(eps)
                start = float(eps[0]["wall_time"])
                when = datetime.datetime.fromtimestamp(start, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")
                processor = machines.get(f"{variant}-{g}-seed{s}", {}).get("processor", "")
                row = [f"{g} seed {s}", when, processor or "not recorded", f"{w['train']:.1f}", f"{w['whole']:.1f}"]
                row.append(f"{w['pauses']:.0f}")
                if not processor or " then " in processor:
                    rows.append(row + ["", "", ""])
                    continue
                processors.append(processor)
                game_train, game_whole, _ = planned_minutes(variant, g, processor)
                w |= {"active": w["whole"] - w["pauses"], "planned_whole": game_whole}
                if start >= cutoff and np.isfinite(game_whole):
                    counted.append(w)
                train_ratio = (w["train"] - w["train_pauses"]) / game_train
                rows.append(row + [f"{train_ratio:.2f}", f"{game_whole:.0f}", f"{w['active'] / game_whole:.2f}"])
        for processor in dict.fromkeys(processors):
            lines += [
                f"{labels[variant]}: the planner says, for alien on {processor}, "
                f"`{planned_minutes(variant, 'alien', processor)[2]}`.",
                "",
            ]
        head = ["run", "started (UTC)", "processor", "training (min)", "whole run (min)", "pauses (min)"]
        lines += _table(
            head + ["training less pauses / planned", "planned whole (min)", "whole less pauses / planned"], rows
        )
        if counted:
            active = sum(w["active"] for w in counted)
            planned = sum(w["planned_whole"] for w in counted)
            ratio = float(np.median([w["active"] / w["planned_whole"] for w in counted]))
            summary[variant] = {"n": len(counted), "active": active, "planned": planned, "ratio_median": ratio}
            lines += [
                f"Over the {len(counted)} run{'s' if len(counted) > 1 else ''} with a known processor started since "
                f"{since} UTC (the planner's speeds), pauses left out (a stretch between two episode ends more than "
                f"{PAUSE_S // 60} minutes longer than its frames at the run's own median speed): {active:.0f} minutes "
                f"in all against the planned {planned:.0f} ({active / planned:.2f}); median per run {ratio:.2f} (the "
                "plan counts the game's evaluation episodes from plugins/atari_saber/data/evaluation_speeds.csv, "
                "measured from these runs by benchmarks/atari100k_evaluation_speeds.py).",
                "",
            ]
    return lines, summary
