"""SABER's episode rules in SaberVectorEnv, driven through a scripted backend.

The backend stands in for ale-py's AtariVectorEnv (same reset/send/recv surface, same SAME_STEP
autoreset and frame cap semantics) and plays a reward script, so that rare events (a score
counter wrapping at 1,000,000, 30 minutes of play, the 100-hour cap) go through exactly the code
path real games use, in milliseconds. The same rules on real games: test_atari_env_real.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from types import SimpleNamespace

import numpy as np
import pytest

from benchgen_atari_saber.env import (
    MAX_STUCK_FRAMES,
    NUM_ACTIONS,
    OBS_SHAPE,
    ROLLOVER_THRESHOLD,
    SaberVectorEnv,
    env_seeds,
    full_action_map,
    rollover_correction,
)

#: reward script: (sub-env index within the backend, episode step 1, 2, ...) -> (reward, game_over)
Script = Callable[[int, int], tuple[int, bool]]


class ScriptedBackend:
    """A fake AtariVectorEnv: plays ``script``; observations encode (episode count, step)."""

    def __init__(
        self,
        game: str,
        num_envs: int,
        max_episode_frames: int,
        num_threads: int,
        script: Script,
        action_set: list[int] | None = None,
    ):
        self.game, self.n, self.cap, self.script = game, num_envs, max_episode_frames, script
        self.ale = SimpleNamespace(get_action_set=lambda: list(action_set or range(NUM_ACTIONS)))
        self.steps = np.zeros(num_envs, dtype=np.int64)  # agent steps in the current episode
        self.episodes = np.zeros(num_envs, dtype=np.int64)
        self.sent: list[np.ndarray] = []
        self.resets: list[tuple] = []

    def _obs(self) -> np.ndarray:
        obs = np.zeros((self.n, *OBS_SHAPE), dtype=np.uint8)
        obs[:, 0, 0, 0] = self.episodes % 256
        obs[:, 0, 0, 1] = self.steps % 256
        return obs

    def reset(self, seed=None, options=None):
        mask = np.ones(self.n, bool) if options is None else options["reset_mask"]
        self.resets.append((None if seed is None else np.asarray(seed).tolist(), mask.tolist()))
        self.steps[mask] = 0
        self.episodes[mask] += 1
        return self._obs(), {"lives": np.full(self.n, 3)}

    def send(self, actions):
        self.sent.append(np.array(actions))

    def recv(self):
        self.steps += 1
        rewards = np.zeros(self.n, dtype=np.int32)
        terminated = np.zeros(self.n, dtype=bool)
        for i in range(self.n):
            rewards[i], terminated[i] = self.script(i, int(self.steps[i]))
        truncated = ~terminated & (self.steps * 4 >= self.cap)  # ale-py counts the cap in frames
        info = {"env_id": np.arange(self.n), "lives": np.full(self.n, 3)}
        done = terminated | truncated
        if done.any():  # SAME_STEP autoreset, as ale-py does it
            info["final_obs"] = self._obs()
            self.steps[done] = 0
            self.episodes[done] += 1
        return self._obs(), rewards, terminated, truncated, info

    def close(self):
        pass


def make(tasks, script: Script, **kwargs) -> tuple[SaberVectorEnv, dict[str, ScriptedBackend]]:
    backends: dict[str, ScriptedBackend] = {}
    action_sets = kwargs.pop("action_sets", {})

    def factory(game, num_envs, cap, threads):
        backends[game] = ScriptedBackend(game, num_envs, cap, threads, script, action_sets.get(game))
        return backends[game]

    env = SaberVectorEnv(tasks, seed=kwargs.pop("seed", 0), backend_factory=factory, **kwargs)
    env.reset()
    return env, backends


def play(env: SaberVectorEnv, steps: int, action: int = 0):
    """Step ``steps`` times; return per-step rewards/terminated/truncated and all episode ends."""
    rewards, truncs, ends = [], [], []
    for _ in range(steps):
        _, r, _, tr, info = env.step(np.full(env.num_envs, action))
        assert "lives" not in info
        rewards.append(r)
        truncs.append(tr)
        ends += env.pop_episode_ends()
    return np.array(rewards), np.array(truncs), ends


# --- score counter rollover (SABER appendix C) -------------------------------------------------


def test_rollover_is_corrected_logged_and_seen_corrected_by_the_agent():
    # an Asterix-like wrap at step 3: the counter goes 999,980 -> 10, i.e. a reward of -999,970
    def script(i, step):
        return {1: 500, 3: -999_970, 4: 20}.get(step, 0), step == 5

    env, _ = make(["asterix"], script)
    rewards, _, ends = play(env, 5)
    assert rewards[:, 0].tolist() == [500, 0, 30, 20, 0]  # what the agent sees: +30, not -999,970
    (end,) = ends
    assert end.score == 550 and end.end_reason == "game_over" and end.length_frames == 20
    assert end.events == [{"type": "rollover", "frame": 12, "reward": -999_970, "correction": 1_000_000}]


def test_legit_large_negative_rewards_are_not_rollovers():
    # Skiing gives single rewards near -10,000 and Journey Escape -2,000: SABER's -1000 rule is wrong
    def script(i, step):
        return {1: -8_505, 2: -2_000, 3: -899_999}.get(step, 0), step == 3

    env, _ = make(["skiing"], script)
    rewards, _, (end,) = play(env, 3)
    assert rewards[:, 0].tolist() == [-8_505, -2_000, -899_999]
    assert end.score == -910_504 and end.events == []


def test_rollover_threshold_boundary_and_correction_arithmetic():
    assert ROLLOVER_THRESHOLD == -900_000
    assert rollover_correction(-900_000) == 1_000_000
    assert rollover_correction(-999_999) == 1_000_000
    assert rollover_correction(-1_000_000) == 1_000_000
    assert rollover_correction(-9_999_990) == 10_000_000  # a 7-digit counter (Video Pinball)

    env, _ = make(["video_pinball"], lambda i, s: (-900_000 if s == 1 else 0, s == 1))
    rewards, _, (end,) = play(env, 1)
    assert rewards[0, 0] == 100_000 and end.score == 100_000 and len(end.events) == 1


# --- max stuck time, infinite gameplay ---------------------------------------------------------


def test_stuck_after_exactly_18000_frames_without_reward():
    # env 0 never scores; env 1 scores every 1000 steps (4000 frames) and is never stuck
    env, backends = make(["battle_zone"] * 2, lambda i, s: (1 if i == 1 and s % 1000 == 0 else 0, False))
    backend = backends["battle_zone"]
    steps = MAX_STUCK_FRAMES // 4
    _, truncs, ends = play(env, steps - 1)
    assert not truncs.any() and ends == []
    obs, _, term, trunc, info = env.step(np.zeros(2, dtype=np.int64))
    assert trunc.tolist() == [True, False] and not term.any()
    assert info["_final_obs"].tolist() == [True, False]
    assert info["final_obs"][0, 0, 0, 1] == steps % 256  # the stuck episode's last frame ...
    assert obs[0, 0, 0, 1] == 0 and obs[0, 0, 0, 0] == 2  # ... and the first of a fresh episode
    assert backend.resets[-1] == (None, [True, False])  # reset by mask, random stream kept
    (end,) = env.pop_episode_ends()
    assert (end.env_index, end.end_reason, end.length_frames, end.score) == (0, "stuck", 18_000, 0.0)
    assert end.extras == {"score_5min": 0.0, "score_30min": 0.0}


def test_infinite_gameplay_when_still_scoring_at_the_cap():
    # a reward every 100 steps (400 frames) keeps every env clear of the 2,000-frame stuck limit;
    # env 0 gains each time, env 1 only loses, env 2 gained once (step 100) and then only loses
    def script(i, s):
        if s % 100:
            return 0, False
        return [1, -1, 1 if s == 100 else -1][i], False

    env, _ = make(["atlantis"] * 3, script, max_episode_frames=4_000, max_stuck_frames=2_000)
    _, truncs, ends = play(env, 1_000)
    assert truncs[-1].tolist() == [True, True, True] and not truncs[:-1].any()
    by_env = {e.env_index: e for e in ends}
    assert [by_env[i].end_reason for i in range(3)] == ["max_length"] * 3
    assert by_env[0].score == math.inf  # gained within the last stuck window: infinite gameplay
    assert by_env[1].score == -10  # rewarded, but the score is not going up: finite
    assert by_env[2].score == -8  # its last gain is older than the stuck window: finite
    assert by_env[0].extras["score_5min"] == 10  # the 5/30-minute views stay finite raw scores
    assert all(e.length_frames == 4_000 for e in ends)


def test_cap_below_the_stuck_window_without_any_reward_is_finite():
    env, _ = make(["atlantis"], lambda i, s: (0, False), max_episode_frames=4_000)
    _, _, (end,) = play(env, 1_000)
    assert (end.end_reason, end.score, end.length_frames) == ("max_length", 0.0, 4_000)


def test_cap_and_stuck_on_the_same_step_is_stuck():
    # last reward at step 500 (frame 2000); cap at frame 4000 = stuck limit 2000 frames later
    env, _ = make(
        ["atlantis"], lambda i, s: (5 if s == 500 else 0, False), max_episode_frames=4_000, max_stuck_frames=2_000
    )
    _, _, (end,) = play(env, 1_000)
    assert end.end_reason == "stuck" and end.score == 5


# --- 5- and 30-minute scores ---------------------------------------------------------------------


def test_score_marks_at_5_and_30_minutes():
    # one point per step (4 frames) for 30,000 steps = 120,000 frames, longer than 30 minutes
    env, _ = make(["pong"], lambda i, s: (1, s == 30_000))
    _, _, (end,) = play(env, 30_000)
    assert end.score == 30_000 and end.length_frames == 120_000
    assert end.extras == {"score_5min": 18_000 / 4, "score_30min": 108_000 / 4}


def test_short_episode_marks_are_the_final_score():
    env, _ = make(["pong"], lambda i, s: (2, s == 10))
    _, _, (end,) = play(env, 10)
    assert end.extras == {"score_5min": 20.0, "score_30min": 20.0}


def test_score_marks_must_fall_on_step_boundaries():
    with pytest.raises(ValueError, match="multiple of 4"):
        make(["pong"], lambda i, s: (0, False), score_marks={"score_odd": 18_001})


# --- joint envs, actions, seeds ------------------------------------------------------------------


def test_joint_env_routes_actions_and_gathers_observations():
    skiing_set = [0, 2, 3, 4, 5, 6, 7, 8, 9]  # ale-py's Skiing: the 9 actions without the button
    env, backends = make(["pong", "skiing", "pong"], lambda i, s: (i + 1, s == 3), action_sets={"skiing": skiing_set})
    obs, rewards, term, _, info = env.step(np.array([17, 17, 1]))
    assert backends["pong"].sent[-1].tolist() == [17, 1]
    assert backends["skiing"].sent[-1].tolist() == [8]  # DOWNLEFTFIRE -> DOWNLEFT (index 8)
    assert rewards.tolist() == [1, 1, 2]  # backend-local index i -> reward i + 1
    assert env.single_action_space.n == 18 and obs.shape == (3, *OBS_SHAPE)
    env.step(np.zeros(3, dtype=np.int64))
    _, _, term, _, info = env.step(np.zeros(3, dtype=np.int64))
    assert term.all() and info["final_obs"][:, 0, 0, 1].tolist() == [3, 3, 3]
    assert sorted((e.env_index, e.task, e.score) for e in env.pop_episode_ends()) == [
        (0, "pong", 3.0),
        (1, "skiing", 3.0),
        (2, "pong", 6.0),
    ]


def test_full_action_map():
    assert full_action_map(range(18)).tolist() == list(range(18))
    skiing = full_action_map([0, 2, 3, 4, 5, 6, 7, 8, 9])
    assert skiing.tolist() == [0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8]
    with pytest.raises(ValueError):
        full_action_map([1, 2])  # no NOOP: FIRE-less actions have nowhere to go


@pytest.mark.parametrize("actions", [np.array([18]), np.array([-1]), np.array([0, 0]), np.array([0.5])])
def test_bad_actions_raise_instead_of_hanging_the_emulator(actions):
    env, _ = make(["pong"], lambda i, s: (0, False))
    with pytest.raises(ValueError):
        env.step(actions)


def test_seeds_are_explicit_per_env_and_reset_mask_is_honoured():
    env, backends = make(["pong"] * 3, lambda i, s: (0, False), seed=5)
    backend = backends["pong"]
    assert backend.resets[0] == (env_seeds(5, 3).tolist(), [True] * 3)  # first reset: make_env's seed
    env.reset()
    assert backend.resets[-1] == (None, [True] * 3)  # later unseeded resets keep the streams
    env.reset(seed=9, options={"reset_mask": np.array([False, True, False])})
    assert backend.resets[-1] == ([env_seeds(9, 3)[1]], [False, True, False])
    assert len(set(env_seeds(0, 8).tolist())) == 8
    assert not set(env_seeds(0, 4).tolist()) & set(env_seeds(1, 4).tolist())
