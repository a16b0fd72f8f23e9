"""The Sonic suite's emulator capabilities (:mod:`benchgen_sonic.emulators`), ``ram`` and
``clone_state``, read in each worker process, on the free Airstriker test integration
(``benchgen_sonic.testing``: the ship moves 5 pixels a frame to the right, 20 a timestep, and the
level ends 100 pixels right of the start, 9000 reward for the whole way)."""

from __future__ import annotations

import os
import signal
import threading

import numpy as np
import pytest

from benchgen.agent import AgentEnvironment, AgentNeeds
from benchgen.capabilities import emulators_of
from benchgen_agents.planning.brfs import BrFSAgent
from benchgen_agents.planning.config import BrFSConfig, UCTConfig
from benchgen_agents.planning.uct import UCTAgent
from benchgen_sonic.env import button_mask
from benchgen_sonic.suite import SonicSuite
from benchgen_sonic.testing import airstriker_level, buttons
from benchgen_sonic.vector import SonicVectorEnv
from benchgen_sonic.wrappers import PAPER_COMBOS, agent_wrappers

RIGHT, LEFT = PAPER_COMBOS.index(("RIGHT",)), PAPER_COMBOS.index(("LEFT",))


def test_sonic_declares_ram_and_clone_state():
    assert SonicSuite().capabilities() == {"ram", "clone_state"}


def test_each_worker_reads_its_own_ram():
    env = SonicVectorEnv([airstriker_level(), airstriker_level()], seed=0, pin_workers=False)
    try:
        env.reset(seed=0)
        em = emulators_of(env)
        start = em.ram(0)
        assert start.shape == (65536,) and start.dtype == np.uint8
        assert np.array_equal(start, em.ram(1))  # the same save state in both workers
        for _ in range(3):  # sub-environment 0 flies right (60 of the level's 100 pixels), 1 waits
            env.step(np.array([button_mask("RIGHT"), 0]))
        moved, waited = em.ram(0), em.ram(1)
        assert not np.array_equal(moved, waited)
        assert not np.array_equal(moved, start)
    finally:
        env.close()


def test_a_command_goes_to_its_worker_alone_and_its_error_comes_back():
    """A planner's clone, restore or simulated step reaches its own sub-environment's worker and
    no other: with worker 1 stopped, worker 0 still answers (a broadcast would wait for worker 1).
    A command the worker refuses raises its error in the caller."""
    env = SonicVectorEnv([airstriker_level(), airstriker_level()], seed=0, pin_workers=False)
    stopped = env.worker_pids[1]
    try:
        env.reset(seed=0)
        em = emulators_of(env)
        answers = []
        os.kill(stopped, signal.SIGSTOP)
        try:
            caller = threading.Thread(target=lambda: answers.append(em.ram(0)), daemon=True)
            caller.start()
            caller.join(timeout=30)
            answered_while_stopped = list(answers)
        finally:
            os.kill(stopped, signal.SIGCONT)
        caller.join(timeout=30)
        assert len(answered_while_stopped) == 1 and answered_while_stopped[0].shape == (65536,)
        assert np.array_equal(em.ram(1), answers[0])  # worker 1 answers again once running
        with pytest.raises(ValueError, match="unknown emulator command"), pytest.warns(UserWarning, match="Worker-0"):
            env.emulator_call(0, "format_the_disk")  # gymnasium's log names the worker that failed
    finally:
        env.close()


def test_restore_replays_the_same_observations_rewards_and_sticky_draws(level_env):
    """In one emulator: a restored state plays the same timesteps again, screens included, with the
    protocol's sticky frame skip on (the generator is part of the state)."""
    env = level_env(end_dx=1000, sticky_prob=0.5)
    env.reset(seed=4)
    for _ in range(3):
        env.step(buttons("RIGHT"))
    state, key = env.clone_emulator(), env.emulator_state_key()
    plan = [buttons("LEFT"), buttons("RIGHT", "B"), buttons(), buttons("RIGHT"), buttons("DOWN")] * 2

    def play():
        out = [env.step(action)[:2] for action in plan]
        return [obs for obs, _ in out], [reward for _, reward in out]

    screens, rewards = play()
    assert env.emulator_state_key() != key
    env.restore_emulator(state)
    assert env.emulator_state_key() == key
    again_screens, again_rewards = play()
    assert again_rewards == rewards and any(r != 0 for r in rewards)
    assert all(np.array_equal(a, b) for a, b in zip(screens, again_screens, strict=True))
    # simulated timesteps are the same timesteps, without the screens
    env.restore_emulator(state)
    mask = [int(np.dot(a, 1 << np.arange(12))) for a in plan]
    assert [env.simulate_step(m)[0] for m in mask] == rewards


