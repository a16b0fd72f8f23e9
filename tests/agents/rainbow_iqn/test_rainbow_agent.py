"""The agent: space checks, double-Q bootstrap action, greedy acting, exact save/load resume."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

from benchgen.agent import AgentEnvironment
from benchgen.errors import UsageError
from benchgen_agents.rainbow_iqn import RainbowIQNConfig, make_agent
from tests.agents.agent_harness import Context, CountingEnv

SAME_STEP = {"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}


def tiny_config(**overrides) -> RainbowIQNConfig:
    """Small nets and a short schedule (agent steps = frames here: frames_per_step=1)."""
    base = dict(
        hidden_size=32,
        mlp_hidden_size=32,
        num_tau_samples=8,
        num_tau_prime_samples=8,
        num_quantile_samples=4,
        cosine_embedding_dim=16,
        replay_capacity=2000,
        frames_per_step=1,
        learning_starts_frames=64,
        target_update_frames=50,
        update_period_steps=2,
        batch_size=16,
        device="cpu",
        torch_threads=1,
        log_every_updates=10,
    )
    base.update(overrides)
    return RainbowIQNConfig(**base)


def cartpole(num_envs=2, steps_done=0):
    return RecordingEnv(
        gym.make_vec("CartPole-v1", num_envs, vectorization_mode="sync", vector_kwargs=SAME_STEP), steps_done
    )


class RecordingEnv(CountingEnv):
    """Also keeps every batch of actions."""

    def __init__(self, env, steps_done=0):
        super().__init__(env, steps_done)
        self.actions: list[list[int]] = []

    def step(self, actions):
        self.actions.append(np.asarray(actions).tolist())
        return super().step(actions)


# -- spaces ---------------------------------------------------------------------------------------
BOX_IMAGES = gym.spaces.Box(0, 255, (4, 84, 84), np.uint8)


@pytest.mark.parametrize(
    "obs_space, act_space, match",
    [
        (BOX_IMAGES, gym.spaces.Box(-1, 1, (2,)), "Discrete action space"),
        (gym.spaces.Box(0, 255, (84, 84, 4), np.uint8), gym.spaces.Discrete(4), "channel-first"),
        (gym.spaces.Box(0, 255, (3, 84, 84), np.uint8), gym.spaces.Discrete(4), "frame_stack"),
        (gym.spaces.Box(0, 255, (4, 20, 20), np.uint8), gym.spaces.Discrete(4), "36x36"),
        (gym.spaces.Box(0, 10, (5,), np.int64), gym.spaces.Discrete(4), "flat float vector"),
        (gym.spaces.Box(0, 1, (4, 4), np.float32), gym.spaces.Discrete(4), "flat float vector"),
        (gym.spaces.Dict({"a": BOX_IMAGES}), gym.spaces.Discrete(4), "flat float vector"),
    ],
)
def test_unsupported_spaces_are_usage_errors_before_training(obs_space, act_space, match):
    with pytest.raises(UsageError, match=match):
        make_agent(tiny_config(), AgentEnvironment(obs_space, act_space))


def test_pixel_and_vector_torsos_are_chosen_from_the_space():
    pixels = make_agent(tiny_config(), AgentEnvironment(BOX_IMAGES, gym.spaces.Discrete(18)))
    assert isinstance(pixels.online.torso.body[0], torch.nn.Conv2d)
    assert pixels.online.torso(torch.zeros(1, 4, 84, 84)).shape == (1, 3136)  # Nature CNN
    vector = make_agent(
        tiny_config(), AgentEnvironment(gym.spaces.Box(-1, 1, (4,), np.float32), gym.spaces.Discrete(2))
    )
    assert isinstance(vector.online.torso.body[0], torch.nn.Linear)
    out = pixels.online(torch.zeros(3, 4, 84, 84, dtype=torch.uint8), torch.rand(3, 5))
    assert out.shape == (3, 5, 18)


def test_env_with_other_frames_per_step_or_autoreset_is_refused():
    agent = make_agent(tiny_config(), AgentEnvironment(gym.spaces.Box(-5, 5, (4,), np.float32), gym.spaces.Discrete(2)))
    env = cartpole()
    env.frames_per_step = 4  # as a suite env would declare it
    with pytest.raises(UsageError, match="frames_per_step=4"):
        agent.learn(env, Context(env, 10))
    next_step = CountingEnv(gym.make_vec("CartPole-v1", 1, vectorization_mode="sync"))
    with pytest.raises(UsageError, match="SAME_STEP"):
        agent.learn(next_step, Context(next_step, 10))


# -- double Q -------------------------------------------------------------------------------------
class StubNet(torch.nn.Module):
    """Quantiles equal to ``values[a]`` for every sample and tau."""

    def __init__(self, values):
        super().__init__()
        self.values = torch.tensor(values)

    def forward(self, obs, taus):
        return self.values.expand(len(obs), taus.shape[1], len(self.values)).clone()

    def reset_noise(self, generator):
        pass


@pytest.mark.parametrize("double_q, bootstrap", [(True, 5.0), (False, 10.0)])
def test_double_q_selects_with_online_and_evaluates_with_target(double_q, bootstrap):
    agent = make_agent(
        tiny_config(double_q=double_q),
        AgentEnvironment(gym.spaces.Box(-1, 1, (4,), np.float32), gym.spaces.Discrete(2)),
    )
    agent.online = StubNet([1.0, 0.0])  # the online net prefers action 0 ...
    agent.target = StubNet([5.0, 10.0])  # ... the target net action 1
    targets = agent.target_quantiles(torch.zeros(3, 4), torch.tensor([1.0, 0.0, 2.0]), torch.tensor([0.5, 0.0, 0.25]))
    assert targets.shape == (3, 8)  # N' target quantiles per sample
    expected = torch.tensor([1 + 0.5 * bootstrap, 0.0, 2 + 0.25 * bootstrap])
    torch.testing.assert_close(targets, expected[:, None].expand(3, 8))


def test_bootstrap_action_uses_the_mean_over_quantiles():
    class Spread(StubNet):  # action 1 has the highest single quantile but the lower mean
        def forward(self, obs, taus):
            q0 = torch.zeros_like(taus)
            q1 = torch.where(taus > 0.9, torch.full_like(taus, 100.0), torch.full_like(taus, -50.0))
            return torch.stack([q0, q1], dim=-1)

    agent = make_agent(
        tiny_config(num_quantile_samples=256),
        AgentEnvironment(gym.spaces.Box(-1, 1, (4,), np.float32), gym.spaces.Discrete(2)),
    )
    agent.online = Spread([0.0, 0.0])
    agent.target = StubNet([7.0, -7.0])
    targets = agent.target_quantiles(torch.zeros(4, 4), torch.zeros(4), torch.ones(4))
    assert torch.all(targets == 7.0)


# -- acting ---------------------------------------------------------------------------------------
def test_greedy_acting_ignores_noise_and_restores_it():
    agent = make_agent(
        tiny_config(noisy_sigma0=5.0), AgentEnvironment(gym.spaces.Box(-1, 1, (4,), np.float32), gym.spaces.Discrete(3))
    )
    obs = np.random.default_rng(0).normal(size=(64, 4)).astype(np.float32)
    state = agent.generator.get_state()
    first = agent.act(obs, greedy=True)
    agent.online.reset_noise(agent.generator)  # different noise must not change greedy actions
    agent.generator.set_state(state)  # same tau draws
    assert np.array_equal(agent.act(obs, greedy=True), first)
    assert all(layer.noise_enabled for layer in agent.online.streams.noisy_layers)
    assert agent.act(obs[0]).shape == ()  # a single observation gives a single action


def test_bfloat16_precision_learns_with_float32_losses():
    agent = make_agent(
        tiny_config(precision="bfloat16"),
        AgentEnvironment(gym.spaces.Box(-5, 5, (4,), np.float32), gym.spaces.Discrete(2)),
    )
    env = cartpole()
    ctx = Context(env, 200, seed=0)
    agent.learn(env, ctx)
    assert agent.counters["updates"] > 0
    assert all(np.isfinite(v) for v in ctx.scalars["rainbow_iqn/loss"])
    with agent._autocast():
        out = agent.online(torch.zeros(2, 4), torch.rand(2, 3))
    assert out.dtype == torch.float32


# -- save / load ----------------------------------------------------------------------------------
def params(agent):
    return [p.detach().clone() for p in (*agent.online.parameters(), *agent.target.parameters())]


def test_save_load_round_trip_continues_identically(tmp_path):
    spaces = (gym.spaces.Box(-5, 5, (4,), np.float32), gym.spaces.Discrete(2))
    cfg = tiny_config(save_replay=True)
    first = make_agent(cfg, AgentEnvironment(*spaces))
    env = cartpole()
    first.learn(env, Context(env, 300, seed=3))
    assert first.counters["updates"] > 50
    first.save(tmp_path)

    env_a = cartpole(steps_done=300)
    first.learn(env_a, Context(env_a, 600, seed=3))  # the original continues...
    second = make_agent(cfg, AgentEnvironment(*spaces))
    second.load(tmp_path)
    env_b = cartpole(steps_done=300)
    second.learn(env_b, Context(env_b, 600, seed=3))  # ... and so does its restored copy

    assert env_a.actions == env_b.actions
    assert first.counters == second.counters
    for a, b in zip(params(first), params(second)):
        assert torch.equal(a, b)
    np.testing.assert_array_equal(first.replay.tree.nodes, second.replay.tree.nodes)
    assert first.np_rng.random() == second.np_rng.random()


def test_without_saved_replay_learning_waits_for_a_refill(tmp_path):
    spaces = (gym.spaces.Box(-5, 5, (4,), np.float32), gym.spaces.Discrete(2))
    agent = make_agent(tiny_config(), AgentEnvironment(*spaces))
    env = cartpole()
    agent.learn(env, Context(env, 200, seed=1))
    agent.save(tmp_path)
    assert not (tmp_path / "replay").exists()
    restored = make_agent(tiny_config(), AgentEnvironment(*spaces))
    restored.load(tmp_path)
    assert restored.replay is None and restored.counters == agent.counters
    updates = restored.counters["updates"]
    env = cartpole(steps_done=200)
    restored.learn(env, Context(env, 250, seed=1))  # 50 steps < learning_starts (64)
    assert restored.counters["updates"] == updates
    with pytest.raises(UsageError, match="no rainbow_iqn checkpoint"):
        restored.load(tmp_path / "elsewhere")
