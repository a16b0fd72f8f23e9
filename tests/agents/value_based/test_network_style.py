"""``network_style``: the value-based networks as PyTorch starts them, or as Dopamine's JAX
``FullRainbowNetwork`` builds them (the network behind Agarwal et al. 2021's Atari 100K re-runs).

What a user relies on: ``network_style=dopamine`` gives the same network Dopamine runs (layer
sizes and parameter count on Atari frames; flax's "SAME" padding, which PyTorch's own
``padding="same"`` confirms where PyTorch has it; Glorot-uniform weights and zero biases; one
hidden layer for both dueling streams), the default stays as before, and a wrong style is refused
in one line.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
import torch
from torch import nn

from benchgen.agent import AgentEnvironment
from benchgen.errors import UsageError
from benchgen_agents.dqn import DQNConfig
from benchgen_agents.dqn import make_agent as make_dqn
from benchgen_agents.dqn.config import VARIANTS
from benchgen_agents.value_based.layers import SamePadding, nature_cnn

ATARI = AgentEnvironment(gym.spaces.Box(0, 255, (4, 84, 84), np.uint8), gym.spaces.Discrete(3))


def drq_network(style: str, seed: int = 0) -> nn.Module:
    config = DQNConfig(**{**VARIANTS["drq_eps"], "variant": "drq_eps", "device": "cpu", "network_style": style})
    agent = make_dqn(config, ATARI)
    agent._build(seed)
    return agent.online


def test_dopamine_style_has_dopamine_s_layer_sizes_on_atari_frames():
    network = drq_network("dopamine")
    # FullRainbowNetwork on 84x84x4, 3 actions, dueling, one atom: flax's SAME convolutions give
    # 21x21x32, 11x11x64, 11x11x64 = 7,744 features; then Dense(512) shared by Dense(3) and Dense(1).
    assert network.torso.features == 7744
    expected = (8 * 8 * 4 * 32 + 32) + (4 * 4 * 32 * 64 + 64) + (3 * 3 * 64 * 64 + 64)
    expected += (7744 * 512 + 512) + (512 * 3 + 3) + (512 + 1)
    assert sum(p.numel() for p in network.parameters()) == expected == 4_045_476
    # the default keeps the unpadded Nature torso and a hidden layer per stream (Wang et al. 2016)
    default = drq_network("pytorch")
    assert default.torso.features == 3136
    assert hasattr(default.streams, "value_hidden") and hasattr(default.streams, "advantage_hidden")


@pytest.mark.parametrize("kernel", [3, 4, 5, 8])
def test_same_padding_matches_pytorch_s_own_same_padding_at_stride_one(kernel):
    conv = nn.Conv2d(2, 3, kernel)
    x = torch.randn(1, 2, 11, 13)
    torch_same = nn.functional.conv2d(x, conv.weight, conv.bias, padding="same")
    torch.testing.assert_close(conv(SamePadding(kernel, 1)(x)), torch_same)


@pytest.mark.parametrize(
    ("size", "kernel", "stride", "split"), [(84, 8, 4, (2, 2)), (21, 4, 2, (1, 2)), (11, 3, 1, (1, 1))]
)
def test_same_padding_splits_as_xla_does_with_strides(size, kernel, stride, split):
    # XLA's SAME: output ceil(size / stride), padding (out - 1) * stride + kernel - size, smaller half first
    x = torch.zeros(1, 1, size, size)
    padded = SamePadding(kernel, stride)(x)
    assert padded.shape[-1] == size + sum(split)
    assert SamePadding(kernel, stride)._split(size) == split
    out = nn.Conv2d(1, 1, kernel, stride=stride)(padded)
    assert out.shape[-1] == math.ceil(size / stride)
    assert nature_cnn(4, same_padding=True)(torch.zeros(1, 4, 84, 84)).shape[1] == 7744


def test_dopamine_style_starts_glorot_uniform_with_zero_biases():
    network = drq_network("dopamine")
    layers = [m for m in network.modules() if isinstance(m, (nn.Conv2d, nn.Linear))]
    assert len(layers) == 6
    for layer in layers:
        fan_in = layer.weight[0].numel()
        fan_out = layer.weight.shape[0] * layer.weight[0, 0].numel()
        bound = math.sqrt(6.0 / (fan_in + fan_out))
        assert torch.count_nonzero(layer.bias) == 0
        assert layer.weight.abs().max() <= bound
        if layer.weight.numel() >= 1000:  # uniform on [-bound, bound]: standard deviation bound / sqrt(3)
            assert layer.weight.std().item() == pytest.approx(bound / math.sqrt(3), rel=0.05)
    # PyTorch's default start, for contrast: non-zero biases
    assert torch.count_nonzero(drq_network("pytorch").streams.value_out.bias) == 1


def test_shared_hidden_dueling_streams_average_to_the_value_stream():
    network = drq_network("dopamine")
    obs = torch.randint(0, 256, (5, 4, 84, 84), dtype=torch.uint8)
    with torch.no_grad():
        q = network(obs)
        hidden = torch.relu(network.streams.hidden(network.torso(obs)))
        value = network.streams.value_out(hidden)
    assert q.shape == (5, 3)
    torch.testing.assert_close(q.mean(dim=1, keepdim=True), value)  # mean_a (V + A - mean A) = V


def test_the_same_seed_builds_the_same_dopamine_network():
    first, again, other = drq_network("dopamine", 3), drq_network("dopamine", 3), drq_network("dopamine", 4)
    assert all(torch.equal(a, b) for a, b in zip(first.state_dict().values(), again.state_dict().values()))
    assert not torch.equal(first.streams.hidden.weight, other.streams.hidden.weight)


def test_an_unknown_network_style_is_refused_in_one_line():
    with pytest.raises(UsageError, match="network_style") as error:
        DQNConfig(network_style="jax")
    assert "\n" not in str(error.value)
