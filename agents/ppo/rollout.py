"""One of joint PPO's workers (Nichol et al. 2018, section 4.5): its environments, its rollout, its
randomness, and its own minibatches for the PPO update.

A :class:`VirtualWorker` is exactly one of the paper's 188 workers, whichever process hosts it
(:mod:`benchgen_agents.ppo.data_parallel`): it plays its own environments (one training level
each, assigned by the unit's remote-env factory from its index), collects its own rollout of
``n_steps`` per sub-environment with GAE (Schulman et al. 2016) as stable-baselines3's
``collect_rollouts`` and ``RolloutBuffer`` do, shuffles it into its own minibatches, and gives its
i-th minibatch to the one PPO update (:func:`benchgen_agents.ppo.update.ppo_update`, SB3's
``PPO.train`` loss), with advantages normalized over that minibatch, as each MPI worker of OpenAI
baselines' PPO does.

Its randomness comes from its seed alone: actions are sampled with a ``torch.Generator`` of its
own and minibatches shuffled with a ``numpy`` generator of its own, so a worker plays and learns
the same whether its process hosts one worker or all of them.

Rollouts are kept compactly (:mod:`benchgen_agents.ppo.frames`): observations in their own dtype
(uint8 frames stay uint8, a quarter of SB3's float32 buffer), frame stacks one new frame per
step, in memory or, when the process's rollouts exceed ``rollout_memory_gib``, in memory-mapped
files under the unit's directory.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from gymnasium import spaces
from stable_baselines3.common.buffers import RolloutBuffer
from stable_baselines3.common.utils import obs_as_tensor

from benchgen_agents.ppo.frames import PlainFrames, StackedFrames, stackable
from benchgen_agents.ppo.update import Minibatch
from benchgen_agents.ppo.vec_env import BenchgenVecEnv, as_sb3_wraps

#: the observation space of the rollout buffer that computes GAE: one number a step, a placeholder
PER_STEP = spaces.Box(-np.inf, np.inf, (1,), np.float32)


def sample_actions(policy, obs: torch.Tensor, generator: torch.Generator):
    """``policy.forward`` (SB3's ``ActorCriticPolicy``) with the action drawn from ``generator``
    instead of torch's global one: (actions, values, log-probabilities)."""
    features = policy.extract_features(obs)
    if policy.share_features_extractor:
        latent_pi, latent_vf = policy.mlp_extractor(features)
    else:
        pi_features, vf_features = features
        latent_pi = policy.mlp_extractor.forward_actor(pi_features)
        latent_vf = policy.mlp_extractor.forward_critic(vf_features)
    values = policy.value_net(latent_vf)
    # the categorical distribution of SB3's policy over discrete actions (what its forward samples)
    distribution = policy.action_dist.proba_distribution(action_logits=policy.action_net(latent_pi))
    probs = distribution.distribution.probs
    actions = torch.multinomial(probs.detach().cpu().double(), 1, generator=generator).squeeze(1).to(probs.device)
    return actions, values.flatten(), distribution.log_prob(actions)


class VirtualWorker:
    """One paper worker: see the module docstring. ``storage``: a directory for memory-mapped
    observation files (None: in memory)."""

    def __init__(self, index: int, env, seed: int, config, storage: Path | None = None):
        self.index, self.config = int(index), config
        vec = BenchgenVecEnv(env, clip_reward=config.clip_reward, reward_scale=config.reward_scale)
        self.vec = as_sb3_wraps(vec)  # channel-last images transposed, as PPO(...) wraps its env
        vec.seed(seed)
        self.n_envs = vec.num_envs
        self.actions_rng = torch.Generator().manual_seed(int(seed))
        self.shuffle_rng = np.random.default_rng(int(seed))
        self.last_obs = self.vec.reset()
        self.last_starts = np.ones(self.n_envs, dtype=np.float32)
        n, e = config.n_steps, self.n_envs
        space = self.vec.observation_space
        dtype = np.uint8 if space.dtype == np.uint8 else np.float32  # SB3 learns from float32
        path = None if storage is None else storage / f"virtual{self.index}.npy"
        store = StackedFrames if stackable(space.shape, dtype) else PlainFrames
        self.frames = store(n, e, space.shape, dtype, path)
        self.actions = np.zeros((n, e), dtype=np.int64)
        self.rewards, self.values, self.log_probs, self.starts, self.advantages, self.returns = (
            np.zeros((n, e), dtype=np.float32) for _ in range(6)
        )
        #: steps of the last rollout (the budget's last round may play fewer than ``n_steps``)
        self.steps = 0

    # -- the rollout (SB3's collect_rollouts) ---------------------------------------------------
    @torch.no_grad()
    def collect(self, policy, steps: int) -> None:
        """Play ``steps`` vector steps with ``policy`` and compute GAE advantages and returns."""
        policy.set_training_mode(False)
        device, gamma = policy.device, self.config.gamma
        for t in range(steps):
            obs = obs_as_tensor(self.last_obs, device)
            actions, values, log_probs = sample_actions(policy, obs, self.actions_rng)
            chosen = actions.cpu().numpy()
            new_obs, rewards, dones, infos = self.vec.step(chosen)
            rewards = rewards.astype(np.float32)
            for i in np.flatnonzero(dones):
                # a time-limit truncation bootstraps the value of the episode's last observation
                if infos[i].get("terminal_observation") is not None and infos[i].get("TimeLimit.truncated", False):
                    terminal = policy.obs_to_tensor(infos[i]["terminal_observation"])[0]
                    rewards[i] += gamma * policy.predict_values(terminal)[0].item()
            self.frames.put(t, self.last_obs)
            self.actions[t], self.rewards[t] = chosen, rewards
            self.values[t], self.log_probs[t] = values.cpu().numpy(), log_probs.cpu().numpy()
            self.starts[t] = self.last_starts
            self.last_obs, self.last_starts = new_obs, dones.astype(np.float32)
        self.steps = steps
        last_values = policy.predict_values(obs_as_tensor(self.last_obs, device)).flatten().cpu().numpy()
        self._gae(last_values, self.last_starts)

    def _gae(self, last_values: np.ndarray, dones: np.ndarray) -> None:
        """Generalized advantage estimation over the rollout by SB3's
        ``RolloutBuffer.compute_returns_and_advantage``, on a buffer of the rollout's per-step
        numbers only (its observations are a placeholder: they stay compact in ``self.frames``)."""
        n = self.steps
        buffer = RolloutBuffer(
            n,
            PER_STEP,
            self.vec.action_space,
            device="cpu",
            gae_lambda=self.config.gae_lambda,
            gamma=self.config.gamma,
            n_envs=self.n_envs,
        )
        buffer.rewards[:], buffer.values[:], buffer.episode_starts[:] = (
            self.rewards[:n],
            self.values[:n],
            self.starts[:n],
        )
        buffer.compute_returns_and_advantage(torch.as_tensor(last_values), dones)
        self.advantages[:n], self.returns[:n] = buffer.advantages, buffer.returns

    # -- minibatches and the loss (SB3's PPO.train) ---------------------------------------------
    def minibatches(self) -> list[np.ndarray]:
        """One epoch's minibatches: a shuffle of this worker's rollout (flat index ``env * n_steps
        + step``, SB3's order) cut into ``batch_size`` pieces, the last one possibly shorter."""
        size = self.steps * self.n_envs
        order = self.shuffle_rng.permutation(size)
        return [order[start : start + self.config.batch_size] for start in range(0, size, self.config.batch_size)]

    def batch(self, flat: np.ndarray, device) -> dict[str, torch.Tensor]:
        """The rollout's entries at flat indices ``flat`` as tensors."""
        env, step = np.divmod(flat, self.steps)
        return {
            "observations": torch.as_tensor(self.frames.get(step, env), device=device),
            "actions": torch.as_tensor(self.actions[step, env], device=device),
            "old_values": torch.as_tensor(self.values[step, env], device=device),
            "old_log_probs": torch.as_tensor(self.log_probs[step, env], device=device),
            "advantages": torch.as_tensor(self.advantages[step, env], device=device),
            "returns": torch.as_tensor(self.returns[step, env], device=device),
        }

    def minibatch(self, flat: np.ndarray, device) -> Minibatch:
        """This worker's minibatch at flat indices ``flat``, for the one PPO update
        (:func:`benchgen_agents.ppo.update.ppo_update`), which reads it chunk by chunk."""
        env, step = np.divmod(flat, self.steps)
        advantages = torch.as_tensor(self.advantages[step, env], device=device)
        return Minibatch(len(flat), lambda part: self.batch(flat[part], device), advantages)

    @property
    def observations(self) -> np.ndarray:
        """The last rollout's observations, ``(steps, n_envs, *shape)`` (rebuilt: for checks)."""
        steps, envs = np.divmod(np.arange(self.steps * self.n_envs), self.n_envs)
        return self.frames.get(steps, envs).reshape(self.steps, self.n_envs, *self.frames_shape)

    @property
    def frames_shape(self) -> tuple[int, ...]:
        return tuple(self.vec.observation_space.shape)

    def close(self) -> None:
        self.vec.close()
