"""The Atari 100K campaign's cost (issue 45, item 6): each run's wall time against the planner's estimate.

A run's wall time comes from its exported episodes (``wall_time``, seconds since the epoch, of each
episode's end); the estimate from ``benchgen run ... --plan`` for the same agent and game, planned
for the processor the run ran on (``BENCHGEN_PLAN_PROCESSOR``: the planner's measured speeds are
per processor), as ``machines.csv`` beside the episodes names it (``record_run_machine.py``). A run
whose processor is not known is shown without an estimate. The summary: the runs with a known
processor, started since the planner's speeds were measured, without a pause; their median ratio
and the sum of their wall times against the sum of their estimates (the campaign's total as the
planner would have put it). ``atari100k_aggregates.py`` puts these lines on the results page.
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
#: wall-clock gaps between two consecutive episodes longer than this are counted as interruptions
#: (the longest Atari 100K training episode, 108,000 frames, takes about 7 minutes at DER's speed
#: and 15 at DrQ(epsilon)'s)
GAP_S = 20 * 60
#: the runs made since the speeds the planner's table holds were measured (plugins/atari_saber/data/speeds.csv,
#: 2026-11-26: the faster updates; README "What the whole table costs"): the earlier runs trained
#: with slower updates, most of them beside heavy other work, and are shown but not summarized
SINCE = "2026-11-26T19:00"


def wall_times(rows: list[dict]) -> dict[str, float]:
    """One run's wall-clock minutes from its episodes' ``wall_time``: ``train`` (first to last
    training episode's end), ``whole`` (first training episode's end to the last evaluation
    episode's), ``gaps`` (the sum of pauses longer than ``GAP_S`` between two episodes: a
    restart, or work beside it)."""
    times = [float(r["wall_time"]) for r in rows if r.get("wall_time")]
    train = [float(r["wall_time"]) for r in rows if r["phase"] == "train" and r.get("wall_time")]
    gaps = [b - a for a, b in zip(times, times[1:]) if b - a > GAP_S]
    return {
        "train": (train[-1] - train[0]) / 60 if len(train) > 1 else float("nan"),
        "whole": (times[-1] - times[0]) / 60 if len(times) > 1 else float("nan"),
        "gaps": sum(gaps) / 60,
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
    started at or after ``since`` (UTC) without a pause; and that summary as numbers, per variant.
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
        rows, clean, processors = [], [], []
        for g, seeds in sorted(games.items()):
            for s, eps in sorted(seeds.items()):
                if not any(r["phase"] == EVAL_PHASE for r in eps):
                    continue
                w = wall_times(eps)
                start = float(eps[0]["wall_time"])
                when = datetime.datetime.fromtimestamp(start, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")
                processor = machines.get(f"{variant}-{g}-seed{s}", {}).get("processor", "")
                row = [f"{g} seed {s}", when, processor or "not recorded", f"{w['train']:.1f}", f"{w['whole']:.1f}"]
                row.append(f"{w['gaps']:.0f}")
                if not processor or " then " in processor:
                    rows.append(row + ["", "", ""])
                    continue
                processors.append(processor)
                game_train, game_whole, _ = planned_minutes(variant, g, processor)
                w |= {"planned_train": game_train, "planned_whole": game_whole}
                if w["gaps"] == 0 and start >= cutoff and np.isfinite(game_whole):
                    clean.append(w)
                rows.append(
                    row + [f"{w['train'] / game_train:.2f}", f"{game_whole:.0f}", f"{w['whole'] / game_whole:.2f}"]
                )
        for processor in dict.fromkeys(processors):
            lines += [
                f"{labels[variant]}: the planner says, for alien on {processor}, `{planned_minutes(variant, 'alien', processor)[2]}`.",
                "",
            ]
        head = [
            "run",
            "started (UTC)",
            "processor",
            "training (min)",
            "whole run (min)",
            f"pauses > {GAP_S // 60} min (min)",
        ]
        lines += _table(head + ["training / planned", "planned whole (min)", "whole / planned"], rows)
        if clean:
            whole = sum(w["whole"] for w in clean)
            planned = sum(w["planned_whole"] for w in clean)
            ratio = float(np.median([w["whole"] / w["planned_whole"] for w in clean]))
            summary[variant] = {"n": len(clean), "whole": whole, "planned": planned, "whole_ratio_median": ratio}
            lines += [
                f"Over the {len(clean)} run{'s' if len(clean) > 1 else ''} with a known processor started since {since} "
                f"UTC (the planner's speeds) without a pause: {whole:.0f} minutes in all against the planned "
                f"{planned:.0f} ({whole / planned:.2f}); median whole / planned {ratio:.2f} (the plan counts the "
                "game's evaluation episodes from plugins/atari_saber/data/evaluation_speeds.csv, measured from these "
                "runs by benchmarks/atari100k_evaluation_speeds.py).",
                "",
            ]
    return lines, summary
