"""A rollout's observations, kept compactly: frame stacks stored one new frame per step.

Atari-style observations stack the last C frames (Mnih et al. 2015; the Sonic suite's agent
wrappers: 4 gray 84x84 frames), so consecutive observations of an episode share C - 1 frames: the
observation at step t is the one at t - 1 shifted by one frame, plus a new frame. A
:class:`StackedFrames` store keeps the newest frame of every step and a whole observation only
where the shift does not hold (the rollout's first step, an episode's first step), and rebuilds
any observation exactly from them: 188 Sonic workers x 8192 steps take 11 GiB instead of 43 GiB.
The shift is checked on the data, never assumed; a store whose observations turn out not to be
stacks (more whole observations than ``1 / KEY_SHARE`` of the steps) falls back to keeping every
observation whole, so the result is always exact. ``PlainFrames`` keeps every observation whole.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

#: the share of steps that may need a whole observation before a store stops compacting
KEY_SHARE = 0.25


def _array(shape, dtype, path: Path | None):
    """An array of zeros, memory-mapped at ``path`` if given (``.npy`` format)."""
    if path is None:
        return np.zeros(shape, dtype=dtype)
    path.parent.mkdir(parents=True, exist_ok=True)
    return np.lib.format.open_memmap(path, mode="w+", dtype=dtype, shape=shape)


def stackable(shape: tuple[int, ...], dtype) -> bool:
    """Whether observations of this shape may be channel-first frame stacks (uint8 (C, H, W))."""
    return np.dtype(dtype) == np.uint8 and len(shape) == 3 and 2 <= shape[0] <= 16 and min(shape[1:]) >= 8


class PlainFrames:
    """Every observation whole: ``(n_steps, n_envs, *shape)``."""

    def __init__(self, n_steps: int, n_envs: int, shape, dtype, path: Path | None = None):
        self.data = _array((n_steps, n_envs, *shape), dtype, path)

    def put(self, t: int, obs: np.ndarray) -> None:
        self.data[t] = obs

    def get(self, steps: np.ndarray, envs: np.ndarray) -> np.ndarray:
        return np.asarray(self.data[steps, envs])


class StackedFrames:
    """Frame stacks ``(C, H, W)``, one new frame per step; see the module docstring."""

    def __init__(self, n_steps: int, n_envs: int, shape, dtype, path: Path | None = None):
        self.n_steps, self.n_envs, self.shape, self.dtype, self.path = n_steps, n_envs, tuple(shape), dtype, path
        self.newest = _array((n_steps, n_envs, *self.shape[1:]), dtype, path)
        self.whole: dict[tuple[int, int], np.ndarray] = {}
        self.previous: np.ndarray | None = None
        #: set when the observations proved not to be stacks: every observation kept whole
        self.plain: PlainFrames | None = None

    def put(self, t: int, obs: np.ndarray) -> None:
        if self.plain is not None:
            self.plain.put(t, obs)
            return
        if t == 0:
            self.whole.clear()
        self.newest[t] = obs[:, -1]
        for i in range(self.n_envs):
            if t == 0 or not np.array_equal(obs[i, :-1], self.previous[i, 1:]):
                self.whole[(t, i)] = np.array(obs[i], copy=True)
        self.previous = np.array(obs, copy=True)
        if len(self.whole) > KEY_SHARE * self.n_steps * self.n_envs:
            self._give_up(t)

    def _give_up(self, t: int) -> None:
        """Not stacks after all: rebuild steps 0..t whole and keep every observation whole."""
        path = None if self.path is None else self.path.with_suffix(".whole.npy")
        plain = PlainFrames(self.n_steps, self.n_envs, self.shape, self.dtype, path)
        for s in range(t + 1):
            plain.data[s] = self.get(np.full(self.n_envs, s), np.arange(self.n_envs))
        self.plain, self.whole, self.newest = plain, {}, None

    def get(self, steps: np.ndarray, envs: np.ndarray) -> np.ndarray:
        if self.plain is not None:
            return self.plain.get(steps, envs)
        c = self.shape[0]
        out = np.empty((len(steps), *self.shape), dtype=self.dtype)
        for k, (t, i) in enumerate(zip(steps.tolist(), envs.tolist())):
            # walk back to the last whole observation (at most C - 1 steps), then shift frames in
            back = 0
            while back < c and (t - back, i) not in self.whole:
                back += 1
            if back == c:  # C new frames since the last whole observation
                out[k] = self.newest[t - c + 1 : t + 1, i]
            else:
                out[k, : c - back] = self.whole[(t - back, i)][back:]
                out[k, c - back :] = self.newest[t - back + 1 : t + 1, i]
        return out
