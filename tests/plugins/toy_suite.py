"""A tiny scripted suite for core tests: deterministic, fast, pixel observations.

Task "count-N": every step gives reward 1 with probability depending on the action; an episode
ends after N steps ("time_limit") or when action 0 is chosen 3 times in a row ("game_over").
It exercises the core (recorder, store, runner, resume) through the same code paths as real
suites, without an emulator.
"""

from __future__ import annotations

from typing import Sequence

import gymnasium as gym
import numpy as np

import benchgen
from benchgen.suite import EpisodeEnd, Split, Suite, SuiteVectorEnv

TASKS = ["count-20", "count-50", "count-80"]


class ToyVectorEnv(SuiteVectorEnv):
    frames_per_step = 4

    def __init__(self, tasks: Sequence[str], seed: int):
        self.tasks = list(tasks)
        self.num_envs = len(tasks)
        self.single_observation_space = gym.spaces.Box(0, 255, (1, 8, 8), np.uint8)
        self.single_action_space = gym.spaces.Discrete(3)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, self.num_envs)
        self.metadata = {"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}
        self.limits = np.array([int(t.split("-")[1]) for t in self.tasks])
        self.rng = np.random.default_rng(seed)
        self.t = np.zeros(self.num_envs, int)
        self.score = np.zeros(self.num_envs)
        self.zeros = np.zeros(self.num_envs, int)
        self._ends: list[EpisodeEnd] = []

    def _obs(self):
        obs = np.zeros((self.num_envs, 1, 8, 8), np.uint8)
        obs[:, 0, 0, 0] = np.minimum(self.t, 255)
        return obs

    def reset(self, *, seed=None, options=None):
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self.t[:] = 0
        self.score[:] = 0
        self.zeros[:] = 0
        return self._obs(), {}

    def step(self, actions):
        actions = np.asarray(actions)
        reward = (self.rng.random(self.num_envs) < 0.2 + 0.3 * actions).astype(float)
        self.t += 1
        self.score += reward
        self.zeros = np.where(actions == 0, self.zeros + 1, 0)
        terminated = self.zeros >= 3
        truncated = (self.t >= self.limits) & ~terminated
        done = terminated | truncated
        info = {}
        if done.any():
            info["final_obs"] = self._obs()
            for i in np.flatnonzero(done):
                self._ends.append(EpisodeEnd(int(i), self.tasks[i], float(self.score[i]), int(self.t[i]) * 4,
                                             "game_over" if terminated[i] else "time_limit",
                                             extras={"score_half": float(self.score[i] / 2)}))
            self.t[done] = 0
            self.score[done] = 0
            self.zeros[done] = 0
        return self._obs(), reward, terminated, truncated, info

    def pop_episode_ends(self):
        ends, self._ends = self._ends, []
        return ends


class ToySuite(Suite):
    name = "toy"
    description = "scripted test suite"
    budget_unit = "frames"
    default_budget = 4000
    default_checkpoints = (1000, 4000)
    default_num_envs = 2
    episode_fields = ("score_half",)
    end_reasons = ("game_over", "time_limit")
    default_split = "all"

    def tasks(self):
        return list(TASKS)

    def protocol(self):
        return {"version": "1", "frames_per_step": 4}

    def make_env(self, tasks, seed, *, mode="train"):
        return ToyVectorEnv(tasks, seed)


SUITE = ToySuite()


@benchgen.hookimpl
def benchgen_suites():
    return [SUITE]


@benchgen.hookimpl
def benchgen_splits(suite):
    if suite.name != "toy":
        return []
    return [Split("toy", "all", tuple(TASKS)), Split("toy", "pair", ("count-20", "count-50"), ("count-80",))]