def test_planning_in_a_sandbox_leaves_the_real_episode_as_it_was():
    """Agent-side, through the suite's wrappers: the planners' actions are the paper's button
    combinations, simulated with the contest reward, and a sandbox changes nothing real."""
    env = agent_wrappers(
        SonicVectorEnv([airstriker_level()], seed=0, pin_workers=False), AgentNeeds(reward="benchmark")
    )
    try:
        em = emulators_of(env)
        assert em.capabilities == {"ram", "clone_state"} and em.frames_per_step == 4
        real_actions = [RIGHT, LEFT, 6, RIGHT, RIGHT, 3, RIGHT]

        def episode(plan: bool):
            obs, _ = env.reset(seed=11)
            seen, rewards = [obs], []
            for action in real_actions:
                if plan:
                    with em.sandbox(0):
                        start = em.clone_state(0)
                        for _ in range(3):
                            em.simulate(0, RIGHT)
                        em.restore_state(0, start)
                        em.simulate(0, LEFT)
                obs, reward, *_ = env.step(np.array([action]))
                seen.append(obs)
                rewards.append(float(reward[0]))
            return seen, rewards

        plain_obs, plain_rewards = episode(plan=False)
        planned_obs, planned_rewards = episode(plan=True)
        assert planned_rewards == plain_rewards
        assert all(np.array_equal(a, b) for a, b in zip(plain_obs, planned_obs, strict=True))

        env.reset(seed=0)
        with em.sandbox(0):
            start, key = em.clone_state(0), em.state_key(0)
            # the first timestep after a reset is never sticky: RIGHT flies 20 of the 100 pixels
            assert em.simulate(0, RIGHT) == (pytest.approx(1800.0), False)
            em.restore_state(0, start)
            assert em.state_key(0) == key
            assert em.simulate(0, LEFT) == (0.0, False)  # progress never goes below the start
            em.restore_state(0, start)
            done = [em.simulate(0, RIGHT)[1] for _ in range(5)]
            assert done == [False] * 4 + [True]  # the fifth timestep completes the level
            em.restore_state(0, start)
            em.simulate(0, 4)  # DOWN
            down = em.state_key(0)
            em.restore_state(0, start)
            em.simulate(0, 4)
            assert em.state_key(0) == down  # the duplicate test: equal states, equal keys
        with pytest.raises(RuntimeError, match="outside"):
            em.simulate(0, RIGHT)
    finally:
        env.close()


@pytest.mark.parametrize(
    "cls,config",
    [
        (BrFSAgent, BrFSConfig(max_frames_per_action=7 * 4)),  # the 7 combinations from the root
        (UCTAgent, UCTConfig(simulations_per_action=14, max_depth_frames=8)),
    ],
)
def test_the_planners_fly_right_on_airstriker(cls, config):
    """The ALE paper's planners through the Sonic suite's clone_state: from the start only the
    combinations holding RIGHT earn progress, and planning leaves the real episode alone."""
    env = agent_wrappers(
        SonicVectorEnv([airstriker_level()], seed=0, pin_workers=False), AgentNeeds(reward="benchmark")
    )
    try:
        env.reset(seed=0)
        agent = cls(config, AgentEnvironment(env.single_observation_space, env.single_action_space, 4))
        agent.use_emulators(emulators_of(env))
        before = agent.emulators.ram(0)
        action = int(agent.act(np.zeros(1))[0])
        assert PAPER_COMBOS[action] in {("RIGHT",), ("RIGHT", "DOWN")}
        assert np.array_equal(agent.emulators.ram(0), before), "planning changed the real game"
        assert agent.last_frames[0] > 0
        _, reward, *_ = env.step(np.array([action]))
        assert reward.tolist() == [pytest.approx(1800.0)]
    finally:
        env.close()
