"""stable-baselines3's PPO update with each minibatch's gradient accumulated over chunks.

:class:`ChunkedPPO` is ``stable_baselines3.PPO`` with one change in ``train``: a minibatch larger
than ``update_chunk`` samples goes through the network in chunks of that many, each chunk's loss
``backward``-ed before the next is evaluated, and the optimizer steps once per minibatch on the
summed gradient. The loss of a minibatch is SB3's, computed chunk by chunk by
:func:`benchgen_agents.ppo.loss.backward_in_chunks` (the loss joint PPO's virtual workers take
too). So the update is SB3's up to the order of float sums; the statistics logged (losses, clip
fraction, approximate KL) are the same averages.
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

from benchgen_agents.ppo.loss import backward_in_chunks
from benchgen_agents.ppo.loss import settings as loss_settings


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
        discrete = isinstance(self.action_space, spaces.Discrete)
        for _epoch in range(self.n_epochs):
            approx_kl_divs = []
            for rollout_data in self.rollout_buffer.get(self.batch_size):
                actions = rollout_data.actions.long().flatten() if discrete else rollout_data.actions

                def take(part: slice, data=rollout_data, actions=actions) -> dict[str, th.Tensor]:
                    return {
                        "observations": data.observations[part],
                        "actions": actions[part],
                        "old_values": data.old_values[part],
                        "old_log_probs": data.old_log_prob[part],
                        "advantages": data.advantages[part],
                        "returns": data.returns[part],
                    }

                self.policy.optimizer.zero_grad()
                stats = backward_in_chunks(
                    self.policy,
                    len(rollout_data.advantages),
                    self.update_chunk,
                    take,
                    rollout_data.advantages,
                    clip_range=clip_range,
                    clip_range_vf=clip_range_vf,
                    **loss_settings(self),
                )
                pg_losses.append(stats["policy_gradient_loss"])
                value_losses.append(stats["value_loss"])
                entropy_losses.append(stats["entropy_loss"])
                clip_fractions.append(stats["clip_fraction"])
                approx_kl_divs.append(stats["approx_kl"])
                loss_value = stats["loss"]
                if self.target_kl is not None and stats["approx_kl"] > 1.5 * self.target_kl:
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
