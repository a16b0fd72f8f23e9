"""``benchgen atari-modes random-scores RUN_DIR``: the random reference table from a run.

The shipped ``data/random_scores.csv`` was made by::

    benchgen run atari_modes random --split flavors --frames 100k --seeds 0 --jobs 2 --out runs/am-random
    benchgen atari-modes random-scores runs/am-random -o src/benchgen_atari_modes/data/random_scores.csv

A task's random score is the mean raw score of *every* episode the random agent finished on it
(all seeds pooled; more episodes than the last-100 rule would use, for a steadier reference).
"""

from __future__ import annotations

import csv
import sys
from collections import defaultdict
from pathlib import Path


def add_commands(subparsers) -> None:
    p = subparsers.add_parser("atari-modes", help="atari_modes suite tools")
    sub = p.add_subparsers(dest="atari_modes_command", metavar="TOOL", required=True)
    q = sub.add_parser("random-scores", help="task,score CSV of a random-agent run (the normalization reference)")
    q.add_argument("run_dir", type=Path)
    q.add_argument("--output", "-o", type=Path, help="CSV file to write (default: stdout)")
    q.set_defaults(func=random_scores_command)


def random_scores_command(args) -> int:
    from benchgen.errors import UsageError
    from benchgen.results.rundir import RunDir

    run_dir = RunDir(args.run_dir)
    record = run_dir.record()
    if record.suite != "atari_modes" or record.agent != "random":
        raise UsageError(
            f"{args.run_dir} is a run of {record.agent} on {record.suite}; give a random-agent run of atari_modes"
        )
    scores: dict[str, list[float]] = defaultdict(list)
    store = run_dir.store(readonly=True)
    try:
        for ep in store.episodes():
            scores[ep["task"]].append(float(ep["score"]))
    finally:
        store.close()
    missing = [t for t in record.tasks if not scores.get(t)]
    if missing:
        raise UsageError(
            f"no finished episode for {len(missing)} tasks (e.g. {missing[0]}); rerun with a larger --frames"
        )
    from benchgen_atari_modes import SUITE

    order = [t for t in SUITE.tasks() if t in record.tasks]  # the suite's order: game by game
    order += [t for t in record.tasks if t not in order]
    handle = args.output.open("w", newline="") if args.output else sys.stdout
    try:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["task", "score", "episodes", "frames_per_seed", "seeds"])
        for task in order:
            values = scores[task]
            writer.writerow([task, f"{sum(values) / len(values):.4f}", len(values), record.budget, len(record.seeds)])
    finally:
        if args.output:
            handle.close()
    return 0
