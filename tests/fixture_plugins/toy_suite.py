"""A tiny scripted suite for core tests: deterministic, fast, pixel observations.

Task "count-N": every step gives reward 1 with probability depending on the action; an episode
ends after N steps ("time_limit") or when action 0 is chosen 3 times in a row ("game_over").
It exercises the core (recorder, store, runner, resume) through the same code paths as real
suites, without an emulator.
"""

from __future__ import annotations

from collections.abc import Sequence

import gymnasium as gym
import numpy as np

import benchgen
from benchgen.suite import Split, Suite
from tests.fixture_plugins.scripted_env import ScriptedVectorEnv

TASKS = ["count-20", "count-50", "count-80"]


class ToyVectorEnv(ScriptedVectorEnv):
    def __init__(self, tasks: Sequence[str], seed: int):
        self.zeros = np.zeros(len(tasks), int)
        super().__init__(tasks, seed, gym.spaces.Box(0, 255, (1, 8, 8), np.uint8))

    def _obs(self):
        obs = np.zeros((self.num_envs, 1, 8, 8), np.uint8)
        obs[:, 0, 0, 0] = np.minimum(self.t, 255)
        return obs

    def _rules(self, actions):
        reward = (self.rng.random(self.num_envs) < 0.2 + 0.3 * actions).astype(float)
        self.zeros = np.where(actions == 0, self.zeros + 1, 0)
        return reward, self.zeros >= 3

    def _begin(self, which):
        self.zeros[which] = 0

    def _extras(self, index):
        return {"score_half": float(self.score[index] / 2)}


class ToySuite(Suite):
    name = "toy"
    description = "scripted test suite"
    budget_unit = "frames"
    default_budget = 4000
    default_checkpoints = (1000, 4000)
    default_num_envs = 2
    episode_fields = ("score_half",)
    score_views = {"score_half": "half"}
    end_reasons = ("game_over", "time_limit")
    default_split = "all"
    software = ("pyyaml",)  # a library the suite declares: its runs record its version

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
