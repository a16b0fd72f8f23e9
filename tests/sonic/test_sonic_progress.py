"""The contest reward and end rules on scripted RAM values (no emulator)."""

from __future__ import annotations

import pytest

from benchgen_sonic.levels import GAME_RULES, LEVELS_BY_TASK, SONIC2, SONIC3K, Level
from benchgen_sonic.progress import (
    COMPLETED,
    LIFE_LOST,
    SPECIAL_STAGE,
    ProgressTracker,
    check_start_level,
)
from benchgen_sonic.protocol import SonicProtocol


def tracker(end_x=1100, rules=GAME_RULES["SonicTheHedgehog-Genesis-v0"], x0=100, lives=3, **ram):
    t = ProgressTracker(Level("G", "S", end_x, rules=rules), SonicProtocol())
    t.reset({"x": x0, "lives": lives, **ram})
    return t


def run(t, xs, **ram):
    return [t.frame({"x": x, "lives": ram.pop("lives", 3), **ram}) for x in xs]


def test_reward_is_9000_times_progress_and_negative_going_back():
    t = tracker()  # 1000 pixels from start to end
    rewards, ends = zip(*run(t, [200, 300, 250]))
    assert rewards == pytest.approx((900.0, 900.0, -450.0)) and ends == (None, None, None)
    assert t.progress == pytest.approx(0.15) and t.max_progress == pytest.approx(0.2)


def test_progress_is_clipped_at_the_start():
    t = tracker()
    rewards = [r for r, _ in run(t, [50, 0, 100, 150])]
    assert rewards == [0.0, 0.0, 0.0, pytest.approx(450.0)]


def test_completion_bonus_shrinks_with_time():
    t = tracker()
    for _ in range(899):
        t.frame({"x": 100, "lives": 3})
    reward, end = t.frame({"x": 1200, "lives": 3})  # past the end: progress clips at 1
    assert end == COMPLETED
    # 900 frames of 18,000 elapsed: bonus 1000 * (1 - 900/18000) = 950
    assert reward == pytest.approx(9000.0 + 950.0)


def test_episode_total_is_9000_plus_bonus():
    t = tracker()
    total = sum(r for r, _ in run(t, [600, 400, 1100]))
    assert total == pytest.approx(9000.0 + 1000.0 * (1 - 3 / 18000))
    assert t.score == pytest.approx(total)


def test_score_has_no_drift_when_progress_returns_to_zero():
    t = tracker(end_x=100 + 7 * 13)
    run(t, [100 + 13 * k for k in (1, 2, 3, 4, 5, 6, 3, 0, -2)])
    assert t.score == 0.0  # the sum of the rewards would be a tiny non-zero number


def test_life_lost_ends_and_keeps_the_frames_reward():
    t = tracker()
    ((r1, e1),) = run(t, [300])
    reward, end = t.frame({"x": 400, "lives": 2})
    assert (e1, end) == (None, LIFE_LOST) and reward == pytest.approx(900.0)


def test_gaining_a_life_does_not_end():
    t = tracker()
    assert t.frame({"x": 100, "lives": 4})[1] is None
    assert t.frame({"x": 100, "lives": 3})[1] == LIFE_LOST  # relative to the last frame, as the script


def test_sonic2_bonus_stage_ends_the_episode():
    t = tracker(rules=GAME_RULES[SONIC2])
    assert t.frame({"x": 100, "lives": 3, "game_mode": 12})[1] is None
    assert t.frame({"x": 100, "lives": 3, "game_mode": 16})[1] == SPECIAL_STAGE


def test_sonic3k_act_change_shifts_the_offset_by_the_camera_jump():
    t = tracker(rules=GAME_RULES[SONIC3K], act=0, screen_x=0, special_stage=0)
    r1, _ = t.frame({"x": 600, "lives": 3, "act": 0, "screen_x": 400, "special_stage": 0})
    # the act changes: x and the camera restart 500 pixels further left; progress continues
    r2, _ = t.frame({"x": 110, "lives": 3, "act": 1, "screen_x": -90, "special_stage": 0})
    assert r1 == pytest.approx(4500.0)
    assert t.progress == pytest.approx((110 - 100 + 490) / 1000)
    assert t.frame({"x": 110, "lives": 3, "act": 1, "screen_x": -90, "special_stage": 1})[1] == SPECIAL_STAGE


def test_start_past_the_end_is_an_error():
    with pytest.raises(ValueError, match="past the end"):
        tracker(end_x=50)


def test_start_level_check():
    level = LEVELS_BY_TASK["sonic2-MetropolisZone.Act3"]
    check_start_level(level, {"zone": 5, "act": 0})
    with pytest.raises(RuntimeError, match="zone 4 act 2"):
        check_start_level(level, {"zone": 4, "act": 2})
