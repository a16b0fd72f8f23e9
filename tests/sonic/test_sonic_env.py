"""The single-emulator env on the real stable-retro emulator (Airstriker test integration)."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from benchgen_sonic.env import BUTTONS as BUTTON_NAMES
from benchgen_sonic.env import EPISODE_INFO_KEY, button_mask, mask_to_buttons
from benchgen_sonic.testing import buttons

NOOP, RIGHT, LEFT = buttons(), buttons("RIGHT"), buttons("LEFT")


def play(env, actions):
    """Step through ``actions``; stop at the episode's end. Returns (rewards, last info, flags)."""
    rewards = []
    for action in actions:
        _, reward, terminated, truncated, info = env.step(action)
        rewards.append(reward)
        if terminated or truncated:
            return rewards, info, (terminated, truncated)
    return rewards, info, (False, False)


def test_passes_the_gymnasium_env_checker(level_env):
    env = level_env(end_dx=1000)
    check_env(env, skip_render_check=True)
    obs, info = env.reset(seed=0)
    assert obs.shape == (224, 320, 3) and obs.dtype == np.uint8
    assert info == {}


def test_progress_reward_on_the_emulator(level_env):
    """x moves 5 per frame: 20 per timestep, a fifth of the 100-pixel level, 1800 points."""
    env = level_env(sticky_prob=0.0)
    env.reset(seed=0)
    rewards, info, _ = play(env, [RIGHT, RIGHT, LEFT, LEFT, LEFT, RIGHT, RIGHT])
    # back below the start the reward is 0 (progress clipped), going back costs what it gave
    assert rewards == pytest.approx([1800, 1800, -1800, -1800, 0, 0, 1800])
    assert info == {}  # nothing but the episode facts, and only at the end


def test_completion_ends_on_the_frame_and_pays_the_bonus(level_env):
    env = level_env(end_dx=90, sticky_prob=0.0)  # 18 frames: the 5th step ends on its 2nd frame
    env.reset(seed=0)
    rewards, info, (terminated, truncated) = play(env, [RIGHT] * 10)
    facts = info[EPISODE_INFO_KEY]
    assert (terminated, truncated, len(rewards)) == (True, False, 5)
    assert facts["end_reason"] == "completed"
    assert facts["length_frames"] == 18
    assert facts["score"] == pytest.approx(sum(rewards))
    assert facts["score"] == pytest.approx(9000 + 1000 * (1 - 18 / 18000))
    assert facts["x_progress"] == 1.0


def test_time_limit_truncates(level_env):
    env = level_env(end_dx=1000, max_timesteps=12)
    env.reset(seed=0)
    rewards, info, (terminated, truncated) = play(env, [NOOP] * 20)
    facts = info[EPISODE_INFO_KEY]
    assert (terminated, truncated, len(rewards)) == (False, True, 12)
    assert (facts["end_reason"], facts["length_frames"], facts["timesteps"]) == ("time_limit", 48, 12)
    assert facts["score"] == 0.0


def test_life_lost_terminates(level_env):
    env = level_env(end_dx=1000)
    env.reset(seed=0)
    rewards, info, (terminated, truncated) = play(env, [NOOP] * 200)  # an idle ship is shot down
    facts = info[EPISODE_INFO_KEY]
    assert (terminated, truncated, facts["end_reason"]) == (True, False, "life_lost")
    assert len(rewards) < 200 and facts["length_frames"] <= 4 * len(rewards)


class RecordingEmulator:
    """Stands in for the emulator core and records the buttons held on every frame."""

    def __init__(self, emulator):
        self.emulator, self.frames = emulator, []
        self._mask = None

    def set_button_mask(self, mask, player):
        self._mask = np.array(mask)
        self.emulator.set_button_mask(mask, player)

    def step(self):
        self.frames.append(self._mask)
        self.emulator.step()


