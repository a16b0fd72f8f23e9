"""The IMPALA CNN's starting weights (``extractor_init``): baselines' Glorot-uniform kernels and zero
biases, the Procgen paper's start, or stable-baselines3's orthogonal gain sqrt(2); the heads keep
their orthogonal 0.01 and 1 either way."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
import torch

from benchgen_agents.ppo.config import PPOConfig
from benchgen_agents.ppo.impala_cnn import ImpalaCNN, ImpalaCnnActorCriticPolicy

SPACE = gym.spaces.Box(0, 255, (3, 64, 64), np.uint8)


def _policy(init: str, seed: int = 0) -> ImpalaCnnActorCriticPolicy:
    torch.manual_seed(seed)
    return ImpalaCnnActorCriticPolicy(
        SPACE,
        gym.spaces.Discrete(15),
        lambda _: 5e-4,
        features_extractor_class=ImpalaCNN,
        features_extractor_kwargs={"features_dim": 256},
        net_arch=[],
        extractor_init=init,
    )


def test_glorot_draws_the_extractor_as_tensorflow_does_and_keeps_the_heads():
    glorot, orthogonal = _policy("glorot"), _policy("orthogonal")
    for module in glorot.features_extractor.modules():
        if isinstance(module, (torch.nn.Conv2d, torch.nn.Linear)):
            fan_in, fan_out = torch.nn.init._calculate_fan_in_and_fan_out(module.weight)
            bound = math.sqrt(6 / (fan_in + fan_out))  # Glorot-uniform: U(-bound, bound)
            assert module.weight.abs().max() <= bound
            assert module.weight.std().item() == pytest.approx(bound / math.sqrt(3), rel=0.15)
            assert torch.count_nonzero(module.bias) == 0
    for head in ("action_net", "value_net"):  # the heads: SB3's orthogonal scales in both
        norms = [torch.linalg.matrix_norm(getattr(p, head).weight, 2).item() for p in (glorot, orthogonal)]
        assert norms[0] == pytest.approx(norms[1], rel=1e-5)


def test_the_glorot_start_gives_features_of_the_scale_baselines_starts_from():
    frames = torch.randint(0, 256, (32, *SPACE.shape), dtype=torch.uint8).float() / 255
    with torch.no_grad():
        scale = {
            init: _policy(init).features_extractor(frames).abs().mean().item() for init in ("glorot", "orthogonal")
        }
    assert scale["glorot"] < 1 < scale["orthogonal"], scale  # orthogonal gain sqrt(2) compounds through the blocks


def test_an_unknown_initialization_is_refused():
    with pytest.raises(ValueError, match="extractor_init"):
        PPOConfig(extractor_init="he")
