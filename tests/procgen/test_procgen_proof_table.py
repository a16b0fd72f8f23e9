"""The README's Procgen proof table is what the committed runs' episodes give
(``benchmarks/procgen_table.py`` over ``benchmarks/results/procgen/``), and what it claims holds:
at the last test round, PPO's train and test returns lie within or above openai's three released
runs at the same step (up to the sampling error of a 100-episode mean) and clearly above random
play under the same protocol."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from benchgen_procgen import scoring
from tests.benchmark_scripts import load

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results" / "procgen"


def _readme_rows() -> dict[str, list[str]]:
    text = (ROOT / "README.md").read_text()
    table = text.split("<!-- procgen-proof -->", 1)[1].split("<!-- /procgen-proof -->", 1)[0]
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in table.strip().splitlines()[2:]]
    return {row[0]: row for row in rows}


def _span(values: np.ndarray) -> str:
    return f"{values.min():.2f}-{values.max():.2f}"


def test_the_readme_table_is_the_committed_runs_last_rounds_and_its_claims_hold():
    table = load("procgen_table")
    rows = _readme_rows()
    finished = sorted(RESULTS.glob("ppo-*-seed0.csv"))
    assert finished, "no committed PPO proof run"
    for path in finished:
        game = path.name.removeprefix("ppo-").removesuffix("-seed0.csv")
        episodes_of = table.read(path)[game]
        step, train, test, episodes = table.rounds(episodes_of)[-1]
        random_train, random_test = table.random_scores(RESULTS / f"random-{game}-seed0.csv", game)
        pub_train, pub_test = scoring.released_at(game, "train", step), scoring.released_at(game, "test", step)
        assert rows[game] == [
            game,
            f"{step:,}",
            f"{train:.2f}",
            _span(pub_train),
            f"{test:.2f}",
            _span(pub_test),
            f"{random_train:.2f} / {random_test:.2f}",
            f"{train - test:.2f}",
        ]
        assert episodes == 100
        random_episodes = table.read(RESULTS / f"random-{game}-seed0.csv")[game]
        for phase, mean, random_mean, published in (
            (table.TRAIN, train, random_train, pub_train),
            (table.TEST, test, random_test, pub_test),
        ):
            ppo = _scores(episodes_of, phase, step)
            rnd = _scores(random_episodes, phase, None)
            # within or above openai's runs at the same step, up to the sampling error of a
            # 100-episode mean (two standard errors: the runs' own logged means carry the same noise)
            assert mean >= published.min() - 2 * ppo.std(ddof=1) / math.sqrt(len(ppo)), f"{game} {phase}: below openai"
            # clearly above random play: by more than three standard errors of the difference of means
            error = math.sqrt(ppo.var(ddof=1) / len(ppo) + rnd.var(ddof=1) / len(rnd))
            assert mean - random_mean > 3 * error, f"{game} {phase}: not clearly above random play"


def _scores(episodes: list[dict[str, str]], phase: str, step: int | None) -> np.ndarray:
    """The scores a table value is the mean of: a test round's (``step``: the round), the last 100
    training episodes by ``step``, or every episode of the phase (``step`` None: random play)."""
    rows = [r for r in episodes if r["phase"] == phase]
    if step is not None and phase == "train_eval":
        rows = [r for r in rows if int(r["frames_total"]) == step]
    elif step is not None:
        rows = [r for r in rows if int(r["frames_total"]) <= step][-100:]
    return np.array([float(r["score"]) for r in rows])


def test_a_game_still_running_is_shown_as_running_with_its_random_play():
    table = load("procgen_table")
    for game, row in _readme_rows().items():
        if (RESULTS / f"ppo-{game}-seed0.csv").exists():
            continue
        assert "running" in row[1] and not any(row[2:6]), f"{game}: numbers without a committed run"
        random_train, random_test = table.random_scores(RESULTS / f"random-{game}-seed0.csv", game)
        assert row[6] == f"{random_train:.2f} / {random_test:.2f}"
