"""Procgen's scores: the paper's normalization and openai's released PPO runs as reference tables.

Normalized score (Cobbe et al. 2020, appendix C): ``(R - R_min) / (R_max - R_min)`` with R_min the
score of a PPO policy trained with masked-out observations and R_max the best reachable, per game
and distribution mode. Two sets ship (``data/normalization_paper.csv``, appendix C as transcribed;
``data/normalization_train_procgen.csv``, openai/train-procgen's ``constants.py``); they differ on
jumper and leaper in easy mode. Each is a reference table ``r_max_<mode>_<set>`` whose own random
scores are the R_min (``ReferenceScores.random``), so benchgen's scoring computes exactly that
formula; a run is normalized against the table of its protocol's mode and ``normalization``
(:meth:`ProcgenScorer.default_baseline_for`), and its report names the table.

openai's released runs (``data/openai_ppo_easy200.csv``: PPO, easy, 200 training levels, three
runs a game, the train and test returns logged at every update; every 4th update kept) are the
tables ``openai_ppo_easy200_train`` and ``openai_ppo_easy200_test``: the mean of the three runs at
every kept update, as a dense curve (``interpolate``: a run between two logged steps is set beside
the linear interpolation at its own step count); their ``scores`` are those at 25M steps, the
paper's easy budget. Both hold each game's score under the game's name and its ``GAME:test``
name, since a run records test-level returns under either.
"""

from __future__ import annotations

import csv
import functools
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from benchgen.scoring import ReferenceScores, Scorer

from .env import TEST_SUFFIX
from .protocols import NORMALIZATIONS

DATA = Path(__file__).parent / "data"
#: the paper's easy budget, where the released runs' ``scores`` are read (the first logged update at or past it)
EASY_BUDGET = 25_000_000
#: the released runs' file and its source line
RELEASED_RUNS = DATA / "openai_ppo_easy200.csv"
RELEASED_SOURCE = (
    "openai/train-procgen @ 1a2ae21, train_procgen/results/easy-200-run{0,1,2}/progress-<game>-{train,test}.csv "
    "(eprewmean: mean raw return of the worker's last 100 episodes), MIT licence; data/SOURCES.md"
)


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


@functools.cache
def constants(normalization: str) -> dict[tuple[str, str], tuple[float, float]]:
    """(game, mode) -> (R_min, R_max) of a shipped set (``paper`` or ``train_procgen``)."""
    rows = _rows(DATA / f"normalization_{normalization}.csv")
    return {(r["game"], r["mode"]): (float(r["r_min"]), float(r["r_max"])) for r in rows}


def _both_names(scores: Mapping[str, float]) -> dict[str, float]:
    """Each game's value under ``GAME`` and ``GAME:test``."""
    return {**scores, **{game + TEST_SUFFIX: value for game, value in scores.items()}}


def normalization_tables() -> list[ReferenceScores]:
    """``r_max_<mode>_<set>`` for easy and hard and both sets (module docstring)."""
    tables = []
    for name in NORMALIZATIONS:
        source = (
            "Cobbe et al. 2020, appendix C (data/normalization_paper.csv)"
            if name == "paper"
            else "openai/train-procgen train_procgen/constants.py @ 1a2ae21 (data/normalization_train_procgen.csv)"
        )
        for mode in ("easy", "hard"):
            pairs = {game: v for (game, m), v in constants(name).items() if m == mode}
            tables.append(
                ReferenceScores(
                    name=f"r_max_{mode}_{name}",
                    scores=_both_names({g: hi for g, (lo, hi) in pairs.items()}),
                    random=_both_names({g: lo for g, (lo, hi) in pairs.items()}),
                    description=f"Procgen R_max, {mode} mode, normalized from R_min ({name} constants)",
                    source=source,
                )
            )
    return tables


@functools.cache
def released_runs() -> dict[str, dict[str, Any]]:
    """game -> ``{"timesteps": array, "train": (runs, steps) array, "test": (runs, steps) array}``
    from openai's released easy-200 runs (module docstring)."""
    by_game: dict[str, dict[int, dict[int, tuple[float, float]]]] = defaultdict(lambda: defaultdict(dict))
    for r in _rows(RELEASED_RUNS):
        by_game[r["game"]][int(r["run"])][int(r["timestep"])] = (float(r["train_return"]), float(r["test_return"]))
    out = {}
    for game, runs in by_game.items():
        steps = sorted(set.intersection(*(set(v) for v in runs.values())))
        ordered = [runs[k] for k in sorted(runs)]
        out[game] = {
            "timesteps": np.array(steps),
            "train": np.array([[run[s][0] for s in steps] for run in ordered]),
            "test": np.array([[run[s][1] for s in steps] for run in ordered]),
        }
    return out


def released_at(game: str, which: str, timesteps: int) -> np.ndarray:
    """The released runs' ``which`` ("train" or "test") returns of ``game`` at ``timesteps``, one per run,
    linearly interpolated between the logged updates (clamped to the logged range)."""
    data = released_runs()[game]
    return np.array([np.interp(timesteps, data["timesteps"], run) for run in data[which]])


def released_tables() -> list[ReferenceScores]:
    """``openai_ppo_easy200_train`` and ``_test``: the mean of the three runs (module docstring)."""
    runs = released_runs()
    tables = []
    for which in ("train", "test"):
        by_checkpoint: dict[str, dict[str, float]] = defaultdict(dict)
        final: dict[str, float] = {}
        spread: dict[str, float] = {}
        for game, data in runs.items():
            mean = data[which].mean(axis=0)
            for step, value in zip(data["timesteps"], mean):
                by_checkpoint[f"timesteps_{int(step)}"][game] = float(value)
            at = int(np.searchsorted(data["timesteps"], EASY_BUDGET))
            final[game] = float(mean[at])
            spread[game] = float(data[which][:, at].std(ddof=1))
        tables.append(
            ReferenceScores(
                name=f"openai_ppo_easy200_{which}",
                scores=_both_names(final),
                by_checkpoint={k: _both_names(v) for k, v in by_checkpoint.items()},
                spread=_both_names(spread),
                description=(
                    f"openai's PPO (IMPALA CNN), easy, 200 training levels: {which} return, mean of 3 released runs "
                    f"({'training levels' if which == 'train' else 'the full level distribution'}); scores at 25M steps"
                ),
                source=RELEASED_SOURCE,
                protocol={"distribution_mode": "easy", "num_levels": 200},
                interpolate=True,
            )
        )
    return tables


def reference_tables() -> list[ReferenceScores]:
    """Every table the suite ships."""
    return [*normalization_tables(), *released_tables()]


class ProcgenScorer(Scorer):
    """Normalizes against ``r_max_<mode>_<set>`` of the run's protocol (module docstring)."""

    default_baseline = "r_max_easy_paper"

    def __init__(self, references: list[ReferenceScores]):
        # no random scores of its own: each r_max table carries its R_min (ReferenceScores.random)
        super().__init__({}, {table.name: table for table in references})

    def default_baseline_for(self, protocol: Mapping[str, Any]) -> str:
        mode = protocol.get("distribution_mode", "easy")
        mode = mode if mode in ("easy", "hard") else "hard"  # the paper's other modes are hard-mode levels
        return f"r_max_{mode}_{protocol.get('normalization', 'paper')}"
