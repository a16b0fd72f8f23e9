"""The expected-value head (DQN's): the n-step TD target with DQN's target max or the double-Q
bootstrap action, the Huber loss of the TD error and its clipped gradient, greedy acting."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

from benchgen.agent import AgentEnvironment
from benchgen_agents.dqn import DQNConfig, make_agent


def dqn(**overrides):
    cfg = dict(
        hidden_size=16,
        mlp_hidden_size=16,
        replay_capacity=500,
        frames_per_step=1,
        learning_starts_frames=32,
        device="cpu",
        torch_threads=1,
    )
    cfg.update(overrides)
    spaces = AgentEnvironment(gym.spaces.Box(-1, 1, (3,), np.float32), gym.spaces.Discrete(3))
    return make_agent(DQNConfig(**cfg), spaces)


class FixedQ(torch.nn.Module):
    """Q(x, a) = values[a] for every observation."""

    def __init__(self, values):
        super().__init__()
        self.values = torch.tensor(values)

    def forward(self, obs):
        return self.values.expand(len(obs), len(self.values)).clone()

    def reset_noise(self, generator):
        pass

    def set_noise(self, enabled):
        pass


def test_dqn_defaults_bootstrap_from_the_target_max():
    assert DQNConfig().double_q is False and DQNConfig().n_step == 1


@pytest.mark.parametrize("double_q, bootstrap", [(True, 5.0), (False, 10.0)])
def test_double_q_selects_with_online_and_evaluates_with_target(double_q, bootstrap):
    agent = dqn(double_q=double_q)
    agent.online = FixedQ([1.0, 0.0, 0.5])  # the online net prefers action 0 ...
    agent.target = FixedQ([5.0, 10.0, 7.0])  # ... the target net action 1
    targets = agent.td_targets(torch.zeros(3, 3), torch.tensor([1.0, 0.0, 2.0]), torch.tensor([0.5, 0.0, 0.25]))
    # double Q: Q_target(x', argmax_a Q_online(x', a)) = Q_target(x', 0) = 5; DQN: max_a Q_target = 10
    expected = torch.tensor([1 + 0.5 * bootstrap, 0.0, 2 + 0.25 * bootstrap])
    torch.testing.assert_close(targets, expected)


@pytest.mark.parametrize("double_q, losses", [(True, [2.0, 0.125, 0.405]), (False, [4.5, 0.125, 0.405])])
def test_loss_is_huber_with_threshold_1_of_the_td_error(double_q, losses):
    agent = dqn(double_q=double_q)
    agent.online = FixedQ([1.0, 0.0, 0.5])
    agent.target = FixedQ([5.0, 10.0, 7.0])
    batch = {
        "obs": np.zeros((3, 3), np.float32),
        "actions": np.array([0, 2, 1]),
        "returns": np.array([1.0, 0.0, 0.9], np.float32),
        "discounts": np.array([0.5, 0.0, 0.0], np.float32),
        "next_obs": np.zeros((3, 3), np.float32),
    }
    loss, q_taken = agent.sample_losses(batch)
    # sample 0: q = 1, target 1 + 0.5 * (5 | 10) = 3.5 | 6: |delta| 2.5 | 5 > 1 -> 2.5 - 0.5 | 5 - 0.5
    # sample 1: q = 0.5, terminal target 0: delta -0.5 -> 0.5 * 0.25 = 0.125
    # sample 2: q = 0, terminal target 0.9: delta 0.9 -> 0.5 * 0.81 = 0.405
    torch.testing.assert_close(loss, torch.tensor(losses), atol=1e-6, rtol=0)
    torch.testing.assert_close(q_taken, torch.tensor([1.0, 0.5, 0.0]))


def test_huber_gradient_is_clipped_to_one():
    agent = dqn()
    q = torch.nn.Parameter(torch.tensor([[0.0, 0.0, 0.0]]))

    class Learnable(FixedQ):
        def forward(self, obs):
            return q.expand(len(obs), 3)

    agent.online = Learnable([0.0, 0.0, 0.0])
    agent.target = FixedQ([0.0, 0.0, 0.0])
    batch = {
        "obs": np.zeros((3, 3), np.float32),
        "actions": np.array([0, 1, 2]),
        "returns": np.array([40.0, -40.0, 0.5], np.float32),  # terminal: targets 40, -40, 0.5
        "discounts": np.zeros(3, np.float32),
        "next_obs": np.zeros((3, 3), np.float32),
    }
    agent.sample_losses(batch)[0].sum().backward()
    # d/dq Huber(target - q): -1 for delta = 40, +1 for delta = -40, -(0.5) inside the threshold
    torch.testing.assert_close(q.grad, torch.tensor([[-1.0, 1.0, -0.5]]))


def test_greedy_actions_are_the_argmax_of_q():
    agent = dqn()
    agent.online = FixedQ([0.0, 3.0, -1.0])
    assert agent.act(np.zeros((4, 3), np.float32)).tolist() == [1, 1, 1, 1]
    assert agent.act(np.zeros(3, np.float32)) == 1  # a single observation gives a single action
