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
#: about how many games (tasks before any ``:`` flavor) of a suite are made and stepped
MADE_GAMES = 12
#: of those, how many have a flavored task made and stepped too (the first ones in task order)
FLAVORED_GAMES = 3


@pytest.fixture
def first_party(monkeypatch):
    monkeypatch.delenv("BENCHGEN_PLUGINS", raising=False)  # the installed plugins only
    from benchgen import registry

    registry.reset_registry()
    yield


@pytest.mark.parametrize("suite", SUITES)
def test_every_task_is_a_gymnasium_id_and_a_spread_of_them_is_made_and_stepped(first_party, suite):
    from benchgen.registry import get_registry

    tasks = get_registry().suite(suite).tasks()
    ids = api.register_gymnasium_ids([suite])
    assert len(ids) == len(set(ids)) == len(tasks)
    games = list(dict.fromkeys(task.split(":")[0] for task in tasks))
    made_games = set(games[:: max(1, len(games) // MADE_GAMES)])
    stepped_games: set[tuple[str, bool]] = set()
    for env_id, task in zip(ids, tasks, strict=True):
        assert ":" not in env_id
        namespace, name, version = parse_env_id(env_id)
        assert namespace == "benchgen" and "-v" not in name and version is not None
        assert api.gymnasium_task(env_id) == (suite, task)
        # Made and stepped through its id: a spread of MADE_GAMES games of each suite (every one
        # where it has fewer) and a mode/difficulty flavor of the first FLAVORED_GAMES. Every id's
        # registration is checked above; what making one adds is the same for every game, while
        # each made Atari task loads its ROM and resets it (half a second: all 426 tasks are minutes
        # of CI, the 57 games 20 s). Every game's ROM is loaded by ale-py in the Atari suite's
        # modes-table test, and the flavor backend checked frame for frame against ale-py's env.
        game, flavored = task.split(":")[0], ":" in task
        if (game, flavored) in stepped_games or game not in made_games:
            continue
        if flavored and sum(f for _, f in stepped_games) >= FLAVORED_GAMES:
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
