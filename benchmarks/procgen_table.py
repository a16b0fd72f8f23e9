"""The Procgen proof table (issue 44): benchgen's PPO train and test scores beside openai's three
released runs at the same step count, random play under the same protocol, and the gap.

Reads the episodes ``benchmarks/procgen_runs.sh`` exported to ``benchmarks/results/procgen/`` (or
any ``benchgen export`` CSV of a procgen run, passed with ``--csv``; an unfinished run can be
exported while it trains). For every test round of a PPO run (the ``train_eval`` phase: 100 test
level episodes every 250K steps under ``easy200``), it prints at that round's step:

* train: the mean raw return of the last 100 training episodes finished by then (training levels;
  openai's logged ``eprewmean`` is the same measure),
* test: the round's mean raw return (test levels; openai's test worker logs the mean of its last
  100 episodes, played alongside training),
* the three released runs' train and test returns at the same step (linearly interpolated between
  their logged updates, every 65,536 steps in the shipped thinning), their range, and whether
  benchgen's value lies within or above it,
* random play (benchgen's ``random`` agent, same protocol: its training and test-level episodes),
* the generalization gap (train - test), and the normalized scores with the protocol's constants.

Usage: python benchmarks/procgen_table.py [--results benchmarks/results/procgen] [--csv RUN.csv ...] [--normalization paper|train_procgen]
"""

from __future__ import annotations

import argparse
import csv
from collections import defaultdict
from pathlib import Path

import numpy as np

from benchgen_procgen import scoring

TRAIN, TEST = "train", "train_eval"


def read(path: Path) -> dict[str, list[dict[str, str]]]:
    """game -> the CSV's episodes in order (a ``GAME:test`` task counts as its game)."""
    rows: dict[str, list[dict[str, str]]] = defaultdict(list)
    with path.open(newline="") as handle:
        for row in csv.DictReader(handle):
            rows[row["task"].removesuffix(":test")].append(row)
    return rows


def rounds(episodes: list[dict[str, str]]) -> list[tuple[int, float, float, int]]:
    """(step, train, test, test episodes) at each test round: the round's step is the training step
    count it began at (``frames_total`` of its episodes; one frame a step on Procgen)."""
    train = [(int(r["frames_total"]), float(r["score"])) for r in episodes if r["phase"] == TRAIN]
    by_round: dict[int, list[float]] = defaultdict(list)
    for r in episodes:
        if r["phase"] == TEST:
            by_round[int(r["frames_total"])].append(float(r["score"]))
    out = []
    for step, scores in sorted(by_round.items()):
        before = [s for at, s in train if at <= step][-100:]
        out.append((step, float(np.mean(before)) if before else float("nan"), float(np.mean(scores)), len(scores)))
    return out


def random_scores(path: Path, game: str) -> tuple[float, float]:
    """Random play's mean training-level and test-level return on ``game``."""
    episodes = read(path).get(game, [])
    train = [float(r["score"]) for r in episodes if r["phase"] == TRAIN]
    test = [float(r["score"]) for r in episodes if r["phase"] == TEST]
    return (float(np.mean(train)) if train else float("nan"), float(np.mean(test)) if test else float("nan"))


def place(value: float, runs: np.ndarray) -> str:
    """Where ``value`` lies against the released runs: below, within or above their range."""
    low, high = runs.min(), runs.max()
    return "above" if value > high else "within" if value >= low else "below"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("benchmarks/results/procgen"))
    parser.add_argument(
        "--csv", type=Path, nargs="*", default=None, help="PPO runs' exported CSVs (default: ppo-*.csv)"
    )
    parser.add_argument("--normalization", default="paper", choices=scoring.NORMALIZATIONS)
    args = parser.parse_args()
    runs = args.csv if args.csv is not None else sorted(args.results.glob("ppo-*-seed*.csv"))
    constants = scoring.constants(args.normalization)
    for path in runs:
        for game, episodes in read(path).items():
            if game not in scoring.released_runs():
                continue
            r_min, r_max = constants[(game, "easy")]
            rnd = args.results / f"random-{game}-seed0.csv"
            rnd_train, rnd_test = random_scores(rnd, game) if rnd.is_file() else (float("nan"), float("nan"))
            print(
                f"\n{path.name}: {game}, easy, 200 training levels (R_min {r_min:g}, R_max {r_max:g}, {args.normalization})"
            )
            print(f"random play here: train {rnd_train:.2f}, test {rnd_test:.2f}")
            print(
                f"{'step':>10} | {'train':>6} {'openai (3 runs)':>18} {'':>6} | {'test':>6} {'openai (3 runs)':>18} {'':>6}"
                f" | {'gap':>5} | {'norm train':>10} {'norm test':>9}"
            )
            for step, train, test, n in rounds(episodes):
                pub_train = scoring.released_at(game, "train", step)
                pub_test = scoring.released_at(game, "test", step)
                span = lambda v: f"{v.min():5.2f}-{v.max():5.2f} ({v.mean():5.2f})"  # noqa: E731
                print(
                    f"{step:>10,} | {train:6.2f} {span(pub_train):>18} {place(train, pub_train):>6} | "
                    f"{test:6.2f} {span(pub_test):>18} {place(test, pub_test):>6} | {train - test:5.2f} | "
                    f"{(train - r_min) / (r_max - r_min):10.3f} {(test - r_min) / (r_max - r_min):9.3f}"
                    + (f"  ({n} test episodes)" if n < 100 else "")
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
