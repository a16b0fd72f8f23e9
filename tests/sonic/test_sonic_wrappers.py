"""The agent-side wrappers on a scripted vector env (no emulator): exact expected values."""

from __future__ import annotations

import cv2
import gymnasium as gym
import numpy as np
import pytest

import benchgen_agents
from benchgen.agent import AgentNeeds
from benchgen.tuned import tuned_values
from benchgen_agents.ppo.config import PPOConfig
from benchgen_agents.ppo.vec_env import BenchgenVecEnv
from benchgen_sonic.suite import SonicSuite
from benchgen_sonic.wrappers import (
    JERK_COMBOS,
    PAPER_COMBOS,
    AllowBacktracking,
    ButtonCombos,
    WarpFrameStack,
    agent_wrappers,
)

#: the first-party agents by name
AGENTS = {spec.name: spec for spec in benchgen_agents.benchgen_agents()}


class Scripted(gym.vector.VectorEnv):
    """Two sub-envs replaying scripted rewards, ends and random frames (SAME_STEP autoreset)."""

    metadata = {"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}

    def __init__(self, rewards, ends, seed=0):
        self.num_envs = 2
        self.single_observation_space = gym.spaces.Box(0, 255, (224, 320, 3), np.uint8)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, 2)
        self.single_action_space = gym.spaces.Discrete(4096)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, 2)
        self.rewards, self.ends = np.asarray(rewards, float), np.asarray(ends, bool)
        self.rng = np.random.default_rng(seed)
        self.t, self.frames, self.actions = 0, [], []

    def _frame(self):
        frame = self.rng.integers(0, 256, (2, 224, 320, 3), dtype=np.uint8)
        self.frames.append(frame)
        return frame

    def reset(self, *, seed=None, options=None):
        self.t = 0
        return self._frame(), {}

    def step(self, actions):
        self.actions.append(np.asarray(actions))
        rewards, ends = self.rewards[self.t], self.ends[self.t]
        self.t += 1
        obs, infos = self._frame(), {}
        if ends.any():
            last = self._frame()  # what the ended sub-env showed last; obs is the new episode's first
            infos = {
                "final_obs": np.array([last[i] if ends[i] else None for i in range(2)], dtype=object),
                "_final_obs": ends.copy(),
            }
        return obs, rewards, ends.copy(), np.zeros(2, bool), infos


def warp(frame):
    return cv2.resize(cv2.cvtColor(frame, cv2.COLOR_RGB2GRAY), (84, 84), interpolation=cv2.INTER_AREA)


def test_allow_backtracking_rewards_only_new_maxima_and_restarts_each_episode():
    rewards = [[10, 5], [-4, 5], [3, 5], [6, -20], [1, 5], [2, 5]]
    ends = [[0, 0], [0, 0], [0, 0], [1, 0], [0, 0], [0, 0]]
    env = AllowBacktracking(Scripted(rewards, ends))
    env.reset()
    shaped = [env.step(None)[1].tolist() for _ in rewards]
    # env 0: totals 10, 6, 9, 15 (episode ends), then a new episode: 1, 3
    # env 1: totals 5, 10, 15, -5, 0, 5 (never past 15 again)
    assert shaped == [[10, 5], [0, 5], [0, 5], [5, 0], [1, 0], [2, 0]]


def test_scale_reward():
    """PPO's reward scale (its Sonic setting), applied by its own env adapter."""
    env = BenchgenVecEnv(Scripted([[200, -400]], [[0, 0]]), reward_scale=0.005)
    env.reset()
    assert env.step(None)[1].tolist() == [1.0, -2.0]


def test_button_combos_map_indices_to_buttons():
    inner = Scripted([[0, 0]], [[0, 0]])
    env = ButtonCombos(inner)
    env.reset()
    env.step(np.array([PAPER_COMBOS.index(("DOWN", "B")), PAPER_COMBOS.index(("RIGHT",))]))
    assert inner.actions[0].tolist() == [0b100001, 0b10000000]  # bits: B=0, DOWN=5; RIGHT=7
    assert env.single_action_space == gym.spaces.Discrete(7)


