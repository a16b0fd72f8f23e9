"""The gymnasium suite in process: which ids are tasks, what its env records against gymnasium's own
environments stepped directly, the protocol, splits, references and the spaces joint envs need."""

from __future__ import annotations

import importlib.util

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.registration import EnvSpec

from benchgen.agent import AgentNeeds
from benchgen.errors import UsageError
from benchgen_gymnasium import catalog
from benchgen_gymnasium.env import GymnasiumVectorEnv, sub_seed
from benchgen_gymnasium.observations import ObservationCodec
from benchgen_gymnasium.suite import GymnasiumSuite


@pytest.fixture
def suite():
    return GymnasiumSuite()


@pytest.fixture
def fresh_catalog():
    """Probe the registry again before and after the test (it may change the registry)."""
    catalog.runnable.cache_clear()
    yield
    catalog.runnable.cache_clear()


def test_tasks_are_the_makeable_discrete_ids(suite):
    tasks = suite.tasks()
    for wanted in ("CartPole-v1", "Acrobot-v1", "MountainCar-v0", "FrozenLake-v1", "Taxi-v4", "Blackjack-v1"):
        assert wanted in tasks
    # registered and makeable here, but their actions are continuous
    for continuous in ("Pendulum-v1", "MountainCarContinuous-v0"):
        assert continuous in gym.registry
        assert continuous not in tasks
    # Box2D is an optional extra of gymnasium: LunarLander is a task exactly where it is installed
    assert ("LunarLander-v3" in tasks) == (importlib.util.find_spec("Box2D") is not None)
    assert tasks == suite.tasks()


def test_an_id_that_cannot_be_made_is_not_a_task(monkeypatch, fresh_catalog):
    broken = EnvSpec("BrokenForTest-v0", entry_point="gymnasium.envs.no_such_package.module:Env")
    monkeypatch.setitem(gym.registry, broken.id, broken)
    assert broken.id not in GymnasiumSuite().tasks()
    assert "CartPole-v1" in GymnasiumSuite().tasks()


def test_atari_ids_are_left_to_atari_saber(fresh_catalog):
    import ale_py

    gym.register_envs(ale_py)  # registers the ALE ids, as atari_saber's import does
    assert "ALE/Pong-v5" in gym.registry
    tasks = GymnasiumSuite().tasks()
    assert not [t for t in tasks if t.startswith("ALE/") or "NoFrameskip" in t]
    assert "CartPole-v1" in tasks


def _flat(space: gym.Space, obs) -> np.ndarray:
    return np.asarray(gym.spaces.flatten(space, obs), dtype=np.float32)


@pytest.mark.parametrize(
    "task, steps",
    [
        ("CartPole-v1", 600),
        ("Acrobot-v1", 1100),
        ("MountainCar-v0", 450),
        ("FrozenLake-v1", 300),
        ("Taxi-v4", 450),
        ("Blackjack-v1", 60),
    ],
)
def test_what_agents_see_and_the_suite_records_is_gymnasiums_own_rollout(suite, task, steps):
    """Two sub-environments against two ``gymnasium.make(task)`` stepped by hand with the same
    seeds and actions: observations (as agents get them), rewards, ends, final observations and
    every recorded episode's return, length and end reason agree exactly."""
    n, seed = 2, 11
    env = suite.agent_wrappers(suite.make_env([task] * n, seed=3), AgentNeeds())
    direct = [gym.make(task) for _ in range(n)]
    space = direct[0].observation_space
    rng = np.random.default_rng(5)
    try:
        obs, _ = env.reset(seed=seed)
        assert obs.dtype == np.float32 and obs.shape == (n, *env.single_observation_space.shape)
        for i, d in enumerate(direct):
            assert np.array_equal(obs[i], _flat(space, d.reset(seed=sub_seed(seed, i))[0]))
        returns, lengths, expected_ends, recorded = np.zeros(n), np.zeros(n, dtype=int), [], []
        for _ in range(steps):
            actions = rng.integers(0, env.single_action_space.n, size=n)
            obs, rewards, terminated, truncated, info = env.step(actions)
            recorded += env.unwrapped.pop_episode_ends()
            for i, d in enumerate(direct):
                d_obs, d_reward, d_term, d_trunc, _ = d.step(int(actions[i]))
                assert (rewards[i], terminated[i], truncated[i]) == (d_reward, d_term, d_trunc)
                returns[i] += d_reward
                lengths[i] += 1
                if d_term or d_trunc:
                    assert np.array_equal(info["final_obs"][i], _flat(space, d_obs))
                    expected_ends.append((i, returns[i], lengths[i], "terminated" if d_term else "truncated"))
                    returns[i], lengths[i] = 0.0, 0
                    d_obs = d.reset()[0]  # unseeded: the episode after continues the env's generator
                assert np.array_equal(obs[i], _flat(space, d_obs))
    finally:
        env.close()
        for d in direct:
            d.close()
    assert len(expected_ends) >= 2, "the rollout is too short to see episodes end"
    got = [(e.env_index, e.score, e.length_frames, e.end_reason) for e in recorded]
    assert got == expected_ends
    assert {e.task for e in recorded} == {task}
    if task == "MountainCar-v0":  # random play never reaches the flag: its TimeLimit ends every episode
        assert {(e.length_frames, e.end_reason) for e in recorded} == {(200, "truncated")}


