"""The Atari suite's emulator capabilities (issue 30 item 1; ``plugins/atari_saber/emulators.py``):
RAM, the palette screen, state clone/restore and per-frame actions, on real ale-py emulators."""

from __future__ import annotations

import numpy as np
import pytest

from benchgen.capabilities import emulators_of
from benchgen_atari_saber.suite import AtariSaberSuite
from tests.conftest import assert_usage_error, run_cli


def capable(preset: str = "ale2013", **changes):
    return AtariSaberSuite().with_protocol(preset, changes).with_capabilities(["ram", "clone_state"])


def played(env, actions) -> np.ndarray:
    obs = None
    for a in actions:
        obs = env.step(np.array([a]))[0]
    return obs


def test_the_fast_native_env_offers_none_and_the_capable_one_all():
    native = AtariSaberSuite().make_env(["breakout"], seed=0)
    try:
        assert emulators_of(native) is None
    finally:
        native.close()
    env = capable().make_env(["breakout"], seed=0)
    try:
        em = emulators_of(env)
        assert (
            em.capabilities
            == AtariSaberSuite().capabilities()
            == {"ram", "palette_screen", "clone_state", "frame_actions"}
        )
        env.reset(seed=0)
        assert em.ram(0).shape == (128,) and em.ram(0).dtype == np.uint8
        screen = em.palette_screen(0)
        assert screen.shape == (210, 160) and screen.max() < 128  # the paper's 7-bit colours
    finally:
        env.close()


@pytest.mark.parametrize("sticky", [0.0, 0.25])
def test_planning_in_the_sandbox_leaves_the_real_episode_as_it_was(sticky):
    # two envs, same seed and actions; one plans 200 simulated steps between its real steps. Under
    # sticky actions too: the sandbox restores the emulator's random generator.
    suite = capable("machado2018", sticky_action_probability=sticky)
    plain, planning = suite.make_env(["breakout"], seed=3), suite.make_env(["breakout"], seed=3)
    try:
        plain.reset(seed=3)
        planning.reset(seed=3)
        em = emulators_of(planning)
        script = [1, 3, 3, 4, 1, 0, 3, 4] * 6
        played(plain, script[:20])
        played(planning, script[:20])
        ram, screen = em.ram(0), em.palette_screen(0)
        key = em.state_key(0)
        with em.sandbox(0):
            start = em.clone_state(0)
            rewards = [em.simulate(0, a)[0] for a in np.random.default_rng(0).integers(0, 18, 200)]
            assert em.state_key(0) != key
            em.restore_state(0, start)
            assert em.state_key(0) == key  # a round trip
            em.simulate(0, 3)
        assert sum(rewards) >= 0
        assert np.array_equal(em.ram(0), ram) and np.array_equal(em.palette_screen(0), screen)
        assert np.array_equal(played(plain, script[20:]), played(planning, script[20:]))
    finally:
        plain.close()
        planning.close()


def test_simulating_outside_a_sandbox_is_refused():
    env = capable().make_env(["pong"], seed=0)
    try:
        env.reset(seed=0)
        with pytest.raises(RuntimeError, match="sandbox"):
            emulators_of(env).simulate(0, 0)
    finally:
        env.close()


def test_per_frame_actions_play_one_action_a_frame():
    # five equal per-frame actions are the step's action repeated; five different ones are not
    suite = capable()
    a, b, c = (suite.make_env(["breakout"], seed=0) for _ in range(3))
    try:
        for env in (a, b, c):
            env.reset(seed=0)
        script = [1, 3, 3, 4, 4, 4, 3, 3, 0, 1]
        for x in script:
            obs_a = a.step(np.array([x]))[0]
            obs_b = b.step(np.full((1, 5), x))[0]
            obs_c = c.step(np.array([[x, 0, 4, 0, 3]]))[0]
        assert np.array_equal(obs_a, obs_b) and not np.array_equal(obs_a, obs_c)
        with pytest.raises(ValueError):
            a.step(np.zeros((1, 4), dtype=np.int64))  # not one action per frame of the step
    finally:
        for env in (a, b, c):
            env.close()


def test_an_agent_needing_a_capability_the_suite_lacks_is_refused_in_one_line(tmp_path):
    out = tmp_path / "run"
    # the Genesis screen is RGB only (stable-retro exposes no palette indices): Sonic offers RAM and
    # state clone/restore, not the palette screen that Sarsa's feature sets read
    proc = run_cli("run", "sonic", "sarsa", "--tasks", "sonic1-GreenHillZone.Act1", "--out", out)
    assert_usage_error(proc, "agent 'sarsa' needs palette_screen", "suite 'sonic' does not offer")
    assert not out.exists()
