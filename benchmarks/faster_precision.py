"""Print the precision ("float32" or "bfloat16") in which PPO's IMPALA CNN trains faster on this
machine, for a long Procgen run about to start (``benchmarks/procgen_runs.sh``).

Why a probe and not a constant: which is faster depends on the CPU. On the AMD EPYC development
host a bfloat16 training pass ran about 1.7x float32's (its AVX512-BF16 products at twice the
float32 rate); on the Intel Xeon host that later took its place, bfloat16's matrix products run at
half float32's rate and PPO ran 92 steps a second in bfloat16 against 132 in float32
(docs/guide/suites.md). A run keeps the precision it started with (it changes the arithmetic), so
the choice is the starting machine's.

What is timed: a forward and backward pass of the IMPALA CNN on 256 Procgen frames (the chunk of a
minibatch PPO passes at once on the CPU, ``update_chunk``), one torch thread, the two precisions
alternated ``--rounds`` times after a warm-up pass each; the faster median wins. About 10 seconds.

    python benchmarks/faster_precision.py [--rounds 3] [--verbose]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import gymnasium as gym
import numpy as np
import torch

from benchgen_agents.ppo.impala_cnn import ImpalaCNN

PRECISIONS = ("float32", "bfloat16")


def training_pass_seconds(net: ImpalaCNN, frames: torch.Tensor) -> float:
    start = time.perf_counter()
    net(frames).sum().backward()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="timed passes per precision")
    parser.add_argument("--verbose", action="store_true", help="also print each precision's median seconds")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    space = gym.spaces.Box(0, 255, (3, 64, 64), np.uint8)
    nets = {p: ImpalaCNN(space, precision=p) for p in PRECISIONS}
    frames = torch.rand(256, 3, 64, 64)
    times: dict[str, list[float]] = {p: [] for p in PRECISIONS}
    for p in PRECISIONS:
        training_pass_seconds(nets[p], frames)  # warm-up: oneDNN picks and caches its kernels
    for _ in range(args.rounds):
        for p in PRECISIONS:
            times[p].append(training_pass_seconds(nets[p], frames))
    medians = {p: statistics.median(t) for p, t in times.items()}
    if args.verbose:
        print(", ".join(f"{p} {s:.3f} s" for p, s in medians.items()), file=sys.stderr)
    print(min(medians, key=medians.get))


if __name__ == "__main__":
    main()
