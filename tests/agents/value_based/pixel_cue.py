"""A pixel task that a working image learner solves in a few thousand steps: each 84x84 frame
shows a bright bar on the left or the right half (uniformly at random, anywhere from row 20 to
row 64, so that a 4-pixel shift keeps it on its side); the agent is rewarded +1 for the action
naming the side (0: left, 1: right) and -1 otherwise. Observations are the sliding stack of the
last 4 frames (the Atari layout the replay stores frame by frame); episodes last 20 steps.
Random play returns 0 on average, perfect play 20."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

SIZE, STACK, LENGTH = 84, 4, 20


class PixelCue(gym.Env):
    metadata = {"render_modes": []}

    def __init__(self):
        self.observation_space = gym.spaces.Box(0, 255, (STACK, SIZE, SIZE), np.uint8)
        self.action_space = gym.spaces.Discrete(2)
        self._stack = np.zeros((STACK, SIZE, SIZE), np.uint8)

    def _frame(self) -> np.ndarray:
        self._side = int(self.np_random.integers(2))
        frame = np.zeros((SIZE, SIZE), np.uint8)
        top = int(self.np_random.integers(20, 56))
        left = int(self.np_random.integers(8, 30)) + self._side * 42
        frame[top : top + 8, left : left + 4] = 255
        return frame

    def _push(self, frame: np.ndarray) -> np.ndarray:
        self._stack = np.concatenate([self._stack[1:], frame[None]])
        return self._stack.copy()

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self._stack[:] = 0
        self._t = 0
        return self._push(self._frame()), {}

    def step(self, action):
        reward = 1.0 if int(action) == self._side else -1.0
        self._t += 1
        return self._push(self._frame()), reward, False, self._t >= LENGTH, {}


def make_vec(num_envs: int = 1) -> gym.vector.VectorEnv:
    return gym.vector.SyncVectorEnv(
        [PixelCue for _ in range(num_envs)], autoreset_mode=gym.vector.AutoresetMode.SAME_STEP
    )
