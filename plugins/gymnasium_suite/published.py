"""The RL Baselines3 Zoo's published scores of the agents it tuned on this suite's tasks, the
suite's reference data for its shipped RL Zoo settings (``tuned/``): ``data/rl_zoo_benchmark.csv``,
its source in its header. They are scores of particular agents, not a per-task yardstick, so
they are no reference table of ``benchgen references``: the slow check
``tests/gymnasium_suite/test_rl_zoo_scores.py`` holds benchgen's agents to them and the results
pages show them beside the runs."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

#: the table, with its source in its ``#`` header
RL_ZOO_FILE = Path(__file__).resolve().parent / "data" / "rl_zoo_benchmark.csv"

_SCALE = {"k": 1_000, "M": 1_000_000}


@dataclass(frozen=True)
class PublishedScore:
    """One row of ``benchmark.md``: an algorithm's mean return on a task after its training budget."""

    algorithm: str
    """The RL Zoo's ``algo``: the algorithm of benchgen's agent of that name (``AgentSpec.algorithm``)."""
    task: str
    mean_return: float
    n_timesteps: int
    """The training budget in agent steps (printed ``100k``, ``1M``)."""


def _steps(text: str) -> int:
    """``"120k"`` -> 120000, ``"1M"`` -> 1000000."""
    return int(float(text[:-1]) * _SCALE[text[-1]]) if text[-1:] in _SCALE else int(text)


def rl_zoo_rows() -> tuple[PublishedScore, ...]:
    """Every row of the table, as printed."""
    lines = [line for line in RL_ZOO_FILE.read_text().splitlines() if not line.startswith("#")]
    return tuple(
        PublishedScore(row["algorithm"], row["task"], float(row["mean_return"]), _steps(row["n_timesteps"]))
        for row in csv.DictReader(lines)
    )


def rl_zoo_scores() -> dict[tuple[str, str], float]:
    """(algorithm, task) -> the RL Zoo's published mean return."""
    return {(row.algorithm, row.task): row.mean_return for row in rl_zoo_rows()}
