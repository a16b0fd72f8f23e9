"""The optimizers the value-based agents' papers name, built in one place from their settings.

Adam (Rainbow, Rainbow-IQN, DER, DrQ) reads ``learning_rate`` and ``adam_eps``, whose shared
defaults :class:`~benchgen_agents.value_based.config.ValueBasedConfig` owns (an agent whose paper
sets other values overrides them, with the source, in its config); Nature DQN's centered RMSProp
reads ``learning_rate``, ``rmsprop_decay`` and ``rmsprop_min_squared_gradient``. PPO's optimizer
and learning-rate schedule are stable-baselines3's.
"""

from __future__ import annotations

import torch


def adam(parameters, config) -> torch.optim.Optimizer:
    """Adam with the config's ``learning_rate`` and ``adam_eps``; fused: one kernel for all
    parameters (the same arithmetic)."""
    return torch.optim.Adam(parameters, lr=config.learning_rate, eps=config.adam_eps, fused=True)


def centered_rmsprop(parameters, config) -> torch.optim.Optimizer:
    """Nature DQN's RMSProp (DeepMind's variant, centered): squared-gradient and gradient momentum
    ``rmsprop_decay``, step lr * g / sqrt(E[g^2] - E[g]^2 + ``rmsprop_min_squared_gradient``).
    torch's centered RMSprop adds its eps outside the square root: sqrt(v) + eps with eps =
    sqrt(0.01) = 0.1 bounds the paper's denominator within a factor sqrt(2) and equals it where
    either term dominates."""
    return torch.optim.RMSprop(
        parameters,
        lr=config.learning_rate,
        alpha=config.rmsprop_decay,
        eps=config.rmsprop_min_squared_gradient**0.5,
        centered=True,
        foreach=True,  # one kernel per operation over all parameters (same arithmetic, several times faster)
    )
