"""The named Atari protocols reach the real emulator: frame skip, the cap, no-op starts, sticky
actions, the minimal action set, and the training-only life-loss signal (ale-py, no scripts)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from benchgen.errors import UsageError
from benchgen_atari_saber.env import SaberVectorEnv
from benchgen_atari_saber.protocols import (
    ALE2013,
    DQN2015,
    MACHADO2018,
    PRESETS,
    RAINBOW2018,
    SABER,
    AtariProtocol,
)
from benchgen_atari_saber.suite import AtariSaberSuite


def play(env: SaberVectorEnv, steps: int, seed: int = 0):
    """Uniformly random actions; returns the agent-side terminated count and the recorded ends."""
    rng = np.random.default_rng(seed)
    env.reset()
    terminated_flags, ends, rewards = 0, [], np.zeros(env.num_envs)
    for _ in range(steps):
        _, reward, terminated, _, _ = env.step(rng.integers(env.num_actions, size=env.num_envs))
        rewards += reward
        terminated_flags += int(terminated.sum())
        ends += env.pop_episode_ends()
    return terminated_flags, ends, rewards


def test_every_preset_documents_each_parameter_with_its_source():
    for preset in PRESETS.values():
        preset.validate()
        for name in (*AtariProtocol.CHANGEABLE, "task_score"):
            assert name in preset.sources or name in preset.open_values, f"{preset.name}.{name} has no source"


def test_the_best_policy_is_scored_by_dqn2015_and_rainbow2018_and_a_custom_protocol_says_which():
    for preset in (DQN2015, RAINBOW2018):
        assert preset.best_policy and preset.version == "2" and preset.evaluation_interval_frames == 4_000_000
        assert AtariSaberSuite(preset).evaluation_schedule().best_policy
        assert "section 3" in preset.sources["best_policy"] and "SABER section 2.1" in preset.sources["best_policy"]
    assert not any(p.best_policy for p in (SABER, MACHADO2018, ALE2013))
    # the score rule follows the switch; a protocol that never scores it records no best_policy key
    last = DQN2015.changed({"best_policy": False})
    assert "last evaluation round" in last.task_score and "best" not in last.task_score
    assert "best_policy" not in AtariSaberSuite(SABER).protocol()
    assert "best" in ALE2013.changed({"best_policy": True}).task_score
    with pytest.raises(UsageError, match="best_policy need evaluation phases"):
        SABER.changed({"best_policy": True})


@pytest.mark.parametrize(("frameskip", "steps_to_cap"), [(5, 400), (4, 500)])
def test_frameskip_is_applied_by_the_emulator(frameskip, steps_to_cap):
    """The emulator counts its cap in frames: 2,000 frames are 400 actions at frame skip 5 (ALE
    2013) and 500 at 4. Pong lasts far longer than 2,000 frames under random play."""
    protocol = ALE2013.changed({"frameskip": frameskip, "max_episode_frames": 2_000})
    env = SaberVectorEnv(["pong"], seed=0, protocol=protocol)
    try:
        assert env.frames_per_step == frameskip
        _, ends, _ = play(env, steps_to_cap - 1)
        assert ends == []
        ends = play_on(env, 1)
        assert [(e.end_reason, e.length_frames) for e in ends] == [("max_length", 2_000)]
    finally:
        env.close()


def play_on(env: SaberVectorEnv, steps: int):
    """NOOP for ``steps`` steps from where the env is; returns the recorded ends."""
    ends = []
    for _ in range(steps):
        env.step(np.zeros(env.num_envs, dtype=np.int64))
        ends += env.pop_episode_ends()
    return ends


def test_machado_cap_ends_episodes_at_five_minutes_without_saber_rules():
    """Machado et al.: the 18,000-frame cap and no stuck rule. Pitfall Harry standing still for
    5 minutes earns no reward and does not die: Machado's episode ends at the cap, SABER's by its
    stuck rule on the same frame."""
    env = SaberVectorEnv(["pitfall"], seed=0, protocol=MACHADO2018)
    try:
        env.reset()
        ends = play_on(env, 18_000 // 4)
        assert [(e.end_reason, e.length_frames, e.score) for e in ends] == [("max_length", 18_000, 0.0)]
    finally:
        env.close()
    saber = SaberVectorEnv(["pitfall"], seed=0, protocol=SABER)  # the same play is "stuck" under SABER
    try:
        saber.reset()
        ends = play_on(saber, 18_000 // 4)
        assert [e.end_reason for e in ends] == ["stuck"]
    finally:
        saber.close()


def first_frames(protocol: AtariProtocol, seeds: range) -> list[bytes]:
    """Seaquest's screen moves without input, so the no-op frames before it show."""
    out = []
    for seed in seeds:
        env = SaberVectorEnv(["seaquest"], seed=seed, protocol=protocol)
        try:
            obs, _ = env.reset()
            out.append(obs.tobytes())
        finally:
            env.close()
    return out


