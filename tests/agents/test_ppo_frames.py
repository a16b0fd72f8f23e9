"""Joint PPO's compact rollouts (``benchgen_agents.ppo.frames``): frame stacks kept one new frame
per step give back every observation exactly, across episode starts, in memory and memory-mapped;
observations that are not stacks fall back to whole ones, still exact."""

from __future__ import annotations

import numpy as np
import pytest

from benchgen_agents.ppo.frames import KEY_SHARE, PlainFrames, StackedFrames, stackable

C, H, W = 4, 9, 8


def _stacked_rollout(rng, n_steps: int, n_envs: int, episode_end: float) -> np.ndarray:
    """Observations as a frame-stack wrapper makes them: each step shifts in a new frame; an
    episode starts with its first frame repeated C times."""
    obs = np.empty((n_steps, n_envs, C, H, W), dtype=np.uint8)
    stack = rng.integers(0, 256, (n_envs, C, H, W), dtype=np.uint8)
    for t in range(n_steps):
        obs[t] = stack
        frame = rng.integers(0, 256, (n_envs, H, W), dtype=np.uint8)
        stack = np.concatenate([stack[:, 1:], frame[:, None]], axis=1)
        for i in np.flatnonzero(rng.random(n_envs) < episode_end):
            stack[i] = frame[i]  # a new episode: its first frame, C times
    return obs


@pytest.mark.parametrize("mapped", [False, True])
def test_stacks_come_back_exactly_from_one_frame_per_step(tmp_path, mapped):
    rng = np.random.default_rng(0)
    store = StackedFrames(40, 3, (C, H, W), np.uint8, tmp_path / "v0.npy" if mapped else None)
    for _rollout in range(2):  # the second rollout starts where the first ended
        obs = _stacked_rollout(rng, 40, 3, episode_end=0.05)
        for t in range(40):
            store.put(t, obs[t])
        steps, envs = rng.integers(0, 40, 200), rng.integers(0, 3, 200)
        assert np.array_equal(store.get(steps, envs), obs[steps, envs])
        assert store.plain is None and 3 <= len(store.whole) < KEY_SHARE * 120  # compact
    assert (tmp_path / "v0.npy").is_file() == mapped


def test_observations_that_are_not_stacks_fall_back_to_whole_ones():
    rng = np.random.default_rng(1)
    obs = rng.integers(0, 256, (30, 2, C, H, W), dtype=np.uint8)  # no frame shared between steps
    store = StackedFrames(30, 2, (C, H, W), np.uint8)
    for t in range(30):
        store.put(t, obs[t])
    assert store.plain is not None
    steps, envs = np.divmod(np.arange(60), 2)
    assert np.array_equal(store.get(steps, envs), obs[steps, envs])


def test_only_uint8_channel_first_images_are_compacted():
    assert stackable((4, 84, 84), np.uint8)
    assert not stackable((4, 84, 84), np.float32) and not stackable((8,), np.float32)
    plain = PlainFrames(2, 1, (3,), np.float32)
    plain.put(1, np.ones((1, 3), np.float32))
    assert np.array_equal(plain.get(np.array([1]), np.array([0])), np.ones((1, 3)))
