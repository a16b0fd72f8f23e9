"""The SABER protocol as the emulator actually applies it, on real ale-py games.

Each test plays a real ROM; the whole file runs in well under a minute on 2 cores. Rare events
(score rollover, 30 minutes of play) are driven through the same code path with a scripted
backend in test_atari_env_rules.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from ale_py.vector_env import AtariVectorEnv

from benchgen_atari_saber.env import MAX_STUCK_FRAMES, SaberVectorEnv, ale_settings, env_seeds

NOOP, FIRE, RIGHT, LEFT = 0, 1, 3, 4


def native(game: str, seeds, **overrides) -> AtariVectorEnv:
    """ale-py's own vector env with the SABER settings (optionally changed), reset with ``seeds``."""
    env = AtariVectorEnv(game, len(seeds), num_threads=1, **{**ale_settings(), **overrides})
    env.reset(seed=np.asarray(seeds, dtype=np.int64))
    return env


def test_settings_are_sabers():
    s = ale_settings()
    assert s["repeat_action_probability"] == 0.25 and s["full_action_space"] is True
    assert s["episodic_life"] is False and s["life_loss_info"] is False
    assert s["noop_max"] == 0 and s["use_fire_reset"] is False and s["reward_clipping"] is False
    assert s["max_num_frames_per_episode"] == 100 * 60 * 60 * 60 == 21_600_000
    assert (s["frameskip"], s["stack_num"], s["img_height"], s["img_width"]) == (4, 4, 84, 84)
    assert s["maxpool"] is True and s["grayscale"] is True


def test_identical_to_native_env_and_a_lost_life_does_not_end_the_episode():
    """Step for step the same as AtariVectorEnv(**ale_settings()); lives are lost mid-episode,
    the episode ends only at game over, and ``lives`` never reaches the agent."""
    env = SaberVectorEnv(["breakout"], seed=3)
    obs, info = env.reset()
    twin = AtariVectorEnv("breakout", 1, num_threads=1, **ale_settings())
    twin_obs, twin_info = twin.reset(seed=env_seeds(3, 1))
    assert np.array_equal(obs, twin_obs) and "lives" not in info and "lives" in twin_info
    rng = np.random.default_rng(0)
    lives, total, steps, lives_lost_mid_episode = int(twin_info["lives"][0]), 0.0, 0, 0
    actions, observations = [], []
    while True:
        action = rng.choice([FIRE, RIGHT, LEFT, NOOP], size=1)  # FIRE launches the ball
        obs, rew, term, trunc, info = env.step(action)
        actions.append(action)
        observations.append(obs)
        t_obs, t_rew, t_term, t_trunc, t_info = twin.step(action)
        steps += 1
        total += rew[0]
        assert "lives" not in info
        assert np.array_equal(obs, t_obs) and rew[0] == t_rew[0] and term[0] == t_term[0] and not trunc[0]
        if term[0]:
            break
        if t_info["lives"][0] < lives:
            lives_lost_mid_episode += 1
        lives = int(t_info["lives"][0])
    twin.close()
    assert lives_lost_mid_episode == 4  # Breakout's 5 balls: 4 losses go by, the 5th is game over
    (end,) = env.pop_episode_ends()
    assert (end.end_reason, end.score, end.length_frames) == ("game_over", total, 4 * steps)
    env.close()
    # another seed gives another game under the same actions (sticky actions are seeded per env)
    other = SaberVectorEnv(["breakout"], seed=4)
    other.reset()
    same = [np.array_equal(other.step(a)[0], o) for a, o in zip(actions, observations)]
    other.close()
    assert not all(same)


def test_sticky_actions_are_decided_per_frame_inside_the_frame_skip():
    """Machado et al.: at every emulator frame the previous action repeats with p = 0.25.

    Every sub-env plays one fixed action sequence from Breakout's fixed start; the game itself is
    deterministic (no no-op starts, the ball is never launched), so a sub-env leaves the p = 0
    trajectory only when stickiness delays an action switch. That happens when the first frame
    of the switching step repeats the old action: p = 0.25 per switch. The delay then lasts
    L = 1, 2, 3 or 4 frames with odds 0.75 : 0.1875 : 0.047 : 0.016. Were the repeat decided
    once per agent step, every delay would be a whole step, and each divergence would look
    exactly like the p = 0 game with that switch postponed one step; per frame, only delays of
    2+ frames can (Breakout shows inputs one frame late), i.e. about a quarter of them.
    """
    n, rounds = 4, 32
    switches = [3, 5, 7, 9, 11, 13, 15]  # NOOP x3, then RIGHT/LEFT alternating every 2 steps
    seq = [NOOP] * 3 + [RIGHT, RIGHT, LEFT, LEFT] * 3 + [RIGHT, RIGHT]

    ref = native("breakout", [0], repeat_action_probability=0.0)  # deterministic: p = 0

    def reference(actions):
        ref.reset()  # unseeded reset: no ROM reload; nothing random to seed at p = 0
        return [ref.step(np.array([a]))[0][0] for a in actions]

    expected = reference(seq)
    postponed = {s: reference(seq[:s] + [seq[s - 1]])[s] for s in switches}
    ref.close()

    env = SaberVectorEnv(["breakout"] * n, seed=11)
    env.reset()
    seen = diverged = whole_step = 0
    for _ in range(rounds):
        alive = np.ones(n, dtype=bool)  # still on the deterministic trajectory
        for step, action in enumerate(seq):
            obs, *_ = env.step(np.full(n, action))
            off = alive & (obs != expected[step]).reshape(n, -1).any(axis=1)
            assert step >= switches[0] or not off.any(), "diverged before any action switch"
            if step in switches:
                seen += int(alive.sum())
                whole_step += int((off & (obs == postponed[step]).reshape(n, -1).all(axis=1)).sum())
            diverged += int(off.sum())
            alive &= ~off
        env.reset()  # unseeded: the emulators' random streams go on
    env.close()
    p = diverged / seen
    assert abs(p - 0.25) < 0.065, f"estimated sticky probability {p:.3f} over {seen} switches"
    assert seen > 300, f"only {seen} switches observed"  # (measured: p = 0.259 over 428 switches)
    assert whole_step / diverged < 0.5, f"{whole_step}/{diverged} delays looked like whole-step delays"


