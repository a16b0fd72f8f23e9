"""Network pieces: factorised noisy layers, the cosine embedding, dueling, uint8 scaling."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import torch

from benchgen_agents.rainbow_iqn.network import IQNNetwork
from benchgen_agents.value_based.layers import NoisyLinear

CFG = SimpleNamespace(
    torso="nature", mlp_hidden_size=16, cosine_embedding_dim=8, noisy_sigma0=0.5, hidden_size=12, dueling=True
)


@pytest.mark.parametrize("rows", [1, 3, 200])  # the few-rows (factorised) and the materialised paths
def test_noisy_linear_is_mu_plus_sigma_times_factorised_noise(rows):
    layer = NoisyLinear(40, 6, sigma0=0.5)
    generator = torch.Generator().manual_seed(0)
    layer.reset_noise(generator)
    # the eps buffers hold f(x) = sgn(x) sqrt|x| of Gaussian draws
    weight = layer.weight_mu + layer.weight_sigma * torch.outer(layer.eps_out, layer.eps_in)
    bias = layer.bias_mu + layer.bias_sigma * layer.eps_out
    x = torch.randn(rows, 40)
    torch.testing.assert_close(layer(x), x @ weight.T + bias, rtol=1e-5, atol=1e-5)
    layer.noise_enabled = False
    torch.testing.assert_close(layer(x), x @ layer.weight_mu.T + layer.bias_mu)


def test_noisy_init_and_noise_scale():
    layer = NoisyLinear(400, 30, sigma0=0.5)
    assert torch.all(layer.weight_sigma == 0.5 / math.sqrt(400))  # NoisyNet: sigma0 / sqrt(fan-in)
    assert layer.weight_mu.abs().max() <= 1 / math.sqrt(400)
    generator = torch.Generator().manual_seed(1)
    layer.reset_noise(generator)
    first = layer.eps_in.clone()
    layer.reset_noise(generator)
    assert not torch.equal(first, layer.eps_in)
    # f(x) = sgn(x) sqrt|x| of a standard normal: E[f(x)^2] = E|x| = sqrt(2/pi)
    assert layer.eps_in.pow(2).mean().item() == pytest.approx(math.sqrt(2 / math.pi), abs=0.12)


def test_cosine_embedding_uses_i_pi_tau_for_i_1_to_n():
    net = IQNNetwork((4,), 3, CFG)
    torch.testing.assert_close(net.cos_freq, torch.arange(1, 9, dtype=torch.float32) * math.pi)
    with torch.no_grad():
        net.tau_embedding.weight.copy_(torch.eye(16, 8))  # phi_j(tau) = relu(cos(pi * j * tau))
        net.tau_embedding.bias.zero_()
        taus = torch.tensor([[0.1, 0.7]])
        phi = torch.relu(net.tau_embedding(torch.cos(taus.unsqueeze(-1) * net.cos_freq)))
    assert phi[0, 1, 2].item() == pytest.approx(max(0.0, math.cos(math.pi * 3 * 0.7)), abs=1e-6)


def test_dueling_head_ignores_a_constant_added_to_every_advantage():
    net = IQNNetwork((4,), 3, CFG)
    x, taus = torch.randn(5, 4), torch.rand(5, 7)
    before = net(x, taus)
    with torch.no_grad():
        net.streams.advantage_out.bias_mu += 10.0  # Q = V + A - mean(A): unchanged
    torch.testing.assert_close(net(x, taus), before)
    assert before.shape == (5, 7, 3) and before.dtype == torch.float32


def test_pixels_are_scaled_to_unit_range():
    net = IQNNetwork((4, 84, 84), 18, CFG)
    frames = torch.randint(0, 256, (2, 4, 84, 84), dtype=torch.uint8)
    torch.testing.assert_close(net.features(frames), net.torso.body(frames.float() / 255.0))
