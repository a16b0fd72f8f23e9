"""The subprocess vector env and the suite's make_env/agent_wrappers, on Airstriker levels."""

from __future__ import annotations

import os

import numpy as np
import pytest

import benchgen_agents
from benchgen.agent import AgentNeeds
from benchgen.cpu_affinity import PIN_WORKERS_ENV
from benchgen.suite import EpisodeEnd
from benchgen.tuned import tuned_values
from benchgen_agents.ppo.config import PPOConfig
from benchgen_agents.ppo.vec_env import BenchgenVecEnv
from benchgen_sonic.env import EPISODE_INFO_KEY, button_mask
from benchgen_sonic.protocol import SonicProtocol
from benchgen_sonic.suite import SonicSuite
from benchgen_sonic.testing import airstriker_level
from benchgen_sonic.wrappers import ACTION_SEMANTICS, JERK_COMBOS, PAPER_COMBOS, combo_masks

#: the first-party agents by name
AGENTS = {spec.name: spec for spec in benchgen_agents.benchgen_agents()}

RIGHT, NOOP = button_mask("RIGHT"), button_mask()  # the suite's Discrete(4096) actions

# two levels: one completed after 5 timesteps of RIGHT, one never completed
QUICK, ENDLESS = airstriker_level(100), airstriker_level(1000)


@pytest.fixture
def suite():
    return SonicSuite(levels=[QUICK, ENDLESS], protocol=SonicProtocol(max_timesteps=30))


@pytest.fixture
def vec(suite):
    env = suite.make_env([QUICK.task, ENDLESS.task], seed=5)
    yield env
    env.close()


def test_contract_same_step_autoreset_and_episode_ends(vec):
    assert vec.tasks == (QUICK.task, ENDLESS.task)
    assert vec.metadata["autoreset_mode"].name == "SAME_STEP"
    assert vec.frames_per_step == 4 and vec.num_envs == 2
    assert vec.single_action_space.n == 4096  # the 12 buttons as bits
    obs, infos = vec.reset()
    assert obs.shape == (2, 224, 320, 3) and obs.dtype == np.uint8
    first_obs = obs[0].copy()
    ends: list[EpisodeEnd] = []
    for t in range(30):
        obs, rewards, terminated, truncated, infos = vec.step(np.array([RIGHT, NOOP]))
        assert EPISODE_INFO_KEY not in infos.get("final_info", {})  # stripped before agents see it
        assert set(infos) <= {"final_info", "_final_info", "final_obs", "_final_obs"}
        new = vec.pop_episode_ends()
        assert vec.pop_episode_ends() == []
        for end in new:
            assert terminated[end.env_index] or truncated[end.env_index]
            # SAME_STEP: the returned observation starts the next episode, final_obs ends this one
            assert infos["_final_obs"][end.env_index]
        if t == 4:
            assert [e.env_index for e in new] == [0]
            assert np.array_equal(obs[0], first_obs) and not np.array_equal(infos["final_obs"][0], first_obs)
        ends += new
    completed = [e for e in ends if e.env_index == 0]
    assert len(completed) == 6  # 30 steps / 5 steps per completion
    assert all(e.end_reason == "completed" and e.length_frames == 20 and e.task == QUICK.task for e in completed)
    assert completed[0].score == pytest.approx(9000 + 1000 * (1 - 20 / 120))
    (limit,) = [e for e in ends if e.env_index == 1]
    assert (limit.end_reason, limit.length_frames, limit.score) == ("time_limit", 120, 0.0)
    assert limit.extras == {"x_progress": 0.0, "max_x_progress": 0.0, "timesteps": 30}
    assert truncated[1] and not terminated[1]


def test_reset_seed_makes_runs_reproducible(suite):
    actions = np.random.default_rng(1).integers(0, 4096, size=(40, 2))

    def run(seed):
        env = suite.make_env([ENDLESS.task, ENDLESS.task], seed=seed)
        try:
            env.reset()
            return [env.step(a)[1].tolist() for a in actions]
        finally:
            env.close()

    first = run(9)
    assert first == run(9)
    # the two sub-environments get different seeds (seed, seed + 1): their sticky delays differ,
    # so identical inputs give different trajectories somewhere
    assert any(r[0] != r[1] for r in first)


def test_make_env_checks_roms_first():
    from benchgen.errors import UsageError

    suite = SonicSuite()
    with pytest.raises(UsageError, match="import-roms"):
        suite.make_env(["sonic1-GreenHillZone.Act2"], seed=0)


@pytest.fixture
def steady_vec():
    """Both levels without sticky delays, so that rewards are exact."""
    suite = SonicSuite(levels=[QUICK, ENDLESS], protocol=SonicProtocol(max_timesteps=30, sticky_prob=0.0))
    env = suite.make_env([QUICK.task, ENDLESS.task], seed=5)
    yield env
    env.close()


