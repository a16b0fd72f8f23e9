"""How often DrQ(epsilon) gets a chicken across Freeway early, per style of the study (issue 26).

Reads the runs ``benchmarks/freeway_early_runs.sh`` exported to
``benchmarks/results/atari100k/freeway_early/`` (the first 12,288 agent steps, then 10 evaluation
episodes; styles pytorch, dopamine, batch_shift, noop and dopamine_2021: benchgen's agent with
Dopamine's differences alone or together), those of ``benchmarks/dopamine_drq_eps_freeway.py``
beside them (style dopamine_agent: Dopamine's own agent), and the first six training episodes of
the full 100K-step Freeway runs exported in ``benchmarks/results/atari100k/`` (``drq_eps``: the
variant's default, ``network_style=pytorch``; ``drq_eps_dopamine``: ``network_style=dopamine``),
and prints per run its training episodes' scores and its evaluation mean, then per style how many
runs scored at all within those steps (a style ending in ``_long`` trained longer). Beside it: Agarwal et al. 2021's released DrQ(epsilon) runs,
73 of 100 of which scored on Freeway after 100K steps (the ``atari100k_drq_eps`` table's
``runs_at_zero``).

Usage: python benchmarks/freeway_early_table.py [--results benchmarks/results/atari100k/freeway_early]
"""

from __future__ import annotations

import argparse
import csv
from collections import defaultdict
from pathlib import Path

EARLY_FRAMES = 49_152  # 12,288 agent steps: the six training episodes the short runs play
FULL_RUN_STYLES = {"drq_eps": "pytorch", "drq_eps_dopamine": "dopamine"}  # full runs' file prefix -> style


def episodes(path: Path, full_run: bool) -> tuple[int, dict[str, list[float]]]:
    """A run's seed and phase -> its episodes' raw scores in play order (a full run: its training
    episodes within the short runs' steps only)."""
    with path.open() as handle:
        rows = sorted(csv.DictReader(handle), key=lambda r: int(r["frames_total"] or 0))
    phases: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        if not full_run or (row["phase"] == "train" and int(row["frames_total"]) <= EARLY_FRAMES):
            phases[row["phase"]].append(float(row["score"]))
    return int(rows[0]["seed"]), dict(phases)


def load(results: Path) -> dict[str, dict[str, dict[str, list[float]]]]:
    """style -> run label -> phase -> the episodes' raw scores, in the order they were played."""
    runs: dict[str, dict[str, dict[str, list[float]]]] = defaultdict(dict)
    for path in sorted(results.glob("drq_eps-*-seed*.csv")):
        seed, phases = episodes(path, full_run=False)
        runs[path.stem.split("-")[1]][f"{seed}"] = phases
    for path in sorted(results.parent.glob("drq_eps*-freeway-seed*.csv")):
        seed, phases = episodes(path, full_run=True)
        style = FULL_RUN_STYLES[path.stem.split("-")[0]]
        if f"{seed}" not in runs[style]:  # a seed's short run plays the same first steps (seed 3 did)
            runs[style][f"{seed} (100K run)"] = phases
    return runs


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--results", type=Path, default=Path(__file__).parent / "results" / "atari100k" / "freeway_early"
    )
    args = parser.parse_args(argv)
    runs = load(args.results)
    print("| style | seed | training episodes (2,048 steps each) | evaluation mean (10 episodes) |")
    print("|---|---:|---|---:|")
    for style, seeds in sorted(runs.items()):
        for seed, phases in sorted(seeds.items()):
            train = ", ".join(f"{s:g}" for s in phases.get("train", []))
            evals = phases.get("train_eval", [])
            shown = f"{sum(evals) / len(evals):.1f}" if evals else "-"
            print(f"| {style} | {seed} | {train} | {shown} |")
    print()
    for style, seeds in sorted(runs.items()):
        scored = sum(any(s > 0 for p in phases.values() for s in p) for phases in seeds.values())
        if style.endswith("_long"):
            within = "their training and evaluation"
        elif style.startswith("dopamine_agent"):  # Dopamine's runner plays whole episodes past the budget
            within = "their seven training episodes (about 14,200 steps) and evaluation"
        else:
            within = "12,288 steps and evaluation"
        print(f"{style}: {scored} of {len(seeds)} runs scored within {within}")
    print("published DrQ(epsilon) (Agarwal et al. 2021, 100 runs of 100K steps): 73 of 100 scored")


if __name__ == "__main__":
    main()
