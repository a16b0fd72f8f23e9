"""The procgen suite's agent-side wrapper: channel-first frames for agents that ask for ``frames``.

Procgen renders 64x64 RGB frames, channel-last. The paper's agents saw them as they are (no
grayscale, no resizing, no frame stack: Cobbe et al. 2020, appendix); benchgen's learning agents
take images channel-first (``(C, H, W)``, as Atari's frame stacks are), so ``frames`` gives the same
pixels as ``(3, 64, 64)``. ``native`` gives the env's own ``(64, 64, 3)``.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from benchgen.agent import AgentNeeds


class ChannelFirstFrames(gym.vector.VectorWrapper):
    """The frames (and ``info["final_obs"]``) as fresh ``(N, 3, 64, 64)`` arrays."""

    def __init__(self, env: gym.vector.VectorEnv):
        super().__init__(env)
        height, width, channels = env.single_observation_space.shape
        self.single_observation_space = gym.spaces.Box(0, 255, (channels, height, width), np.uint8)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, env.num_envs)

    @staticmethod
    def _first(frames: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(np.moveaxis(frames, -1, 1))

    def reset(self, *, seed=None, options=None):
        obs, infos = self.env.reset(seed=seed, options=options)
        return self._first(obs), infos

    def step(self, actions):
        obs, rewards, terminated, truncated, infos = self.env.step(actions)
        if "final_obs" in infos:
            infos = {**infos, "final_obs": self._first(infos["final_obs"])}
        return self._first(obs), rewards, terminated, truncated, infos


def agent_wrappers(env: gym.vector.VectorEnv, needs: AgentNeeds) -> gym.vector.VectorEnv:
    """Channel-first frames for ``frames``; the env itself for ``native``. Rewards are the game's
    for every need (the paper shaped none; PPO normalizes its own learning rewards)."""
    return ChannelFirstFrames(env) if needs.observations == "frames" else env
