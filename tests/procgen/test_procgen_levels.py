"""Procgen's levels as benchgen's split: training and test levels never meet, and each recorded
episode says which level it played."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from benchgen.errors import UsageError
from benchgen_procgen import env as procgen_env
from benchgen_procgen.env import ProcgenVectorEnv
from benchgen_procgen.protocols import EASY200, HARD500
from benchgen_procgen.suite import ProcgenSuite


def _episodes(env: ProcgenVectorEnv, steps: int, seed: int = 0) -> list:
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    ends = []
    for _ in range(steps):
        env.step(rng.integers(0, 15, env.num_envs))
        ends += env.pop_episode_ends()
    return ends


def test_training_episodes_play_training_levels_and_test_rounds_play_only_test_levels():
    # maze's random episodes end by its 500-step cap at the latest
    train = _episodes(ProcgenVectorEnv(["maze"] * 16, 0, EASY200), 520)
    test = _episodes(ProcgenVectorEnv(["maze"] * 16, 0, EASY200, mode="eval"), 520)
    assert len(train) >= 16 and len(test) >= 16
    assert all(0 <= e.extras["level_seed"] < 200 and e.extras["test_level"] == 0 for e in train)
    assert all(e.extras["level_seed"] >= 200 and e.extras["test_level"] == 1 for e in test)
    assert len({e.extras["level_seed"] for e in test}) == len(test)  # drawn from two billion levels


def test_a_test_task_plays_test_levels_in_training_too_and_shares_an_env_with_a_training_task():
    env = ProcgenVectorEnv(["maze", "maze:test"] * 8, 0, EASY200)
    ends = _episodes(env, 520)
    assert {e.task for e in ends} == {"maze", "maze:test"}
    for e in ends:
        assert (e.extras["level_seed"] >= 200) == (e.task == "maze:test")


def test_an_episode_from_outside_its_levels_is_refused_not_recorded():
    env = ProcgenVectorEnv(["maze"] * 4, 0, EASY200)
    env.reset(seed=0)  # built on the training levels
    game, levels, index = env._groups[0]
    # then told it plays test levels: as if the package had drawn a training level in a test round
    env._groups[0] = (game, dataclasses.replace(levels, low=200, high=2**31 - 1, test=True), index)
    rng = np.random.default_rng(0)
    with pytest.raises(RuntimeError, match="outside the levels"):
        for _ in range(520):
            env.step(rng.integers(0, 15, env.num_envs))
    assert env.pop_episode_ends() == []


def test_levels_follow_the_protocol():
    assert EASY200.train_levels == (0, 200) and EASY200.test_levels == (200, 2**31 - 1)
    assert HARD500.train_levels == (0, 500) and HARD500.test_levels == (500, 2**31 - 1)
    moved = EASY200.changed({"start_level": 1000, "num_levels": 50})
    assert moved.train_levels == (1000, 1050) and moved.test_levels[0] == 1050
    everything = EASY200.changed({"num_levels": 0, "evaluation_episodes": 0})
    assert everything.test_levels is None
    with pytest.raises(UsageError, match="holds out no test levels"):
        EASY200.changed({"num_levels": 0})


def test_the_same_seed_plays_the_same_levels_and_another_seed_others():
    def levels(seed):
        return [e.extras["level_seed"] for e in _episodes(ProcgenVectorEnv(["maze"] * 8, 0, EASY200), 520, seed)]

    assert levels(3) == levels(3)
    assert levels(3) != levels(4)


def test_hard_mode_and_game_specific_modes_are_checked_before_the_package_sees_them():
    suite = ProcgenSuite().with_protocol("easy200", {"distribution_mode": "memory"})
    suite.check_task_available("maze")
    with pytest.raises(UsageError, match="coinrun has no memory mode"):
        suite.check_task_available("coinrun")  # the package would abort the process (a C++ assertion)
    hard = ProcgenSuite().with_protocol("hard500", {})
    env = hard.make_env(["coinrun"], 0)
    assert env.protocol.distribution_mode == "hard" and env.reset(seed=0)[0].shape == (1, 64, 64, 3)


def test_without_the_package_the_suite_says_how_to_install_it(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "procgen", None)  # import procgen -> ImportError
    monkeypatch.setitem(sys.modules, "procgen.env", None)
    with pytest.raises(UsageError) as error:
        ProcgenSuite().check_task_available("coinrun")
    assert procgen_env.INSTALL_COMMAND in str(error.value) and "\n" not in str(error.value)