def test_agent_wrappers_for_ppo(steady_vec, suite):
    ppo = AGENTS["ppo"]
    env = suite.agent_wrappers(steady_vec, ppo.needs)
    assert env.single_action_space.n == 7
    assert env.single_observation_space.shape == (4, 84, 84)
    config = PPOConfig(**tuned_values(suite, ppo.algorithm))
    learning = BenchgenVecEnv(env, clip_reward=config.clip_reward, reward_scale=config.reward_scale)  # PPO's view
    learning.seed(0)
    obs = learning.reset()
    assert obs.shape == (2, 4, 84, 84) and obs.dtype == np.uint8
    assert all(np.array_equal(obs[i, 0], obs[i, 3]) for i in range(2))  # stack starts with copies
    right = PAPER_COMBOS.index(("RIGHT",))
    left = PAPER_COMBOS.index(("LEFT",))
    # RIGHT twice (+1800 each), LEFT (-1800: shaped to 0), RIGHT (back to the max: 0), RIGHT (+1800)
    seq = [right, right, left, right, right]
    shaped = [learning.step(np.array([a, a]))[1][0] for a in seq]
    assert shaped == pytest.approx([9.0, 9.0, 0.0, 0.0, 9.0])  # 1800 * 0.005


def test_agent_wrappers_final_obs_is_a_stack(vec, suite):
    env = suite.agent_wrappers(vec, AGENTS["random"].needs)
    env.reset(seed=0)
    right = PAPER_COMBOS.index(("RIGHT",))
    for _ in range(5):
        obs, rewards, terminated, truncated, infos = env.step(np.array([right, right]))
    assert terminated[0]
    assert rewards[0] == pytest.approx(1800 + 1000 * (1 - 20 / 120))  # raw reward for random
    assert infos["final_obs"][0].shape == (4, 84, 84)
    assert np.array_equal(obs[0, 0], obs[0, 3])  # the new episode's stack is fresh


def test_jerk_gets_its_combinations_and_raw_reward(vec, suite):
    env = suite.agent_wrappers(vec, AGENTS["jerk"].needs)
    sem = suite.action_semantics()
    assert sem == ACTION_SEMANTICS and env.single_action_space.n == len(JERK_COMBOS)
    masks = combo_masks(JERK_COMBOS)
    assert masks[sem["right_jump"]] == 0b10000001  # bit 0 = B, bit 7 = RIGHT
    assert masks[sem["noop"]] == 0
    for name in ("left", "right", "jump"):  # same meaning in every agent's action set
        assert JERK_COMBOS[sem[name]] == PAPER_COMBOS[sem[name]]
    env.reset(seed=0)
    _, rewards, *_ = env.step(np.array([sem["right"], sem["noop"]]))
    assert rewards.tolist() == pytest.approx([1800.0, 0.0])


def test_make_env_while_this_process_owns_an_emulator(level_env, suite):
    """The parent never builds an emulator (gymnasium's AsyncVectorEnv asks its first env
    factory for the spaces in the parent; ours answers without an emulator there)."""
    single = level_env()
    env = suite.make_env([QUICK.task], seed=0)
    try:
        obs, _ = env.reset()
        assert obs.shape == (1, 224, 320, 3)
        assert single.reset(seed=0)[0].shape == (224, 320, 3)
    finally:
        env.close()


def test_agents_keep_their_observations_across_steps(steady_vec, suite):
    """The suite hands screens over in shared memory without copying; what an agent receives
    (through the agent wrappers) must still be its own after the next step."""
    env = suite.agent_wrappers(steady_vec, AGENTS["ppo"].needs)
    first, _ = env.reset(seed=0)
    kept, snapshots = [first], [first.copy()]
    right = PAPER_COMBOS.index(("RIGHT",))
    for _ in range(4):
        obs = env.step(np.array([right, right]))[0]
        kept.append(obs)
        snapshots.append(obs.copy())
    assert not np.array_equal(snapshots[0], snapshots[-1])  # the ship moved: frames differ
    for obs, snapshot in zip(kept, snapshots):
        assert np.array_equal(obs, snapshot)


def test_an_agent_asking_for_native_observations_keeps_its_screens(steady_vec, suite):
    """The 224x320 RGB screens themselves, as arrays of the agent's own (the env's are shared
    buffers that the next step overwrites)."""
    env = suite.agent_wrappers(steady_vec, AgentNeeds(observations="native"))
    first, _ = env.reset(seed=0)
    snapshot = first.copy()
    right = PAPER_COMBOS.index(("RIGHT",))
    for _ in range(4):
        obs = env.step(np.array([right, right]))[0]
    assert first.shape == (2, 224, 320, 3) and np.array_equal(first, snapshot)
    assert not np.array_equal(obs, snapshot)  # the ship moved


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 usable CPUs")
def test_workers_get_a_cpu_each(vec):
    cpus = vec.pinned_cpus
    assert cpus is not None and len(set(cpus)) == 2
    assert [os.sched_getaffinity(pid) for pid in vec.worker_pids] == [{cpus[0]}, {cpus[1]}]


def test_no_pinning_when_units_share_the_machine(suite, monkeypatch):
    monkeypatch.setenv(PIN_WORKERS_ENV, "0")  # what the parallel executors set for their units
    env = suite.make_env([QUICK.task, ENDLESS.task], seed=0)
    try:
        assert env.pinned_cpus is None
        allowed = os.sched_getaffinity(0)
        assert all(os.sched_getaffinity(pid) == allowed for pid in env.worker_pids)
    finally:
        env.close()
