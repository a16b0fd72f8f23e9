"""PPO's loss on one minibatch, its gradient accumulated over chunks of the minibatch: the one
loss the ppo agent's chunked update (:mod:`benchgen_agents.ppo.chunked`) and joint PPO's virtual
workers (:mod:`benchgen_agents.ppo.rollout`) both take.

The loss is stable-baselines3's ``PPO.train`` (Schulman et al. 2017, eq. 9: the clipped surrogate,
the value loss, clipped around the rollout's values when ``clip_range_vf`` is given, and the
entropy bonus), with every mean over the minibatch written as a sum over its chunks divided by the
minibatch's size and advantages normalized with the whole minibatch's mean and standard deviation,
whichever chunk a sample is in: the same gradient and statistics as one pass, up to the order of
float sums, with the activations of one chunk in memory at a time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch


def backward_in_chunks(
    policy,
    size: int,
    chunk: int,
    take: Callable[[slice], dict[str, torch.Tensor]],
    advantages: torch.Tensor,
    *,
    clip_range: float,
    clip_range_vf: float | None,
    ent_coef: float,
    vf_coef: float,
    normalize_advantage: bool,
) -> dict[str, float]:
    """Add the gradient of the PPO loss on a minibatch of ``size`` samples to ``policy``'s gradients
    (``backward``: gradients accumulate), ``chunk`` samples at a time. ``take(slice)`` gives those
    samples' ``observations``, ``actions``, ``old_values``, ``old_log_probs``, ``advantages`` and
    ``returns`` as tensors; ``advantages`` is the whole minibatch's (for its mean and standard
    deviation). Returns SB3's logged statistics of the minibatch: ``policy_gradient_loss``,
    ``value_loss``, ``entropy_loss``, ``clip_fraction``, ``approx_kl`` and ``loss``."""
    normalize = normalize_advantage and size > 1
    if normalize:
        mean, std = advantages.mean(), advantages.std()
    stats = {
        "policy_gradient_loss": 0.0,
        "value_loss": 0.0,
        "entropy_loss": 0.0,
        "clip_fraction": 0.0,
        "approx_kl": 0.0,
    }
    for start in range(0, size, chunk):
        b = take(slice(start, start + chunk))
        values, log_prob, entropy = policy.evaluate_actions(b["observations"], b["actions"])
        values = values.flatten()
        adv = b["advantages"]
        if normalize:
            adv = (adv - mean) / (std + 1e-8)
        ratio = torch.exp(log_prob - b["old_log_probs"])
        policy_loss = -torch.min(adv * ratio, adv * torch.clamp(ratio, 1 - clip_range, 1 + clip_range)).sum() / size
        if clip_range_vf is not None:
            values = b["old_values"] + torch.clamp(values - b["old_values"], -clip_range_vf, clip_range_vf)
        value_loss = ((b["returns"] - values) ** 2).sum() / size
        # SB3: the entropy bonus, or without an entropy the log-probabilities' mean
        entropy_loss = (log_prob.sum() if entropy is None else -entropy.sum()) / size
        loss = policy_loss + ent_coef * entropy_loss + vf_coef * value_loss
        loss.backward()
        with torch.no_grad():
            log_ratio = log_prob - b["old_log_probs"]
            stats["approx_kl"] += float(((torch.exp(log_ratio) - 1) - log_ratio).sum()) / size
            stats["clip_fraction"] += float((torch.abs(ratio - 1) > clip_range).float().sum()) / size
        stats["policy_gradient_loss"] += policy_loss.item()
        stats["value_loss"] += value_loss.item()
        stats["entropy_loss"] += entropy_loss.item()
    stats["loss"] = stats["policy_gradient_loss"] + ent_coef * stats["entropy_loss"] + vf_coef * stats["value_loss"]
    return stats


def settings(config: Any) -> dict[str, Any]:
    """The loss's settings from a ``PPOConfig`` (or SB3's ``PPO``: the same names)."""
    return {
        "ent_coef": config.ent_coef,
        "vf_coef": config.vf_coef,
        "normalize_advantage": config.normalize_advantage,
    }
