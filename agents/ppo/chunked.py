"""stable-baselines3's PPO with benchgen's update (:mod:`benchgen_agents.ppo.update`) as its ``train``.

:class:`ChunkedPPO` is ``stable_baselines3.PPO``, whose ``learn`` plays the rollouts, fills the
``RolloutBuffer`` (GAE) and calls the callbacks, with ``train`` replaced by
:func:`~benchgen_agents.ppo.update.ppo_update` on the buffer's minibatches: SB3's update, bit for
bit when a minibatch is one chunk, and with each minibatch passed through the network
``update_chunk`` samples at a time otherwise (the gradient accumulated over the chunks: the same
update up to the order of float sums; the same statistics logged).

It keeps its state in public attributes of its own, so that the agent never reaches into SB3's
private ones: ``n_updates`` (SB3's update counter: epochs begun) and ``budget_steps`` (the step
count at which the linear schedules reach 0, which ``learn`` works out as SB3 does: its
``total_timesteps``, plus the steps already counted when ``reset_num_timesteps=False``).

Why chunks: on a CPU, a pass over fewer samples keeps the activations in the caches. The IMPALA
CNN's forward and backward pass over Procgen's 2,048-sample minibatches (the paper's setting)
runs about 1.5x faster per sample in chunks of 256 on the 2-core development machine (bfloat16,
one thread: 1.47 against 2.17 ms a sample), and peak memory falls with the chunk
(``benchmarks/bench_procgen_ppo.py`` measures benchgen's PPO before and after).
"""

from __future__ import annotations

from gymnasium import spaces
from stable_baselines3 import PPO
from stable_baselines3.common.utils import explained_variance

from benchgen_agents.ppo.update import Minibatch, ppo_update


class ChunkedPPO(PPO):
    """``PPO`` trained by benchgen's update, ``update_chunk`` samples per pass; see the module docstring."""

    def __init__(self, *args, update_chunk: int = 0, value_loss: str = "sb3", **kwargs):
        #: samples per forward/backward pass (0: the whole minibatch)
        self.update_chunk = int(update_chunk)
        #: the value term's form (``PPOConfig.value_loss``): "sb3" is SB3's own
        self.value_loss = value_loss
        #: the step count at which the schedules' progress reaches 0 (set by ``learn``)
        self.budget_steps = 1
        #: SB3's update counter (epochs begun; ``train/n_updates``)
        self.n_updates = 0
        super().__init__(*args, **kwargs)
        if not isinstance(self.action_space, spaces.Discrete):
            raise ValueError(f"ChunkedPPO takes discrete actions, got {self.action_space}")

    def learn(
        self,
        total_timesteps: int,
        callback=None,
        log_interval: int = 1,
        tb_log_name: str = "PPO",
        reset_num_timesteps: bool = True,
        progress_bar: bool = False,
    ):
        # SB3's _setup_learn: a continued count runs total_timesteps more steps
        self.budget_steps = total_timesteps + (0 if reset_num_timesteps else self.num_timesteps)
        return super().learn(total_timesteps, callback, log_interval, tb_log_name, reset_num_timesteps, progress_bar)

    def progress_remaining(self) -> float:
        """The schedules' progress: 1 at step 0, 0 at ``budget_steps`` (SB3's formula)."""
        return 1.0 - float(self.num_timesteps) / float(self.budget_steps)

    def train(self) -> None:
        progress = self.progress_remaining()
        learning_rate = self.lr_schedule(progress)
        clip_range = self.clip_range(progress)  # type: ignore[operator]
        clip_range_vf = None if self.clip_range_vf is None else self.clip_range_vf(progress)  # type: ignore[operator]
        stats = ppo_update(
            self.policy,
            lambda: ([Minibatch.of_samples(samples)] for samples in self.rollout_buffer.get(self.batch_size)),
            self,
            learning_rate=learning_rate,
            clip_range=clip_range,
            clip_range_vf=clip_range_vf,
            chunk=self.update_chunk,
        )
        self.n_updates += stats["epochs"]
        explained_var = explained_variance(self.rollout_buffer.values.flatten(), self.rollout_buffer.returns.flatten())
        self.logger.record("train/learning_rate", learning_rate)
        for key in ("entropy_loss", "policy_gradient_loss", "value_loss", "approx_kl", "clip_fraction", "loss"):
            self.logger.record(f"train/{key}", stats[key])
        self.logger.record("train/explained_variance", explained_var)
        self.logger.record("train/n_updates", self.n_updates, exclude="tensorboard")
        self.logger.record("train/clip_range", clip_range)
        if clip_range_vf is not None:
            self.logger.record("train/clip_range_vf", clip_range_vf)
