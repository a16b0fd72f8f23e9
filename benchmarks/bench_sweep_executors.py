"""Sweep overhead: the same small sweep with ``--executor ray`` (a local Ray instance) against
``--executor local --jobs 2``, in the same run, printed as a ratio (local time / Ray time).

    python benchmarks/bench_sweep_executors.py [--frames 100k] [--games pong,breakout]

Both sweeps run the random agent on real SABER games (2 games x 2 seeds = 4 units), so the
figure includes Ray's start-up and the driver committing streamed episodes.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def sweep(executor_args: list[str], frames: str, games: str) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [
            sys.executable,
            "-m",
            "benchgen",
            "run",
            "atari_saber",
            "random",
            "--games",
            games,
            "--seeds",
            "0,1",
            "--frames",
            frames,
            "--out",
            str(Path(tmp) / "run"),
            "--no-progress",
            *executor_args,
        ]
        start = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", default="100k")
    parser.add_argument("--games", default="pong,breakout")
    args = parser.parse_args()
    local = sweep(["--executor", "local", "--jobs", "2"], args.frames, args.games)
    ray = sweep(["--executor", "ray", "--set", "cpus_per_unit=1"], args.frames, args.games)
    print(f"sweep of 4 units x {args.frames} frames: local --jobs 2 {local:.1f} s, ray (local instance) {ray:.1f} s")
    print(f"ratio local/ray = {local / ray:.3f} (1.0 = no Ray overhead)")


if __name__ == "__main__":
    main()
