"""The Procgen evaluation measurements the planner counts (issue 44): per game and agent, the mean
length of a test-level episode and the frames per second of a test round, from the committed runs'
episodes (``benchmarks/results/procgen/<agent>-<game>-seed<n>.csv``, phase ``train_eval``).

How a round's speed is measured: a round plays its 100 episodes on the run's sub-environments in
lockstep (one vector step moves every sub-environment one frame; a finished one starts its next
episode at once), so an episode ends at the vector step equal to the summed lengths of its
sub-environment's episodes in the round so far. ``wall_time`` is when an episode was recorded, at
its end; a least-squares line through (vector step, wall time) over the round's episodes gives
the seconds a vector step takes, and the round lasts its last vector step times that. The row's
frames per second is the frames of every round's episodes over the rounds' summed durations (what
the planner divides a round's episodes x mean length by). The Atari 100K table
(``atari100k_evaluation_speeds.py``) times one evaluation at a run's end with one environment; a
Procgen run plays a round every 250K steps with its training between, so the rounds are timed one
by one.

Written to ``plugins/procgen/data/evaluation_speeds.csv`` (read by ``Suite.measured_evaluation``);
``--check`` fails when the committed file differs from what the CSVs give (a run was added).

Usage: python benchmarks/procgen_evaluation_speeds.py [--check]
"""

from __future__ import annotations

import csv
import re
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the shared part beside this script

import evaluation_speeds_table  # noqa: E402

RESULTS = HERE / "results" / "procgen"
OUT = HERE.parent / "plugins" / "procgen" / "data" / "evaluation_speeds.csv"
EVAL_PHASE = "train_eval"
NAME = re.compile(r"(?P<agent>[a-z_]+)-(?P<game>[a-z]+)-seed(?P<seed>\d+)\.csv")


def round_seconds(episodes: list[dict[str, str]]) -> float:
    """The wall time of one round (its episodes, as exported), from the fitted seconds per vector
    step and the round's last vector step; 0 when the round cannot be timed (fewer than two ends)."""
    steps: dict[str, int] = defaultdict(int)
    ends = []
    for row in sorted(episodes, key=lambda r: (int(r["env_index"]), int(r["episode"]))):
        steps[row["env_index"]] += int(row["length_frames"])
        ends.append((steps[row["env_index"]], float(row["wall_time"])))
    at, wall = np.array(ends, dtype=float).T
    if len(set(at)) < 2:
        return 0.0
    per_step = np.polyfit(at - at.mean(), wall - wall.mean(), 1)[0]
    return float(max(per_step, 0.0) * at.max())


def measure(results: Path) -> list[dict]:
    """One row per (agent, game) with timed test rounds in ``results``."""
    lengths: dict[tuple, list[int]] = defaultdict(list)
    seconds: dict[tuple, float] = defaultdict(float)
    seeds: dict[tuple, list[str]] = defaultdict(list)
    rounds: dict[tuple, int] = defaultdict(int)
    for path in sorted(results.glob("*-seed*.csv")):
        name = NAME.fullmatch(path.name)
        if not name:
            continue
        by_round: dict[str, list[dict[str, str]]] = defaultdict(list)
        with path.open(newline="") as handle:
            for row in csv.DictReader(handle):
                if row["phase"] == EVAL_PHASE:
                    by_round[row["frames_total"]].append(row)
        key = (name["agent"], name["game"])
        for episodes in by_round.values():
            duration = round_seconds(episodes)
            if duration > 0:
                lengths[key] += [int(r["length_frames"]) for r in episodes]
                seconds[key] += duration
                rounds[key] += 1
        if rounds[key]:
            seeds[key].append(name["seed"])
    out = []
    for key in sorted(lengths):
        agent, game = key
        n = len(lengths[key])
        out.append(
            {
                "agent": agent,
                "variant": "",
                "task": game,
                "episode_frames": round(sum(lengths[key]) / n),
                "frames_per_second": round(sum(lengths[key]) / seconds[key]),
                "measured": f"{n} test-level episodes in {rounds[key]} round{'s' * (rounds[key] > 1)} of "
                f"seed{'s' * (len(seeds[key]) > 1)} {','.join(seeds[key])}",
            }
        )
    return out


#: how the table was measured, above its rows
HEADER = (
    "# Test rounds of the committed Procgen runs (benchmarks/results/procgen/*.csv, phase train_eval), measured by\n"
    "# benchmarks/procgen_evaluation_speeds.py (regenerate it as runs are added; --check tells when this file is\n"
    "# stale): episode_frames is the mean length of a test-level episode; frames_per_second the frames of the rounds'\n"
    "# episodes over the rounds' wall time (each round timed from its episodes' ends, the sub-environments stepping\n"
    "# in lockstep); easy200 protocol, 64 sub-environments, 2 CPU cores, no GPU, beside the other lane.\n"
)


def main(argv: list[str] | None = None) -> int:
    return evaluation_speeds_table.main(
        argv, __doc__.splitlines()[0], measure, HEADER, RESULTS, OUT, "procgen_evaluation_speeds.py"
    )


if __name__ == "__main__":
    sys.exit(main())
