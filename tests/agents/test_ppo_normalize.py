"""The ppo agent's ``normalize`` option (the RL Zoo's ``normalize: true``): stable-baselines3's
VecNormalize while it learns, its statistics the agent's, saved in the checkpoint and used, frozen,
when it acts (how the RL Zoo evaluates)."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest
import torch
from stable_baselines3.common.vec_env import VecNormalize

from benchgen.agent import AgentEnvironment
from benchgen.errors import UsageError
from benchgen_agents.ppo.agent import PPOAgent
from benchgen_agents.ppo.config import PPOConfig
from benchgen_agents.ppo.normalization import RunningStats
from benchgen_agents.ppo.vec_env import BenchgenVecEnv
from tests.agents.agent_harness import Context, CountingEnv, environment_of

SMALL = dict(
    n_steps=16,
    batch_size=32,
    n_epochs=1,
    clip_reward=False,
    deterministic_eval=True,
    torch_threads=1,
    normalize=True,
)


def _cartpole(n: int = 4, seed: int = 0) -> CountingEnv:
    env = gym.make_vec(
        "CartPole-v1",
        num_envs=n,
        vectorization_mode="sync",
        vector_kwargs={"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP},
    )
    env.reset(seed=seed)
    return CountingEnv(env)


def _observations(count: int = 64) -> np.ndarray:
    return np.random.default_rng(0).normal(0.0, 2.0, (count, 4)).astype(np.float32)


def test_learning_rewards_and_observations_go_through_vecnormalize_with_the_agents_statistics():
    stats = RunningStats(gym.spaces.Box(-np.inf, np.inf, (4,), np.float32))
    vec = stats.wrap(BenchgenVecEnv(_cartpole()), gamma=0.99)
    assert isinstance(vec, VecNormalize) and vec.obs_rms is stats.obs and vec.ret_rms is stats.ret
    vec.reset()
    for _ in range(30):
        obs, rewards, _dones, _infos = vec.step(np.ones(4, dtype=np.int64))
    raw_obs, raw_rewards = vec.get_original_obs(), vec.get_original_reward()
    assert stats.obs.count > 100 and np.abs(stats.obs.mean).sum() > 0  # learned from the steps taken
    np.testing.assert_allclose(obs, stats.observations(raw_obs), rtol=1e-6)
    # CartPole pays 1 a step; the policy learns from it divided by the returns' running std
    assert set(raw_rewards.tolist()) == {1.0}
    np.testing.assert_allclose(rewards, 1.0 / np.sqrt(stats.ret.var + 1e-8), rtol=1e-5)


def test_frozen_normalization_is_vecnormalizes():
    """``act`` normalizes as SB3's VecNormalize.normalize_obs does with the same statistics
    (what the RL Zoo's evaluation env does with the saved vecnormalize.pkl)."""
    stats = RunningStats(gym.spaces.Box(-np.inf, np.inf, (4,), np.float32))
    stats.obs.update(_observations() * np.array([1.0, 10.0, 0.1, 100.0]) + 3.0)
    reference = VecNormalize(BenchgenVecEnv(_cartpole()), training=False)
    reference.obs_rms = stats.obs
    obs = _observations() * 50.0  # far out: clipped at +-10
    expected = reference.normalize_obs(obs)
    assert np.abs(expected).max() == 10.0
    np.testing.assert_array_equal(stats.observations(obs), expected)
    assert stats.observations(obs).dtype == np.float32


def test_statistics_travel_in_the_checkpoint_and_evaluation_uses_them(tmp_path):
    env = _cartpole()
    agent = PPOAgent(PPOConfig(**SMALL), environment_of(env))
    agent.learn(env, Context(env, budget_steps=256))
    agent.save(tmp_path)
    assert json.loads((tmp_path / "ppo_agent.json").read_text())["normalize"] is True

    loaded = PPOAgent(PPOConfig(**SMALL), environment_of(env))
    loaded.load(tmp_path)
    for key in ("mean", "var", "count"):
        np.testing.assert_array_equal(getattr(loaded.normalization.obs, key), getattr(agent.normalization.obs, key))
        np.testing.assert_array_equal(getattr(loaded.normalization.ret, key), getattr(agent.normalization.ret, key))
    obs = _observations()
    np.testing.assert_array_equal(loaded.act(obs), agent.act(obs))
    # the policy is fed normalized observations: the raw ones would be another input
    normalized = loaded.normalization.observations(obs)
    direct, _ = loaded._loaded.predict(normalized, deterministic=True)  # noqa: SLF001
    np.testing.assert_array_equal(loaded.act(obs), direct)
    raw, _ = loaded._loaded.predict(obs, deterministic=True)  # noqa: SLF001
    assert not np.array_equal(raw, direct)  # (so the check above tells the two apart)

    # a resume keeps learning the same statistics (they are not restarted)
    count = loaded.normalization.obs.count
    env2 = CountingEnv(_cartpole(seed=1).env, steps_done=256)
    loaded.learn(env2, Context(env2, budget_steps=320))
    assert loaded.normalization.obs.count > count
    assert loaded.model.get_vec_normalize_env().obs_rms is loaded.normalization.obs


def test_a_checkpoint_with_other_normalization_is_refused_with_what_to_set(tmp_path):
    env = _cartpole()
    agent = PPOAgent(PPOConfig(**SMALL), environment_of(env))
    agent.learn(env, Context(env, budget_steps=64))
    agent.save(tmp_path)
    plain = PPOAgent(PPOConfig(**{**SMALL, "normalize": False}), environment_of(env))
    with pytest.raises(UsageError, match="trained with normalize=true.*set normalize=true"):
        plain.load(tmp_path)

    tensors = torch.load(tmp_path / "ppo.pt", weights_only=True)
    tensors["normalize"]["obs_mean"] = torch.zeros(3, dtype=torch.float64)  # another observation size
    torch.save(tensors, tmp_path / "ppo.pt")
    with pytest.raises(UsageError, match="cannot be used here.*obs_mean has shape"):
        PPOAgent(PPOConfig(**SMALL), environment_of(env)).load(tmp_path)


def test_normalize_is_refused_where_it_has_no_meaning():
    for workers in ({"workers": 2}, {"virtual_workers": 4}):
        with pytest.raises(ValueError, match="normalize=false, or workers=0 and virtual_workers=0"):
            PPOConfig(normalize=True, **workers)
    frames = AgentEnvironment(gym.spaces.Box(0, 255, (4, 84, 84), np.uint8), gym.spaces.Discrete(3))
    with pytest.raises(UsageError, match="normalize=false, or policy=MlpPolicy"):
        PPOAgent(PPOConfig(normalize=True), frames)
