"""What is particular to minatar: the tasks are the package's games, the protocol's settings reach
the games, the env plays exactly what ``minatar.Environment`` plays, episodes are recorded by the
protocol, and the agent-side answers fit the shared agents."""

from __future__ import annotations

import csv
import inspect
import math
import pkgutil

import numpy as np
import pytest

import benchgen_minatar
from benchgen.agent import AgentNeeds
from benchgen.testing import checks
from benchgen_minatar import SUITE, env


def _package_game(game: str, seed: int):
    """``minatar.Environment`` as the package's own examples use it, seeded as the suite seeds
    sub-environment 0 for ``reset(seed=seed)``."""
    from minatar import Environment

    game_env = Environment(game)  # the package's defaults: the protocol must equal them
    game_env.seed(env.game_seed(seed, 0))
    game_env.reset()
    return game_env


def _grid(state: np.ndarray) -> np.ndarray:
    out = np.zeros((env.OBSERVATION_CHANNELS, env.GRID, env.GRID), np.uint8)
    out[: state.shape[-1]] = np.moveaxis(state, -1, 0)
    return out


def test_tasks_channels_and_actions_are_the_packages():
    import minatar.environments
    from minatar import Environment

    games = sorted(m.name for m in pkgutil.iter_modules(minatar.environments.__path__))
    assert SUITE.tasks() == games == list(env.GAMES)
    for game in games:
        game_env = Environment(game)
        assert game_env.state_shape() == [env.GRID, env.GRID, env.GAME_CHANNELS[game]]
        assert game_env.num_actions() == env.NUM_ACTIONS == len(env.ACTION_NAMES)
        assert game_env.env.action_map == ["n", "l", "u", "r", "d", "f"]


def test_protocol_settings_are_the_packages_defaults_and_reach_the_games():
    from minatar import Environment

    defaults = inspect.signature(Environment).parameters
    assert defaults["sticky_action_prob"].default == env.STICKY_ACTION_PROBABILITY == 0.1
    assert defaults["difficulty_ramping"].default is env.DIFFICULTY_RAMPING is True
    protocol = SUITE.protocol()
    assert protocol["minatar_version"] == "1.0.15"
    assert protocol["sticky_action_probability"] == 0.1 and protocol["difficulty_ramping"] is True
    assert protocol["frames_per_step"] == SUITE.frames_per_step == 1
    vec = SUITE.make_env(list(env.GAMES), seed=0)
    try:
        for game_env in vec._games:
            assert game_env.sticky_action_prob == 0.1
            if hasattr(game_env.env, "ramping"):  # asterix, seaquest, space_invaders ramp
                assert game_env.env.ramping is True
    finally:
        vec.close()


@pytest.mark.parametrize("game", env.GAMES)
def test_the_env_plays_what_minatar_plays(game):
    """Same seed, same actions: the suite env's observations, rewards and ends are the package's
    own, across an episode boundary (the package's reset keeps its generator)."""
    seed, steps = 7, 3000 if game == "freeway" else 600
    rng = np.random.default_rng(0)
    actions = rng.integers(0, env.NUM_ACTIONS, size=steps)
    reference = _package_game(game, seed)
    vec = SUITE.make_env([game], seed=123)
    try:
        obs, _ = vec.reset(seed=seed)
        assert np.array_equal(obs[0], _grid(reference.state()))
        assert obs.dtype == np.uint8 and set(np.unique(obs)) <= {0, 1}
        assert not obs[0, env.GAME_CHANNELS[game] :].any()  # zero padding
        ends = 0
        for action in actions:
            obs, reward, terminated, truncated, info = vec.step(np.array([action]))
            r, done = reference.act(int(action))
            assert reward[0] == r and terminated[0] == done and not truncated[0]
            if done:
                ends += 1
                assert np.array_equal(info["final_obs"][0], _grid(reference.state()))
                reference.reset()
            assert np.array_equal(obs[0], _grid(reference.state()))
        assert ends >= 1, f"no {game} episode ended in {steps} random frames"
    finally:
        vec.close()