def test_noop_starts_vary_the_first_observation_and_their_absence_does_not():
    deterministic = DQN2015.changed({"noop_max": 0})
    assert len(set(first_frames(deterministic, range(4)))) == 1
    assert len(set(first_frames(DQN2015, range(8)))) > 1  # up to 30 no-op frames, drawn per seed


def trajectory(protocol: AtariProtocol, seed: int, steps: int = 300) -> bytes:
    env = SaberVectorEnv(["breakout"], seed=seed, protocol=protocol)
    try:
        env.reset()
        actions = np.random.default_rng(123).integers(env.num_actions, size=steps)  # the same for every seed
        frames = [env.step(np.array([a]))[0].tobytes() for a in actions]
        return b"".join(frames)
    finally:
        env.close()


@pytest.mark.parametrize("name", list(PRESETS))
def test_each_presets_stickiness_reaches_the_emulator(name):
    """Deterministic presets (DQN 2015, Rainbow 2018, ALE 2013): the same actions give the same game
    on every seed (their no-op starts, another source of variety, are switched off here). Sticky
    0.25 (SABER, Machado et al.): the seed decides which actions repeat, so the games differ. (The
    probability itself is measured per frame in test_atari_env_real.py.)"""
    protocol = PRESETS[name].changed({"noop_max": 0})
    games = {trajectory(protocol, seed) for seed in range(3)}
    assert len(games) == (1 if protocol.sticky_action_probability == 0 else 3)


def test_minimal_action_set_per_game_and_one_size_per_env():
    suite = AtariSaberSuite(DQN2015)
    for game, size in (("pong", 6), ("breakout", 4)):
        env = suite.make_env([game], seed=0)
        try:
            assert env.single_action_space.n == size
        finally:
            env.close()
    with pytest.raises(UsageError, match="minimal action sets differ"):
        suite.make_env(["pong", "breakout"], seed=0)
    env = AtariSaberSuite(SABER).make_env(["pong", "breakout"], seed=0)
    try:
        assert env.single_action_space.n == 18
    finally:
        env.close()


def test_life_loss_ends_training_episodes_only_and_never_touches_the_recorded_score():
    """DQN 2015: in training, each lost life reads to the agent as a terminated episode; the
    recorded episode still runs to game over with the whole game's score. In evaluation, and
    under SABER, terminated means game over."""
    life_loss = dataclasses.replace(DQN2015, noop_max=0)
    train = SaberVectorEnv(["breakout"], seed=0, mode="train", protocol=life_loss)
    try:
        flags, ends, rewards = play(train, 2_000)
    finally:
        train.close()
    games = [e for e in ends if e.end_reason == "game_over"]
    assert len(games) >= 2
    assert flags >= 5 * len(games)  # Breakout: five lives per game
    assert sum(e.score for e in ends) <= rewards[0]  # scores are whole games' raw rewards
    for mode, protocol in (("eval", life_loss), ("train", SABER)):
        env = SaberVectorEnv(["breakout"], seed=0, mode=mode, protocol=protocol)
        try:
            flags, ends, _ = play(env, 2_000)
        finally:
            env.close()
        assert flags == sum(e.end_reason == "game_over" for e in ends) > 0


def test_a_life_loss_final_observation_is_the_current_one_and_the_game_goes_on():
    env = SaberVectorEnv(["breakout"], seed=0, mode="train", protocol=dataclasses.replace(DQN2015, noop_max=0))
    try:
        env.reset()
        rng = np.random.default_rng(0)
        for _ in range(2_000):
            obs, _, terminated, truncated, info = env.step(rng.integers(env.num_actions, size=1))
            if terminated[0] and not env.pop_episode_ends():
                assert info["_final_obs"][0]
                np.testing.assert_array_equal(info["final_obs"][0], obs[0])  # no reset: the game continues
                return
        pytest.fail("no life was lost in 2,000 random steps of Breakout")
    finally:
        env.close()


def test_named_actions_exist_only_with_the_full_action_set():
    """JERK's 'right'/'jump' indices are the full set's; a minimal set numbers actions per game."""
    assert AtariSaberSuite(MACHADO2018).action_semantics()["right_jump"] == 11
    assert AtariSaberSuite(DQN2015).action_semantics() is None
    assert AtariSaberSuite().with_protocol("saber", {"full_action_space": False}).action_semantics() is None


@pytest.mark.parametrize("name", ["max_episode_frames", "max_stuck_frames", "evaluation_episodes"])
def test_a_count_beyond_what_the_emulator_can_hold_is_refused(name):
    """Issue 27 item 12: an episode cap of 10^18 was accepted (ale-py's counters are C ints)."""
    with pytest.raises(UsageError, match="must be at most 2,147,483,647"):
        SABER.changed({name: 10**18})
    assert SABER.changed({"max_episode_frames": 2**31 - 1}).max_episode_frames == 2**31 - 1
