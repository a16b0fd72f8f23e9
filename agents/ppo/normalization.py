"""Running normalization of observations and learning rewards for the ppo agent (``normalize``).

The RL Baselines3 Zoo trains PPO on some tasks (Acrobot-v1, MountainCar-v0, ...) with
``normalize: true``: its ``ExperimentManager`` wraps the training env in stable-baselines3's
``VecNormalize`` with that class's defaults and the algorithm's discount (``gamma``), saves the
statistics beside the model (``vecnormalize.pkl``), and evaluates with them frozen and rewards left
raw. Here the same ``VecNormalize`` wraps the unit's env while the agent learns; its running
statistics belong to the agent (one pair for the whole unit, carried over resumes), travel in the
checkpoint as tensors (never a pickle), and normalize the observations ``act`` is given.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import torch
from stable_baselines3.common.running_mean_std import RunningMeanStd
from stable_baselines3.common.vec_env import VecEnv, VecNormalize

#: VecNormalize's defaults, which the RL Zoo keeps: observations and rewards clipped to +-10 after
#: normalization, and the epsilon under the square root of the variance
CLIP_OBS = 10.0
CLIP_REWARD = 10.0
EPSILON = 1e-8
#: checkpoint keys of the statistics (``ppo.pt``, entry ``normalize``)
KEYS = ("obs_mean", "obs_var", "obs_count", "ret_mean", "ret_var", "ret_count")


class RunningStats:
    """The two running statistics: of the observations (per component) and of the discounted
    return, whose standard deviation scales the rewards."""

    def __init__(self, observation_space: gym.Space):
        self.obs = RunningMeanStd(shape=observation_space.shape)
        self.ret = RunningMeanStd(shape=())

    def wrap(self, vec: VecEnv, gamma: float, observations: bool = True) -> VecNormalize:
        """``vec`` under a training ``VecNormalize`` that updates these statistics (the objects
        themselves: what it learns is this agent's); rewards only with ``observations`` False."""
        normalized = VecNormalize(
            vec,
            norm_obs=observations,
            gamma=gamma,
            clip_obs=CLIP_OBS,
            clip_reward=CLIP_REWARD,
            epsilon=EPSILON,
            training=True,
        )
        normalized.obs_rms, normalized.ret_rms = self.obs, self.ret
        return normalized

    def observations(self, observations: np.ndarray) -> np.ndarray:
        """``observations`` as the policy saw them in training, with the statistics frozen
        (``VecNormalize.normalize_obs``)."""
        scaled = (np.asarray(observations) - self.obs.mean) / np.sqrt(self.obs.var + EPSILON)
        return np.clip(scaled, -CLIP_OBS, CLIP_OBS).astype(np.float32)

    def state(self) -> dict[str, torch.Tensor]:
        """The statistics as tensors, for the checkpoint."""
        values = (self.obs.mean, self.obs.var, self.obs.count, self.ret.mean, self.ret.var, self.ret.count)
        return {key: torch.as_tensor(np.asarray(value, dtype=np.float64)) for key, value in zip(KEYS, values)}

    def load_state(self, state: Any) -> None:
        """Take the statistics of a checkpoint; a ``ValueError`` names what does not fit."""
        if not isinstance(state, dict) or any(not isinstance(state.get(key), torch.Tensor) for key in KEYS):
            raise ValueError(f"normalization statistics need the tensors {', '.join(KEYS)}")
        values = {key: state[key].numpy().astype(np.float64) for key in KEYS}
        for key, shape in (("obs_mean", self.obs.mean.shape), ("obs_var", self.obs.var.shape)):
            if values[key].shape != shape:
                raise ValueError(f"{key} has shape {tuple(values[key].shape)}, the observations {tuple(shape)}")
        for key in ("ret_mean", "ret_var", "obs_count", "ret_count"):
            if values[key].shape != ():
                raise ValueError(f"{key} must be a number, got shape {tuple(values[key].shape)}")
        self.obs.mean, self.obs.var, self.obs.count = values["obs_mean"], values["obs_var"], float(values["obs_count"])
        self.ret.mean, self.ret.var, self.ret.count = values["ret_mean"], values["ret_var"], float(values["ret_count"])