def record_sticky(env, seed, steps, reset_every):
    """Alternate LEFT/RIGHT every step; return per step (4 applied frames, action, first step?)."""
    recorder = RecordingEmulator(env.emulator)
    env.emulator = recorder
    env.reset(seed=seed)
    out = []
    for t in range(steps):
        if t and t % reset_every == 0:
            env.reset()
        action = RIGHT if t % 2 else LEFT
        recorder.frames.clear()
        env.step(action)
        out.append((list(recorder.frames), action, t % reset_every == 0))
    env.emulator = recorder.emulator
    return out


def test_sticky_frame_skip_delays_a_quarter_of_the_actions_by_one_frame(level_env):
    env = level_env(end_dx=1000, max_timesteps=10_000)
    steps = record_sticky(env, seed=7, steps=600, reset_every=40)
    delays, first_steps = [], []
    for frames, action, first in steps:
        assert len(frames) == 4
        # from the second frame on the new action is always held
        assert all(np.array_equal(f[[6, 7]], action[[6, 7]]) for f in frames[1:])
        delayed = not np.array_equal(frames[0][[6, 7]], action[[6, 7]])
        (first_steps if first else delays).append(delayed)
        if delayed:  # a delayed first frame holds the previous step's action (the opposite one)
            assert np.array_equal(frames[0][[6, 7]], action[[7, 6]])
    assert not any(first_steps), "the first step after a reset must never be delayed"
    rate = float(np.mean(delays))
    assert abs(rate - 0.25) < 0.06, rate  # 585 draws: std 0.018


def test_sticky_delays_are_seeded(level_env):
    env = level_env(end_dx=1000, max_timesteps=10_000)

    def pattern(seed):
        return [not np.array_equal(f[0], f[1]) for f, _, _ in record_sticky(env, seed, 60, 1000)]

    assert pattern(3) == pattern(3)
    assert pattern(3) != pattern(4)


def test_no_delays_without_stickiness(level_env):
    env = level_env(end_dx=1000, sticky_prob=0.0)
    assert all(np.array_equal(f[0], f[1]) for f, _, _ in record_sticky(env, 0, 40, 1000))


def test_same_seed_same_episode(level_env):
    env = level_env(end_dx=1000)
    rng = np.random.default_rng(0)
    actions = rng.integers(0, 2, size=(60, 12), dtype=np.int8)

    def trajectory(seed):
        obs, _ = env.reset(seed=seed)
        out = [obs.sum()]
        for a in actions:
            obs, reward, *_ = env.step(a)
            out += [obs.sum(), reward]
        return out

    assert trajectory(11) == trajectory(11)


def test_impossible_and_pause_buttons_are_filtered(level_env):
    """stable-retro's FILTERED actions (gym-retro's default): no START/MODE, no LEFT+RIGHT."""
    env = level_env(end_dx=1000)
    recorder = RecordingEmulator(env.emulator)
    env.emulator = recorder
    env.reset(seed=0)
    env.step(buttons("START", "MODE", "RIGHT", "B"))
    env.step(buttons("LEFT", "RIGHT"))
    env.emulator = recorder.emulator
    pressed = [{BUTTON_NAMES[i] for i in np.flatnonzero(f)} for f in recorder.frames]
    assert pressed[:4] == [{"RIGHT", "B"}] * 4
    assert all(len(p & {"LEFT", "RIGHT"}) < 2 for p in pressed[4:])


def test_button_masks_are_the_binary_button_vector():
    assert button_mask("B") == 1 and button_mask("RIGHT", "B") == 129
    masks = np.arange(4096)
    vectors = mask_to_buttons(masks)
    assert vectors.shape == (4096, 12) and len({v.tobytes() for v in vectors}) == 4096
    assert (vectors @ (1 << np.arange(12)) == masks).all()
    assert mask_to_buttons(button_mask("LEFT", "DOWN")).tolist() == buttons("LEFT", "DOWN").tolist()
    for bad in (4096, -1, 2.5):
        with pytest.raises(ValueError, match="button masks"):
            mask_to_buttons(np.array([1, bad]))
