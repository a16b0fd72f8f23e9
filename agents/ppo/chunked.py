"""stable-baselines3's PPO update with each minibatch's gradient accumulated over chunks.

:class:`ChunkedPPO` is ``stable_baselines3.PPO`` with one change in ``train``: a minibatch larger
than ``update_chunk`` samples goes through the network in chunks of that many, each chunk's loss
``backward``-ed before the next is evaluated, and the optimizer steps once per minibatch on the
summed gradient. The loss of a minibatch is SB3's (Schulman et al. 2017, eq. 9, as
``PPO.train`` computes it): every mean over the minibatch is written as a sum over its chunks
divided by the minibatch's size, and advantages are normalized with the whole minibatch's mean
and standard deviation, whichever chunk a sample is in. So the update is SB3's up to the order of
float sums; the statistics logged (losses, clip fraction, approximate KL) are the same averages.
A minibatch of at most ``update_chunk`` samples takes SB3's own code path unchanged.

Why: on a CPU, a pass over fewer samples keeps the activations in the caches. The IMPALA CNN's
forward and backward pass over Procgen's 2,048-sample minibatches (the paper's setting) runs
about 1.5x faster per sample in chunks of 256 on the 2-core development machine (bfloat16, one
thread: 1.47 against 2.17 ms a sample), and peak memory falls with the chunk
(``benchmarks/bench_procgen_ppo.py`` measures benchgen's PPO before and after).
"""

from __future__ import annotations

import numpy as np
import torch as th
from gymnasium import spaces
from stable_baselines3 import PPO
from stable_baselines3.common.utils import explained_variance


class ChunkedPPO(PPO):
    """``PPO`` whose minibatches pass through the network ``update_chunk`` samples at a time."""

    def __init__(self, *args, update_chunk: int = 0, **kwargs):
        #: samples per forward/backward pass (0: the whole minibatch, SB3's own ``train``)
        self.update_chunk = int(update_chunk)
        super().__init__(*args, **kwargs)

    def train(self) -> None:
        if not self.update_chunk or self.batch_size <= self.update_chunk:
            super().train()
            return
        self.policy.set_training_mode(True)
        self._update_learning_rate(self.policy.optimizer)
        clip_range = self.clip_range(self._current_progress_remaining)  # type: ignore[operator]
        clip_range_vf = None
        if self.clip_range_vf is not None:
            clip_range_vf = self.clip_range_vf(self._current_progress_remaining)  # type: ignore[operator]

        entropy_losses, pg_losses, value_losses, clip_fractions = [], [], [], []
        continue_training = True
        loss_value = 0.0
        for _epoch in range(self.n_epochs):
            approx_kl_divs = []
            for rollout_data in self.rollout_buffer.get(self.batch_size):
                size = len(rollout_data.advantages)
                advantages = rollout_data.advantages
                normalize = self.normalize_advantage and size > 1
                if normalize:
                    mean, std = advantages.mean(), advantages.std()
                self.policy.optimizer.zero_grad()
                sums = {"pg": 0.0, "value": 0.0, "entropy": 0.0, "clip": 0.0, "kl": 0.0}
                for start in range(0, size, self.update_chunk):
                    chunk = slice(start, start + self.update_chunk)
                    actions = rollout_data.actions[chunk]
                    if isinstance(self.action_space, spaces.Discrete):
                        actions = actions.long().flatten()
                    values, log_prob, entropy = self.policy.evaluate_actions(rollout_data.observations[chunk], actions)
                    values = values.flatten()
                    adv = advantages[chunk]
                    if normalize:
                        adv = (adv - mean) / (std + 1e-8)
                    old_log_prob = rollout_data.old_log_prob[chunk]
                    ratio = th.exp(log_prob - old_log_prob)
                    policy_loss = (
                        -th.min(adv * ratio, adv * th.clamp(ratio, 1 - clip_range, 1 + clip_range)).sum() / size
                    )
                    if clip_range_vf is None:
                        values_pred = values
                    else:
                        old_values = rollout_data.old_values[chunk]
                        values_pred = old_values + th.clamp(values - old_values, -clip_range_vf, clip_range_vf)
                    value_loss = ((rollout_data.returns[chunk] - values_pred) ** 2).sum() / size
                    entropy_loss = (log_prob.sum() if entropy is None else -entropy.sum()) / size
                    loss = policy_loss + self.ent_coef * entropy_loss + self.vf_coef * value_loss
                    loss.backward()
                    with th.no_grad():
                        log_ratio = log_prob - old_log_prob
                        sums["kl"] += float(((th.exp(log_ratio) - 1) - log_ratio).sum()) / size
                        sums["clip"] += float((th.abs(ratio - 1) > clip_range).float().sum()) / size
                    sums["pg"] += policy_loss.item()
                    sums["value"] += value_loss.item()
                    sums["entropy"] += entropy_loss.item()
                pg_losses.append(sums["pg"])
                value_losses.append(sums["value"])
                entropy_losses.append(sums["entropy"])
                clip_fractions.append(sums["clip"])
                approx_kl_divs.append(sums["kl"])
                loss_value = sums["pg"] + self.ent_coef * sums["entropy"] + self.vf_coef * sums["value"]
                if self.target_kl is not None and sums["kl"] > 1.5 * self.target_kl:
                    # SB3 stops before this minibatch's optimizer step: its gradient is dropped
                    continue_training = False
                    self.policy.optimizer.zero_grad()
                    break
                th.nn.utils.clip_grad_norm_(self.policy.parameters(), self.max_grad_norm)
                self.policy.optimizer.step()
            self._n_updates += 1
            if not continue_training:
                break

        explained_var = explained_variance(self.rollout_buffer.values.flatten(), self.rollout_buffer.returns.flatten())
        self.logger.record("train/entropy_loss", np.mean(entropy_losses))
        self.logger.record("train/policy_gradient_loss", np.mean(pg_losses))
        self.logger.record("train/value_loss", np.mean(value_losses))
        self.logger.record("train/approx_kl", np.mean(approx_kl_divs))
        self.logger.record("train/clip_fraction", np.mean(clip_fractions))
        self.logger.record("train/loss", loss_value)
        self.logger.record("train/explained_variance", explained_var)
        self.logger.record("train/n_updates", self._n_updates, exclude="tensorboard")
        self.logger.record("train/clip_range", clip_range)
        if clip_range_vf is not None:
            self.logger.record("train/clip_range_vf", clip_range_vf)
