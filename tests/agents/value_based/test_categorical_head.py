"""The C51 head (Rainbow's): the projection of the shifted target distribution onto the atoms,
checked against hand-computed cases; the cross-entropy loss; and the double-Q bootstrap action.

Every hand case uses 5 atoms on [-2, 2]: z = [-2, -1, 0, 1, 2], delta_z = 1, so a shifted atom
Tz gives ``1 - |Tz - z_i|`` of its probability to each of its two neighbours z_i."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
import torch

from benchgen.agent import AgentEnvironment
from benchgen_agents.rainbow import RainbowConfig, make_agent
from benchgen_agents.rainbow.network import atoms, project_distribution

SUPPORT = [-2.0, -1.0, 0.0, 1.0, 2.0]
P = [0.1, 0.2, 0.3, 0.25, 0.15]  # the next state's distribution over SUPPORT


def project(probs, returns, discounts, support=SUPPORT):
    return project_distribution(
        torch.tensor(probs, dtype=torch.float32),
        torch.tensor(returns, dtype=torch.float32),
        torch.tensor(discounts, dtype=torch.float32),
        torch.tensor(support, dtype=torch.float32),
    )


def test_atoms_are_evenly_spaced_from_v_min_to_v_max():
    assert atoms(-2.0, 2.0, 5).tolist() == SUPPORT
    z = atoms(-10.0, 10.0, 51)
    assert len(z) == 51 and z[0].item() == -10.0 and z[-1].item() == 10.0
    assert z[26].item() == pytest.approx(0.4)  # -10 + 26 * 20 / 50


def test_projection_between_atoms_and_clipped_at_both_bounds():
    m = project([P, P], [1.5, -1.5], [0.75, 0.75])
    # Row 0: Tz = 1.5 + 0.75 z = [0, 0.75, 1.5, 2.25 -> 2, 3 -> 2]
    #   z=-2 -> 0     : all 0.1 on z=0
    #   z=-1 -> 0.75  : 0.25 * 0.2 = 0.05 on z=0, 0.75 * 0.2 = 0.15 on z=1
    #   z= 0 -> 1.5   : 0.5 * 0.3 = 0.15 on z=1 and on z=2
    #   z= 1, 2 -> 2  : 0.25 + 0.15 = 0.4 on z=2 (clipped at v_max)
    #   m = [0, 0, 0.1 + 0.05, 0.15 + 0.15, 0.15 + 0.4] = [0, 0, 0.15, 0.30, 0.55]
    # Row 1: Tz = -1.5 + 0.75 z = [-3 -> -2, -2.25 -> -2, -1.5, -0.75, 0]
    #   z=-2, -1 -> -2 : 0.1 + 0.2 = 0.3 on z=-2 (clipped at v_min)
    #   z= 0 -> -1.5   : 0.15 on z=-2 and on z=-1
    #   z= 1 -> -0.75  : 0.75 * 0.25 = 0.1875 on z=-1, 0.25 * 0.25 = 0.0625 on z=0
    #   z= 2 -> 0      : 0.15 on z=0
    #   m = [0.45, 0.3375, 0.2125, 0, 0]
    expected = torch.tensor([[0.0, 0.0, 0.15, 0.30, 0.55], [0.45, 0.3375, 0.2125, 0.0, 0.0]])
    torch.testing.assert_close(m, expected, atol=1e-6, rtol=0)
    torch.testing.assert_close(m.sum(dim=1), torch.ones(2), atol=1e-6, rtol=0)


def test_terminal_transitions_put_all_mass_around_the_return():
    # discount 0: every Tz_j = R, whatever the next state's distribution
    m = project([P, P, P, [0.0, 0.0, 0.0, 0.0, 1.0]], [0.3, 1.0, 5.0, -1.25], [0.0, 0.0, 0.0, 0.0])
    expected = torch.tensor(
        [
            [0.0, 0.0, 0.7, 0.3, 0.0],  # R = 0.3: 1 - 0.3 on z=0, 0.3 on z=1
            [0.0, 0.0, 0.0, 1.0, 0.0],  # R = 1 is an atom: all on it
            [0.0, 0.0, 0.0, 0.0, 1.0],  # R = 5 clipped to v_max
            [0.25, 0.75, 0.0, 0.0, 0.0],  # R = -1.25: 0.25 on z=-2, 0.75 on z=-1
        ]
    )
    torch.testing.assert_close(m, expected, atol=1e-6, rtol=0)


def test_shifted_atoms_landing_exactly_on_atoms_conserve_mass():
    m = project([P, P, P], [1.0, -2.0, 0.0], [1.0, 1.0, 1.0])
    expected = torch.tensor(
        [
            [0.0, 0.1, 0.2, 0.3, 0.25 + 0.15],  # Tz = z + 1 = [-1, 0, 1, 2, 3 -> 2]
            [0.1 + 0.2 + 0.3, 0.25, 0.15, 0.0, 0.0],  # Tz = z - 2 = [-4 -> -2, -3 -> -2, -2, -1, 0]
            P,  # Tz = z: the distribution itself
        ]
    )
    torch.testing.assert_close(m, expected, atol=1e-6, rtol=0)
    torch.testing.assert_close(m.sum(dim=1), torch.ones(3), atol=1e-6, rtol=0)


def test_projection_conserves_mass_and_the_clipped_mean_on_rainbows_support():
    # 51 atoms on [-10, 10]: mass is conserved and, since the projection splits each Tz_j between
    # its neighbours in proportion to closeness, sum_i z_i m_i = sum_j p_j clip(R + gamma z_j).
    gen = torch.Generator().manual_seed(0)
    probs = torch.softmax(3 * torch.randn(256, 51, generator=gen), dim=1)
    returns = 30 * torch.rand(256, generator=gen) - 15
    discounts = torch.rand(256, generator=gen)
    discounts[:32] = 0.0  # terminal
    discounts[32:64] = 0.99**3
    z = torch.linspace(-10, 10, 51)
    m = project_distribution(probs, returns, discounts, z)
    assert torch.all(m >= 0)
    torch.testing.assert_close(m.sum(dim=1), torch.ones(256), atol=1e-5, rtol=0)
    clipped_mean = (probs * (returns[:, None] + discounts[:, None] * z).clamp(-10, 10)).sum(dim=1)
    torch.testing.assert_close((m * z).sum(dim=1), clipped_mean, atol=1e-4, rtol=0)


# -- the head inside the agent ----------------------------------------------------------------------
def rainbow(**overrides):
    cfg = dict(
        hidden_size=16,
        mlp_hidden_size=16,
        num_atoms=5,
        v_min=-2.0,
        v_max=2.0,
        replay_capacity=500,
        frames_per_step=1,
        learning_starts_frames=32,
        device="cpu",
        torch_threads=1,
    )
    cfg.update(overrides)
    spaces = AgentEnvironment(gym.spaces.Box(-1, 1, (3,), np.float32), gym.spaces.Discrete(2))
    return make_agent(RainbowConfig(**cfg), spaces)


class FixedDistributions(torch.nn.Module):
    """log p_i(x, a) = log probs[a][i] for every observation."""

    def __init__(self, probs):
        super().__init__()
        self.log_p = torch.tensor(probs).log()

    def forward(self, obs):
        return self.log_p.expand(len(obs), *self.log_p.shape).clone()

    def reset_noise(self, generator):
        pass

    def set_noise(self, enabled):
        pass


LOW = [0.1, 0.6, 0.1, 0.1, 0.1]  # Q = -0.2 - 0.6 + 0 + 0.1 + 0.2 = -0.5
HIGH = [0.1, 0.1, 0.1, 0.1, 0.6]  # Q = -0.2 - 0.1 + 0 + 0.1 + 1.2 = 1.0
LOWEST = [0.6, 0.1, 0.1, 0.1, 0.1]  # Q = -1.2 - 0.1 + 0 + 0.1 + 0.2 = -1.0


@pytest.mark.parametrize("double_q, bootstrap", [(True, LOW), (False, HIGH)])
def test_double_q_takes_the_online_argmax_and_the_target_distribution(double_q, bootstrap):
    agent = rainbow(double_q=double_q)
    agent.online = FixedDistributions([HIGH, LOWEST])  # the online net prefers action 0 ...
    agent.target = FixedDistributions([LOW, HIGH])  # ... the target net action 1
    # R = 0, discount 1: Tz = z, so the target is the bootstrap action's target distribution itself;
    # R = 0.5, discount 0.5 (Tz = 0.5 + 0.5 z = [-0.5, 0, 0.5, 1, 1.5]) splits each atom's mass:
    #   of LOW:  [0, 0.05, 0.05 + 0.6 + 0.05, 0.05 + 0.1 + 0.05, 0.05] = [0, 0.05, 0.7, 0.2, 0.05]
    #   of HIGH: [0, 0.05, 0.05 + 0.1 + 0.05, 0.05 + 0.1 + 0.3, 0.3]   = [0, 0.05, 0.2, 0.45, 0.3]
    split = {tuple(LOW): [0.0, 0.05, 0.7, 0.2, 0.05], tuple(HIGH): [0.0, 0.05, 0.2, 0.45, 0.3]}[tuple(bootstrap)]
    m = agent.target_distribution(torch.zeros(2, 3), torch.tensor([0.0, 0.5]), torch.tensor([1.0, 0.5]))
    torch.testing.assert_close(m, torch.tensor([bootstrap, split]), atol=1e-6, rtol=0)


def test_loss_is_the_cross_entropy_with_the_projected_target():
    agent = rainbow(double_q=True)
    online_taken = [0.1, 0.1, 0.2, 0.2, 0.4]  # Q = -0.2 - 0.1 + 0 + 0.2 + 0.8 = 0.7
    agent.online = FixedDistributions([[0.2] * 5, online_taken])  # action 0: uniform, Q = 0
    agent.target = FixedDistributions([P, P])
    # The online net's argmax is action 1 (Q 0.7 > 0); the target's distribution for it is P.
    # Sample 0: R = 1.5, discount 0.75 -> m = [0, 0, 0.15, 0.30, 0.55] (see the projection test);
    #   taken action 1: loss = -(0.15 ln 0.2 + 0.30 ln 0.2 + 0.55 ln 0.4)
    # Sample 1: terminal, R = 0.3 -> m = [0, 0, 0.7, 0.3, 0];
    #   taken action 0 (uniform 0.2): loss = -(0.7 + 0.3) ln 0.2 = ln 5
    batch = {
        "obs": np.zeros((2, 3), np.float32),
        "actions": np.array([1, 0]),
        "returns": np.array([1.5, 0.3], np.float32),
        "discounts": np.array([0.75, 0.0], np.float32),
        "next_obs": np.zeros((2, 3), np.float32),
    }
    loss, q_taken = agent.sample_losses(batch)
    expected = torch.tensor([-(0.45 * math.log(0.2) + 0.55 * math.log(0.4)), math.log(5)])
    torch.testing.assert_close(loss, expected, atol=1e-5, rtol=0)
    torch.testing.assert_close(q_taken, torch.tensor([0.7, 0.0]), atol=1e-6, rtol=0)
    assert loss.shape == (2,)


def test_loss_gradient_moves_the_taken_actions_distribution_toward_the_target():
    agent = rainbow(double_q=False, dueling=False, noisy_sigma0=0.0)
    batch = {
        "obs": np.ones((4, 3), np.float32),
        "actions": np.array([0, 0, 0, 0]),
        "returns": np.full(4, 1.0, np.float32),  # terminal, R = 1: the target is all on z = 1
        "discounts": np.zeros(4, np.float32),
        "next_obs": np.zeros((4, 3), np.float32),
    }
    optimizer = torch.optim.SGD(agent.online.parameters(), lr=0.5)
    before = agent.sample_losses(batch)[0].mean().item()
    for _ in range(50):
        optimizer.zero_grad()
        agent.sample_losses(batch)[0].mean().backward()
        optimizer.step()
    loss, q_taken = agent.sample_losses(batch)
    assert loss.mean().item() < 0.5 * before
    assert torch.all((q_taken - 1.0).abs() < 0.3)  # Q(x, 0) -> 1
