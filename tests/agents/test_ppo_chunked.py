"""The ppo agent's chunked update (``benchgen_agents.ppo.chunked``) is stable-baselines3's update
up to the order of float sums."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from stable_baselines3.common.env_util import make_vec_env

from benchgen_agents.ppo.chunked import ChunkedPPO


def _learned(chunk: int, **settings) -> tuple[list[np.ndarray], dict]:
    env = make_vec_env("CartPole-v1", n_envs=4, seed=0)
    model = ChunkedPPO(
        "MlpPolicy", env, n_steps=32, batch_size=64, n_epochs=2, seed=0, device="cpu", update_chunk=chunk, **settings
    )
    model.learn(total_timesteps=256)
    logged = dict(model.logger.name_to_value)
    return [p.detach().numpy().copy() for p in model.policy.parameters()], logged


@pytest.mark.parametrize("settings", [{}, {"clip_range_vf": 0.2}])
def test_chunks_give_the_same_update_and_statistics_as_one_pass(settings):
    torch.set_num_threads(1)
    whole, whole_log = _learned(0, **settings)
    chunked, chunked_log = _learned(16, **settings)
    for a, b in zip(whole, chunked, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    for key in (
        "train/policy_gradient_loss",
        "train/value_loss",
        "train/entropy_loss",
        "train/approx_kl",
        "train/clip_fraction",
    ):
        assert chunked_log[key] == pytest.approx(whole_log[key], rel=1e-4, abs=1e-6), key


def test_the_agent_chunks_on_the_cpu_unless_told_otherwise():
    import gymnasium as gym

    from benchgen.agent import AgentEnvironment
    from benchgen_agents.ppo import PPOConfig, make_agent

    environment = AgentEnvironment(gym.spaces.Box(-1, 1, (4,), np.float32), gym.spaces.Discrete(2))
    assert make_agent(PPOConfig(device="cpu"), environment)._update_chunk() == 256
    assert make_agent(PPOConfig(device="cpu", update_chunk=0), environment)._update_chunk() == 0
    with pytest.raises(ValueError, match="update_chunk"):
        PPOConfig(update_chunk=-1)