def test_warp_frame_stack_keeps_the_last_four_frames_in_order():
    ends = [[0, 0], [0, 0], [0, 1], [0, 0]]
    inner = Scripted(np.zeros((4, 2)), ends)
    env = WarpFrameStack(inner)
    obs, _ = env.reset()
    first = inner.frames[0]
    assert all(np.array_equal(obs[1, k], warp(first[1])) for k in range(4))
    for _ in range(2):
        obs, *_ = env.step(None)
    # env 0 after two steps: [reset, reset, step1, step2]
    expected0 = [warp(f[0]) for f in (inner.frames[0], inner.frames[0], inner.frames[1], inner.frames[2])]
    assert all(np.array_equal(obs[0, k], expected0[k]) for k in range(4))
    obs, _, _, _, infos = env.step(None)  # env 1 ends: frames[3] = new episode, frames[4] = its last
    final = infos["final_obs"][1]
    expected_final = [warp(f[1]) for f in (inner.frames[0], inner.frames[1], inner.frames[2], inner.frames[4])]
    assert final.shape == (4, 84, 84)
    assert all(np.array_equal(final[k], expected_final[k]) for k in range(4))
    assert all(np.array_equal(obs[1, k], warp(inner.frames[3][1])) for k in range(4))
    assert np.array_equal(obs[0, 3], warp(inner.frames[3][0]))  # env 0 just keeps stacking


def learned_rewards(spec, env, actions):
    """The rewards the agent of ``spec`` learns from after one step of ``env`` (the suite's
    wrappers for its needs): PPO agents scale them in their env adapter, by their Sonic
    defaults; the others take them as they are."""
    if spec.config_class is PPOConfig:
        config = PPOConfig(**tuned_values(SonicSuite(), spec.algorithm, joint=spec.joint))
        env = BenchgenVecEnv(env, clip_reward=config.clip_reward, reward_scale=config.reward_scale)
    env.reset()
    return env.step(actions)[1]


@pytest.mark.parametrize(
    "agent,n,scaled,backtracking",
    [
        ("ppo", 7, True, True),
        ("ppo_joint", 7, True, True),
        ("rainbow_iqn", 7, False, True),
        ("jerk", 10, False, False),
        ("random", 7, False, False),
    ],
)
def test_wrappers_per_agent(agent, n, scaled, backtracking):
    env = agent_wrappers(Scripted([[100, -100]], [[0, 0]]), AGENTS[agent].needs)
    assert env.single_action_space.n == n
    rewards = learned_rewards(AGENTS[agent], env, np.zeros(2, int))
    expected = np.array([100.0, 0.0 if backtracking else -100.0]) * (0.005 if scaled else 1.0)
    assert rewards.tolist() == pytest.approx(expected.tolist())


def test_needs_not_names_choose_the_wrappers():
    """An agent no suite knows gets what it declares: named actions and the benchmark reward,
    the learning reward by default, the screens themselves (copied) when it asks for them."""
    named = agent_wrappers(Scripted([[100, -100]], [[0, 0]]), AgentNeeds(reward="benchmark", actions=("right", "noop")))
    named.reset()
    assert named.single_action_space.n == len(JERK_COMBOS)
    assert named.step(np.zeros(2, int))[1].tolist() == [100.0, -100.0]
    learner = agent_wrappers(Scripted([[100, -100]], [[0, 0]]), AgentNeeds())
    learner.reset()
    assert learner.single_action_space.n == len(PAPER_COMBOS)
    assert learner.step(np.zeros(2, int))[1].tolist() == [100.0, 0.0]  # allow-backtracking
    inner = Scripted([[0, 0]], [[0, 0]])
    native = agent_wrappers(inner, AgentNeeds(observations="native"))
    obs, _ = native.reset()
    assert native.single_observation_space.shape == (224, 320, 3)
    assert np.array_equal(obs, inner.frames[0]) and not np.shares_memory(obs, inner.frames[0])