def test_episodes_are_recorded_with_their_end_reason_and_ramp_level():
    vec = SUITE.make_env(["freeway", "breakout", "asterix"], seed=0)
    rng = np.random.default_rng(0)
    ends, returns = [], np.zeros(3)
    try:
        vec.reset(seed=0)
        for _ in range(2501):
            _, reward, _, _, _ = vec.step(rng.integers(0, env.NUM_ACTIONS, size=3))
            returns += reward
            ends += vec.pop_episode_ends()
    finally:
        vec.close()
    freeway = [e for e in ends if e.task == "freeway"]
    assert len(freeway) == 1 and freeway[0].end_reason == "time_limit"
    assert freeway[0].length_frames == 2501  # the game's 2500-frame timer runs out after frame 2501
    assert freeway[0].score == returns[0] and freeway[0].extras == {"ramp_level": None}
    breakout = [e for e in ends if e.task == "breakout"]
    assert breakout and all(e.end_reason == "game_over" and e.extras["ramp_level"] is None for e in breakout)
    asterix = [e for e in ends if e.task == "asterix"]
    assert asterix and all(isinstance(e.extras["ramp_level"], int) for e in asterix)
    assert sum(e.length_frames for e in breakout) <= 2501


def test_seeds_give_distinct_games_to_units_and_sub_environments():
    seeds = {env.game_seed(s, i) for s in range(4) for i in range(4)}
    assert len(seeds) == 16


def test_frames_need_is_a_flat_vector_the_shared_agents_take():
    from benchgen_agents.ppo.agent import choose_policy
    from benchgen_agents.value_based.agent import check_spaces

    vec = SUITE.make_env(["breakout", "seaquest"], seed=0)
    wrapped = SUITE.agent_wrappers(vec, AgentNeeds())
    space = wrapped.single_observation_space
    assert space.shape == (env.OBSERVATION_CHANNELS * env.GRID * env.GRID,) and space.dtype == np.float32
    assert choose_policy("auto", space) == "MlpPolicy"
    assert check_spaces("rainbow_iqn", space, wrapped.single_action_space, frame_stack=4)[1] == np.float32
    raw = SUITE.make_env(["breakout", "seaquest"], seed=0)
    try:
        obs, _ = wrapped.reset(seed=3)
        raw_obs, _ = raw.reset(seed=3)
        assert obs.dtype == np.float32 and np.array_equal(obs, raw_obs.reshape(2, -1).astype(np.float32))
        for _ in range(300):
            actions = np.array([3, 5])
            obs, *_, info = wrapped.step(actions)
            raw_obs, *_, raw_info = raw.step(actions)
            assert np.array_equal(obs, raw_obs.reshape(2, -1))
            if "final_obs" in raw_info:
                assert np.array_equal(info["final_obs"], raw_info["final_obs"].reshape(2, -1))
    finally:
        wrapped.close()
        raw.close()
    native = SUITE.agent_wrappers(SUITE.make_env(["breakout"], seed=0), AgentNeeds(observations="native"))
    assert native.single_observation_space.shape == (10, 10, 10) and native.single_observation_space.dtype == np.uint8
    native.close()
    assert SUITE.action_semantics() is None  # no jump: agents that need named actions are refused


def test_splits():
    splits = {s.name: s for s in SUITE.splits()}
    assert set(splits) == {"all", "holdout_space_invaders"}
    assert splits["all"].train == tuple(env.GAMES) and splits["all"].test == ()
    holdout = splits["holdout_space_invaders"]
    assert holdout.test == ("space_invaders",) and set(holdout.train) | set(holdout.test) == set(env.GAMES)
    assert SUITE.default_split == "all" and SUITE.default_joint_split == "holdout_space_invaders"


def test_random_scores_are_shipped_with_how_they_were_made():
    scores = SUITE.random_scores()
    assert set(scores) == set(env.GAMES) and all(math.isfinite(v) and v >= 0 for v in scores.values())
    (path,) = SUITE.package_files("data", "random_scores.csv")
    text = path.read_text()
    assert "benchgen run minatar random --split all" in text and "minatar 1.0.15" in text
    rows = list(csv.DictReader(line for line in text.splitlines() if not line.startswith("#")))
    assert all(int(r["episodes"]) >= 100 for r in rows)
    # the MinAtar README: examples/random_play.py, 1000 episodes on Breakout, "Avg Return: 0.5+/-0.023"
    assert abs(scores["breakout"] - 0.5) < 0.1


def test_runs_are_scored_raw():
    registry = checks.build_registry(benchgen_minatar)
    assert registry.declared_scorer(SUITE) is None
    result = registry.scorer(SUITE).score({"breakout": 10.0, "seaquest": 2.0})
    assert result["baseline"] == "raw" and result["per_task"] == {"breakout": 10.0, "seaquest": 2.0}
