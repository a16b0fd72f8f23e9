"""Every task of the first-party suites runnable here is a Gymnasium id that ``gymnasium.make``
accepts (issue 31): ids carry no ``:`` (Gymnasium's "import this module" syntax) and one version,
and the task stays recoverable from the registration (Procgen's test-level tasks: ``procgen.GAME.test``).
Sonic is left out: its levels need ROMs
this machine lacks (the stable-retro test game is not one of its tasks)."""

from __future__ import annotations

import warnings

import gymnasium as gym
import pytest
from gymnasium.envs.registration import parse_env_id
from gymnasium.utils.env_checker import check_env

from benchgen import api

SUITES = ("atari_saber", "gymnasium", "procgen")


@pytest.fixture
def first_party(monkeypatch):
    monkeypatch.delenv("BENCHGEN_PLUGINS", raising=False)  # the installed plugins only
    from benchgen import registry

    registry.reset_registry()
    yield


@pytest.mark.parametrize("suite", SUITES)
def test_every_task_id_is_made_reset_and_stepped(first_party, suite):
    from benchgen.registry import get_registry

    tasks = get_registry().suite(suite).tasks()
    ids = api.register_gymnasium_ids([suite])
    assert len(ids) == len(set(ids)) == len(tasks)
    stepped_games: set[tuple[str, bool]] = set()
    for env_id, task in zip(ids, tasks, strict=True):
        assert ":" not in env_id
        namespace, name, version = parse_env_id(env_id)
        assert namespace == "benchgen" and "-v" not in name and version is not None
        assert api.gymnasium_task(env_id) == (suite, task)
        # Every game, and one of its mode/difficulty flavors, is made and stepped through its id:
        # the other flavors differ from that one only in the mode number ALE is given (the
        # shipped modes table is checked against ale-py game by game in the Atari suite's tests),
        # and making all 426 Atari tasks would load a ROM each (minutes of CI).
        game, flavored = task.split(":")[0], ":" in task
        if (game, flavored) in stepped_games:
            continue
        stepped_games.add((game, flavored))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # gymnasium's own deprecation notes (CartPole-v0)
            env = gym.make(env_id)
        try:
            obs, _ = env.reset(seed=0)
            assert env.observation_space.contains(obs), env_id
            obs, reward, terminated, truncated, _ = env.step(env.action_space.sample())
            assert env.observation_space.contains(obs) and isinstance(reward, float), env_id
        finally:
            env.close()


@pytest.mark.parametrize(
    "env_id",
    [
        "benchgen/atari_saber.breakout.m4d1-v1",
        "benchgen/atari_saber.pong-v1",
        "benchgen/gymnasium.CartPole_v1-v1",
        "benchgen/procgen.maze.test-v1",
    ],
)
def test_gymnasiums_env_checker_passes(first_party, env_id):
    api.register_gymnasium_ids(list(SUITES))
    env = gym.make(env_id).unwrapped
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            check_env(env, skip_render_check=True)
    finally:
        env.close()