def test_no_fire_on_reset_and_stuck_after_18000_frames():
    """Breakout waits for FIRE: without it nothing moves and nothing scores, so doing nothing is
    stuck after exactly 18,000 frames (4,500 steps of 4 frames)."""
    env = SaberVectorEnv(["breakout"], seed=0)
    env.reset()
    noop = np.zeros(1, dtype=np.int64)
    for _ in range(4):
        first, *_ = env.step(noop)  # the frame stack fills with the start screen
    steps = 4
    for _ in range(MAX_STUCK_FRAMES // 4 - 5):
        obs, rew, term, trunc, _ = env.step(noop)
        steps += 1
        assert rew[0] == 0 and not term[0] and not trunc[0]
        if steps < 100:
            assert np.array_equal(obs, first), "the screen moved: a ball was launched without FIRE"
    obs, rew, term, trunc, info = env.step(noop)
    assert trunc[0] and not term[0] and np.array_equal(info["final_obs"][0], first[0])
    (end,) = env.pop_episode_ends()
    assert (end.end_reason, end.length_frames, end.score) == ("stuck", 18_000, 0.0)
    assert end.extras == {"score_5min": 0.0, "score_30min": 0.0}
    env.close()
    # the same ROM with ale-py's FIRE-on-reset launches the ball: the screen moves
    fired = native("breakout", [0], use_fire_reset=True)
    frames = [fired.step(noop)[0] for _ in range(30)]
    fired.close()
    assert not np.array_equal(frames[4], frames[29])


@pytest.mark.parametrize("game, low, high", [("skiing", -30_000, -5_000), ("journey_escape", -60_000, 0)])
def test_large_legit_negative_rewards_are_not_corrected(game, low, high):
    """Random play on Skiing and Journey Escape gives single rewards far below SABER's -1000
    rollover rule; they stay uncorrected and the scores are in the random baselines' range
    (world_records.csv: -16,268 and -19,977)."""
    env = SaberVectorEnv([game], seed=0)
    env.reset()
    rng = np.random.default_rng(0)
    rewards = []
    while True:
        _, rew, term, trunc, _ = env.step(rng.integers(0, 18, size=1))
        rewards.append(rew[0])
        if term[0] or trunc[0]:
            break
    env.close()
    (end,) = env.pop_episode_ends()
    assert min(rewards) <= -1_000  # SABER's text rule would have "corrected" this
    assert end.events == [] and end.score == sum(rewards) and end.end_reason == "game_over"
    assert low < end.score < high


def test_score_marks_on_a_real_game():
    """The 5- and 30-minute views are the cumulative score at those frames (here shrunk to 400 and
    2,000 frames, same code), the final score if the episode is shorter."""
    env = SaberVectorEnv(["pong"], seed=0, score_marks={"score_5min": 400, "score_30min": 2_000})
    env.reset()
    rng = np.random.default_rng(0)
    rewards = []
    while True:
        _, rew, term, trunc, _ = env.step(rng.integers(0, 18, size=1))
        rewards.append(rew[0])
        if term[0] or trunc[0]:
            break
    env.close()
    (end,) = env.pop_episode_ends()
    cumulative = np.cumsum(rewards)
    assert end.extras == {"score_5min": cumulative[99], "score_30min": cumulative[499]}
    assert cumulative[99] != cumulative[499] != end.score  # three different numbers: a real check


def test_infinite_gameplay_on_real_games_with_a_small_cap():
    """Joint env: Atlantis (random play keeps scoring) and Breakout (NOOP: never scores) both
    reach a 2,000-frame cap; only the one still scoring is infinite gameplay."""
    env = SaberVectorEnv(["atlantis", "breakout"], seed=0, max_episode_frames=2_000)
    env.reset()
    rng = np.random.default_rng(1)
    gains = 0
    for step in range(500):
        obs, rew, term, trunc, info = env.step(np.array([rng.integers(0, 18), NOOP]))
        gains += rew[0] > 0
        assert not term.any() and trunc.all() == (step == 499) and "lives" not in info
    ends = {e.task: e for e in env.pop_episode_ends()}
    env.close()
    assert gains > 0
    assert (ends["atlantis"].end_reason, ends["atlantis"].score) == ("max_length", math.inf)
    assert (ends["breakout"].end_reason, ends["breakout"].score) == ("max_length", 0.0)
    assert math.isfinite(ends["atlantis"].extras["score_5min"])
    assert ends["atlantis"].length_frames == ends["breakout"].length_frames == 2_000


def test_every_game_takes_all_18_actions():
    """Full action set everywhere; Skiing (9 legal actions in ale-py) takes all 18 too."""
    env = SaberVectorEnv(["pong", "skiing"], seed=0)
    env.reset()
    assert env.single_action_space.n == 18 and env.action_space.shape == (2,)
    for action in range(18):
        obs, *_ = env.step(np.array([action, action]))
        assert env.observation_space.contains(obs)
    for bad in (18, -1):
        with pytest.raises(ValueError):
            env.step(np.array([bad, 0]))
    env.close()
