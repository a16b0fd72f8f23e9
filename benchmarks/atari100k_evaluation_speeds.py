"""The Atari 100K evaluation measurements the planner counts (issue 45): per game and agent, the
mean length of an evaluation episode and the emulator frames per second while evaluating, from
the committed runs' episodes (``benchmarks/results/atari100k/<variant>-<game>-seed<n>.csv``).

A row's speed is the frames of a run's evaluation episodes after its first, over the wall time
between the first's end and the last's (``wall_time`` is when an episode was recorded, at its
end), pooled over the game's runs; its length is the mean over every evaluation episode. Written
to ``plugins/atari_saber/data/evaluation_speeds.csv`` (read by ``Suite.measured_evaluation``);
``--check`` fails when the committed file differs from what the CSVs give (a run was added).

Usage: python benchmarks/atari100k_evaluation_speeds.py [--check]
"""

from __future__ import annotations

import csv
import re
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the shared part beside this script

import evaluation_speeds_table  # noqa: E402

RESULTS = HERE / "results" / "atari100k"
OUT = HERE.parent / "plugins" / "atari_saber" / "data" / "evaluation_speeds.csv"
EVAL_PHASE = "train_eval"
#: the runs' file prefix -> (agent, variant) as benchgen names them
AGENTS = {"der": ("rainbow", "der"), "drq_eps": ("dqn", "drq_eps"), "random": ("random", "")}
NAME = re.compile(r"(?P<variant>[a-z_]+?)-(?P<game>[a-z_]+)-seed(?P<seed>\d+)\.csv")


def measure(results: Path) -> list[dict]:
    """One row per (agent, variant, game) with evaluation episodes in ``results``."""
    lengths: dict[tuple, list[int]] = defaultdict(list)
    frames: dict[tuple, float] = defaultdict(float)
    seconds: dict[tuple, float] = defaultdict(float)
    seeds: dict[tuple, list[str]] = defaultdict(list)
    for path in sorted(results.glob("*.csv")):
        name = NAME.fullmatch(path.name)
        if not name or name["variant"] not in AGENTS:
            continue
        with path.open(newline="") as f:
            rows = sorted(
                (r for r in csv.DictReader(f) if r["phase"] == EVAL_PHASE), key=lambda r: float(r["wall_time"])
            )
        if len(rows) < 2:
            continue
        key = (*AGENTS[name["variant"]], name["game"])
        lengths[key] += [int(r["length_frames"]) for r in rows]
        frames[key] += sum(int(r["length_frames"]) for r in rows[1:])
        seconds[key] += float(rows[-1]["wall_time"]) - float(rows[0]["wall_time"])
        seeds[key].append(name["seed"])
    out = []
    for key in sorted(lengths):
        agent, variant, game = key
        if seconds[key] <= 0:
            continue
        n = len(lengths[key])
        out.append(
            {
                "agent": agent,
                "variant": variant,
                "task": game,
                "episode_frames": round(sum(lengths[key]) / n),
                "frames_per_second": round(frames[key] / seconds[key]),
                "measured": f"{n} evaluation episodes of seed{'s' * (len(seeds[key]) > 1)} {','.join(seeds[key])}",
            }
        )
    return out


#: how the table was measured, above its rows
HEADER = (
    "# Evaluation episodes of the committed Atari 100K runs (benchmarks/results/atari100k/*.csv, phase train_eval),\n"
    "# measured by benchmarks/atari100k_evaluation_speeds.py (regenerate it as runs are added; --check tells when\n"
    "# this file is stale): episode_frames is the mean length of an evaluation episode; frames_per_second the\n"
    "# frames of a run's evaluation episodes after its first over the wall time between their ends, pooled over\n"
    "# the game's runs; atari100k protocol, 2 CPU cores, no GPU, beside other work (the lanes of benchmarks/LANES.md).\n"
)


def main(argv: list[str] | None = None) -> int:
    return evaluation_speeds_table.main(
        argv, __doc__.splitlines()[0], measure, HEADER, RESULTS, OUT, "atari100k_evaluation_speeds.py"
    )


if __name__ == "__main__":
    sys.exit(main())
