"""benchgen's one PPO update: the loss (Schulman et al. 2017, eq. 9) and the optimizer steps, taken
by every way the ``ppo`` agent trains: one process (:class:`~benchgen_agents.ppo.chunked.ChunkedPPO`'s
``train``), data-parallel processes and joint PPO's virtual workers
(:mod:`benchgen_agents.ppo.data_parallel`, :mod:`benchgen_agents.ppo.rollout`).

What is stable-baselines3's and what is benchgen's. SB3 keeps what serves all three paths through
its public interface: the actor-critic policy and its feature extractors (``ActorCriticPolicy``,
``evaluate_actions``), and for one process its rollout loop, ``RolloutBuffer`` (GAE, Schulman et
al. 2016, in ``compute_returns_and_advantage``), minibatch sampling and callbacks (``PPO.learn``).
The update is benchgen's, because SB3's ``PPO.train`` cannot serve the other two: it reads one
rollout buffer and steps the optimizer itself, where data-parallel workers must sum their
gradients between ``backward`` and the step, and virtual workers each bring their own
minibatch; and it passes a minibatch through the network at once, which on a CPU is about 1.5x
slower per sample for the IMPALA CNN than passes of 256 samples (``chunked.py``). So
:func:`ppo_update` is SB3's ``PPO.train`` (stable_baselines3/ppo/ppo.py, version 2.x), written to
match it line for line: the clipped surrogate, the value loss clipped around the rollout's
values when ``clip_range_vf`` is given (or, with ``value_loss="ppo2"``, openai baselines' PPO2
value loss in its place), the entropy bonus (the log-probabilities' mean where a
distribution has no entropy), advantages normalized over each minibatch, SB3's approximate KL
and its ``target_kl`` early stop before a minibatch's step, the gradient-norm clip and one
optimizer step per minibatch. Two things are added: a minibatch's gradient is accumulated over
chunks of ``chunk`` samples (every mean over the minibatch written as a sum over its chunks
divided by its size, advantages normalized with the whole minibatch's mean and standard
deviation), and ``after_backward`` runs between the last ``backward`` and the clip (the
data-parallel all-reduce and mean). A gradient step may also take several minibatches (the
virtual workers a process hosts), whose gradients add up.

A minibatch that is one chunk is computed with SB3's own expressions, so one process's update is
SB3's ``PPO.train`` bit for bit (``tests/agents/test_ppo_update.py`` checks the weights after an
update against ``PPO.train`` on the same buffer); in chunks it is the same up to the order of
float sums.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

#: samples per forward/backward pass of a minibatch on the CPU (``PPOConfig.update_chunk`` None)
CPU_UPDATE_CHUNK = 256
#: the statistics of an update, SB3's ``train/`` names (without the prefix)
STATS = ("policy_gradient_loss", "value_loss", "entropy_loss", "clip_fraction", "approx_kl", "loss")


def update_chunk(config: Any, device: torch.device) -> int:
    """Samples per forward/backward pass of a minibatch (``PPOConfig.update_chunk``; 0: all of it):
    unset, :data:`CPU_UPDATE_CHUNK` when torch runs on the CPU, the whole minibatch elsewhere."""
    if config.update_chunk is not None:
        return config.update_chunk
    return CPU_UPDATE_CHUNK if torch.device(device).type == "cpu" else 0


@dataclass(frozen=True)
class Minibatch:
    """One minibatch of a rollout, read chunk by chunk: ``take(slice)`` gives those samples'
    ``observations``, ``actions`` (long), ``old_values``, ``old_log_probs``, ``advantages`` and
    ``returns`` as tensors; ``advantages`` is the whole minibatch's (for its mean and standard
    deviation)."""

    size: int
    take: Callable[[slice], dict[str, torch.Tensor]]
    advantages: torch.Tensor

    @classmethod
    def of_samples(cls, samples: Any) -> Minibatch:
        """A minibatch of SB3's ``RolloutBufferSamples`` (discrete actions, as SB3 casts them)."""
        tensors = {
            "observations": samples.observations,
            "actions": samples.actions.long().flatten(),
            "old_values": samples.old_values,
            "old_log_probs": samples.old_log_prob,
            "advantages": samples.advantages,
            "returns": samples.returns,
        }
        return cls(len(samples.advantages), lambda part: {k: v[part] for k, v in tensors.items()}, samples.advantages)