class _EndsAtItsLimit(gym.Env):
    """Terminates on its third step, the step its time limit truncates it."""

    observation_space = gym.spaces.Box(0.0, 1.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(1, np.float32), {}

    def step(self, action):
        self.t += 1
        return np.zeros(1, np.float32), 1.0, self.t == 3, False, {}


def test_an_episode_that_terminates_as_its_time_limit_runs_out_counts_as_terminated(monkeypatch):
    spec = EnvSpec("EndsAtItsLimitForTest-v0", entry_point=_EndsAtItsLimit, max_episode_steps=3)
    monkeypatch.setitem(gym.registry, spec.id, spec)
    env = GymnasiumVectorEnv([spec.id], seed=0, codec=ObservationCodec(_EndsAtItsLimit.observation_space))
    try:
        env.reset()
        for _ in range(2):
            env.step(np.array([0]))
        _, _, terminated, truncated, _ = env.step(np.array([0]))
        assert terminated[0] and truncated[0]
        (end,) = env.pop_episode_ends()
        assert (end.score, end.length_frames, end.end_reason) == (3.0, 3, "terminated")
    finally:
        env.close()


def test_observations_reach_the_suite_env_as_uint8_and_agents_as_the_envs_values(suite):
    cartpole = suite.make_env(["CartPole-v1"], seed=0)
    lake = suite.make_env(["FrozenLake-v1"], seed=0)
    try:
        assert cartpole.single_observation_space == gym.spaces.Box(0, 255, (16,), np.uint8)  # 4 float32s
        assert lake.single_observation_space == gym.spaces.Box(0, 1, (16,), np.uint8)  # one-hot of 16 states
        agent_env = suite.agent_wrappers(cartpole, AgentNeeds(observations="native"))
        space = agent_env.single_observation_space
        assert space.dtype == np.float32 and space.shape == (4,)
        assert np.array_equal(space.high, gym.make("CartPole-v1").observation_space.high)
        lake_obs = suite.agent_wrappers(lake, AgentNeeds()).reset(seed=0)[0]
        assert lake_obs.dtype == np.float32 and lake_obs.tolist() == [[1.0] + [0.0] * 15]  # the start state, 0
    finally:
        cartpole.close()
        lake.close()


def test_one_env_plays_only_tasks_with_the_same_spaces(suite):
    with pytest.raises(UsageError) as err:
        suite.make_env(["CartPole-v1", "Acrobot-v1"], seed=0)
    assert "\n" not in str(err.value) and "same spaces" in str(err.value)
    env = suite.make_env(["CartPole-v0", "CartPole-v1"], seed=0)
    env.close()


def test_make_env_refuses_an_unknown_id_with_the_standard_error(suite):
    with pytest.raises(UsageError, match="unknown task of suite 'gymnasium' 'Acrobat-v1'; did you mean 'Acrobot-v1'"):
        suite.make_env(["Acrobat-v1"], seed=0)


def test_protocol_records_every_tasks_registration_and_gymnasiums_version(suite):
    protocol = suite.protocol()
    assert protocol["version"] == suite.version
    assert protocol["gymnasium_version"] == gym.__version__
    assert sorted(protocol["envs"]) == sorted(suite.tasks())
    for task, facts in protocol["envs"].items():
        spec = gym.spec(task)
        assert facts["spec_version"] == spec.version
        assert facts["max_episode_steps"] == spec.max_episode_steps
        assert facts["kwargs"] == dict(spec.kwargs)
        assert facts["entry_point"] == spec.entry_point
    assert protocol["envs"]["CartPole-v1"]["max_episode_steps"] == 500
    assert protocol["envs"]["FrozenLake8x8-v1"]["kwargs"] == {"map_name": "8x8"}
    assert protocol["envs"]["Blackjack-v1"]["max_episode_steps"] is None
    assert protocol["envs"]["Taxi-v4"]["observation"] == "one_hot"


def test_splits_hold_the_newest_version_of_each_environment(suite):
    splits = {s.name: s for s in suite.splits()}
    assert splits["classic_control"].train == ("CartPole-v1", "MountainCar-v0", "Acrobot-v1")
    assert "CartPole-v0" not in splits["toy_text"].train
    assert {"FrozenLake-v1", "FrozenLake8x8-v1", "Taxi-v4", "Blackjack-v1"} <= set(splits["toy_text"].train)
    assert suite.default_split in splits


def test_the_reference_table_is_the_registrys_solved_threshold(suite):
    (table,) = suite.reference_scores()
    assert table.name == "reward_threshold"
    assert table.scores["CartPole-v1"] == 475.0 == gym.spec("CartPole-v1").reward_threshold
    assert table.scores["Acrobot-v1"] == -100.0
    assert "Blackjack-v1" not in table.scores  # the registry gives it no threshold
    assert suite.random_scores() == {} and suite.scorer() is None
