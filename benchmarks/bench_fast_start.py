"""How fast the commands that only read the registry start (issue 29, "fast start": under 1 s).

Each command runs in a fresh interpreter, ``--rounds`` times, its rounds interleaved with the
references' so that a shared machine's load swings hit all alike. For each the median wall time
and the median CPU time (user + system of the child, which load inflates far less) are printed,
with the CPU-time ratio to two references measured in the same run:

* ``python -c pass``: the interpreter's own start;
* ``import numpy, gymnasium``: the floor of any command, what the core's suite and agent
  interfaces import.

and, for scale, ``import torch``, which listing no longer pays. Compiled bytecode goes to a
temporary ``PYTHONPYCACHEPREFIX`` warmed by one untimed run of each command (as on a user's
machine, where ``.pyc`` files exist); nothing is written in the repository.

Target: each command's median CPU time under 1 s (and its wall time on an idle machine).

    python benchmarks/bench_fast_start.py --rounds 5
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

REFERENCES = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "import numpy, gymnasium": [sys.executable, "-c", "import numpy, gymnasium"],
    "import torch": [sys.executable, "-c", "import torch"],
}
COMMANDS = {
    "benchgen list": ["list"],
    "benchgen --help": ["--help"],
    "benchgen protocols atari_saber": ["protocols", "atari_saber"],
    "benchgen list atari_saber": ["list", "atari_saber"],
}


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, child CPU seconds) of one run of ``cmd``, which must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr[-500:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="runs of each command (medians are printed)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, PYTHONPYCACHEPREFIX=cache)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        runs = {**REFERENCES, **{name: [sys.executable, "-m", "benchgen", *a] for name, a in COMMANDS.items()}}
        for cmd in runs.values():  # warm the bytecode cache
            timed(cmd, env)
        walls: dict[str, list[float]] = {name: [] for name in runs}
        cpus: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(args.rounds):
            for name, cmd in runs.items():
                wall, cpu = timed(cmd, env)
                walls[name].append(wall)
                cpus[name].append(cpu)
    cpu = {name: statistics.median(values) for name, values in cpus.items()}
    wall = {name: statistics.median(values) for name, values in walls.items()}
    print(f"{'command':34} {'wall s':>7} {'CPU s':>7} {'x pass':>7} {'x numpy+gym':>11}  (medians of {args.rounds})")
    for name in runs:
        ratio_pass = cpu[name] / max(cpu["python -c pass"], 1e-3)
        ratio_floor = cpu[name] / max(cpu["import numpy, gymnasium"], 1e-3)
        print(f"{name:34} {wall[name]:7.2f} {cpu[name]:7.2f} {ratio_pass:7.1f} {ratio_floor:11.2f}")
    slow = [name for name in COMMANDS if cpu[name] >= 1.0]
    print("target (CPU < 1 s each):", "met" if not slow else f"missed by {', '.join(slow)}")


if __name__ == "__main__":
    main()