def backward_in_chunks(
    policy, batch: Minibatch, chunk: int, settings: Any, clip_range: float, clip_range_vf: float | None
) -> dict[str, float]:
    """Add the gradient of the PPO loss on ``batch`` to ``policy``'s gradients (``backward``:
    gradients accumulate), ``chunk`` samples at a time (0: all at once); ``settings`` gives
    ``ent_coef``, ``vf_coef``, ``value_loss`` (the value term's form, ``PPOConfig.value_loss``) and
    ``normalize_advantage`` (a ``PPOConfig``, or a :class:`~benchgen_agents.ppo.chunked.ChunkedPPO`).
    Returns SB3's logged statistics of the minibatch (:data:`STATS`)."""
    size = batch.size
    one_pass = chunk <= 0 or chunk >= size

    def mean(t: torch.Tensor) -> torch.Tensor:  # a chunk's share of the minibatch's mean
        return t.mean() if one_pass else t.sum() / size

    # Normalization does not make sense for a minibatch of one sample (SB3, GH issue #325)
    normalize = settings.normalize_advantage and size > 1
    if normalize:
        adv_mean, adv_std = batch.advantages.mean(), batch.advantages.std()
    stats = dict.fromkeys(STATS, 0.0)
    for start in range(0, size, size if one_pass else chunk):
        b = batch.take(slice(start, start + (size if one_pass else chunk)))
        values, log_prob, entropy = policy.evaluate_actions(b["observations"], b["actions"])
        values = values.flatten()
        adv = b["advantages"]
        if normalize:
            adv = (adv - adv_mean) / (adv_std + 1e-8)
        ratio = torch.exp(log_prob - b["old_log_probs"])
        policy_loss = -mean(torch.min(adv * ratio, adv * torch.clamp(ratio, 1 - clip_range, 1 + clip_range)))
        if settings.value_loss == "ppo2":
            # baselines' PPO2 (ppo2/model.py): half the mean of the larger squared error, clipped or not
            error = (values - b["returns"]) ** 2
            if clip_range_vf is not None:
                clipped = b["old_values"] + torch.clamp(values - b["old_values"], -clip_range_vf, clip_range_vf)
                error = torch.max(error, (clipped - b["returns"]) ** 2)
            value_loss = 0.5 * mean(error)
        else:
            if clip_range_vf is not None:
                values = b["old_values"] + torch.clamp(values - b["old_values"], -clip_range_vf, clip_range_vf)
            value_loss = F.mse_loss(b["returns"], values) if one_pass else mean((b["returns"] - values) ** 2)
        # the entropy bonus, or without an entropy the log-probabilities' mean
        entropy_loss = -mean(-log_prob) if entropy is None else -mean(entropy)
        loss = policy_loss + settings.ent_coef * entropy_loss + settings.vf_coef * value_loss
        loss.backward()
        with torch.no_grad():
            log_ratio = log_prob - b["old_log_probs"]
            stats["approx_kl"] += float(mean((torch.exp(log_ratio) - 1) - log_ratio))
            stats["clip_fraction"] += float(mean((torch.abs(ratio - 1) > clip_range).float()))
        stats["policy_gradient_loss"] += policy_loss.item()
        stats["value_loss"] += value_loss.item()
        stats["entropy_loss"] += entropy_loss.item()
        if one_pass:
            stats["loss"] = loss.item()
    if not one_pass:
        stats["loss"] = (
            stats["policy_gradient_loss"]
            + settings.ent_coef * stats["entropy_loss"]
            + settings.vf_coef * stats["value_loss"]
        )
    return stats


def ppo_update(
    policy,
    epoch: Callable[[], Iterable[Sequence[Minibatch]]],
    settings: Any,
    *,
    learning_rate: float,
    clip_range: float,
    clip_range_vf: float | None,
    chunk: int,
    after_backward: Callable[[list[torch.nn.Parameter]], None] | None = None,
) -> dict[str, float]:
    """``settings.n_epochs`` passes of PPO over a rollout, SB3's ``PPO.train``: ``epoch()`` gives
    one pass's gradient steps, each a sequence of minibatches whose loss gradients add up (one
    for one process; one per hosted virtual worker). At each step: zero the gradients,
    :func:`backward_in_chunks` each minibatch, stop the update before the step if their mean
    approximate KL passes ``1.5 * settings.target_kl`` (SB3's early stop), ``after_backward(
    parameters)``, clip the gradient norm at ``settings.max_grad_norm``, step the optimizer.
    ``settings`` gives the loss's settings and ``n_epochs``, ``target_kl``, ``max_grad_norm`` (a
    ``PPOConfig``, or SB3's ``PPO``). Returns the statistics SB3 logs: the losses and clip
    fraction averaged over all minibatches, the approximate KL over the last epoch's, ``loss``
    of the last step, and ``epochs``, the passes begun (SB3's ``n_updates`` count)."""
    for group in policy.optimizer.param_groups:
        group["lr"] = learning_rate
    policy.set_training_mode(True)
    parameters = list(policy.parameters())
    means: dict[str, list[float]] = {key: [] for key in STATS}
    epochs = 0
    for _ in range(settings.n_epochs):
        epochs += 1
        means["approx_kl"] = []  # SB3 logs the last epoch's
        stopped = False
        for batches in epoch():
            policy.optimizer.zero_grad()
            step = [backward_in_chunks(policy, b, chunk, settings, clip_range, clip_range_vf) for b in batches]
            for key in STATS:
                means[key].append(sum(s[key] for s in step) / len(step))
            if settings.target_kl is not None and means["approx_kl"][-1] > 1.5 * settings.target_kl:
                stopped = True  # SB3 stops before this step: its gradient is dropped
                policy.optimizer.zero_grad()
                break
            if after_backward is not None:
                after_backward(parameters)
            torch.nn.utils.clip_grad_norm_(parameters, settings.max_grad_norm)
            policy.optimizer.step()
        if stopped:
            break
    stats = {key: sum(values) / len(values) if values else 0.0 for key, values in means.items() if key != "loss"}
    stats["loss"] = means["loss"][-1] if means["loss"] else 0.0
    stats["epochs"] = epochs
    return stats
