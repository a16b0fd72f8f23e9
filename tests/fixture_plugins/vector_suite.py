"""A scripted suite with flat float observations, for agents with an MLP path (Ape-X tests).

Task "chain-L": a chain of L steps. The observation is (t / L, one-hot of the last action, 1).
Action 1 gives reward 1 and action 0 gives 0.2; action 2 ends the episode at once
("game_over", reward 0); otherwise the episode ends after L steps ("time_limit", a truncation).
The suite's envs have these 3 actions; tests may build them with more (``num_actions``, e.g.
Atari's 18), the others giving nothing.
Cheap on purpose: thousands of steps per second, short episodes, tiny networks.
"""

from __future__ import annotations

from collections.abc import Sequence

import gymnasium as gym
import numpy as np

import benchgen
from benchgen.errors import UsageError
from benchgen.remote import CollectorKey, RemoteEnvFactory
from benchgen.suite import Split, Suite
from tests.fixture_plugins.scripted_env import ScriptedVectorEnv

TASKS = ["chain-8", "chain-12", "chain-20"]
OBS_SIZE = 5


class ChainVectorEnv(ScriptedVectorEnv):
    def __init__(self, tasks: Sequence[str], seed: int, num_actions: int = 3):
        self.last = np.zeros(len(tasks), int)
        super().__init__(tasks, seed, gym.spaces.Box(-1, 1, (OBS_SIZE,), np.float32), num_actions)

    def _obs(self):
        obs = np.zeros((self.num_envs, OBS_SIZE), np.float32)
        obs[:, 0] = self.t / self.limits
        obs[np.arange(self.num_envs), 1 + self.last] = 1.0
        obs[:, 4] = 1.0
        return obs

    def _rules(self, actions):
        self.last = actions % 3
        return np.where(actions == 1, 1.0, np.where(actions == 0, 0.2, 0.0)), actions == 2

    def _begin(self, which):
        self.last[which] = 0


class ChainSuite(Suite):
    name = "chain"
    description = "scripted flat-vector suite (agent tests)"
    budget_unit = "frames"
    default_budget = 4000
    default_checkpoints = (2000, 4000)
    default_num_envs = 1
    end_reasons = ("game_over", "time_limit")
    default_split = "all"

    def tasks(self):
        return list(TASKS)

    def protocol(self):
        return {"version": "1", "frames_per_step": 4}

    def make_env(self, tasks, seed, *, mode="train"):
        for task in tasks:
            if task not in TASKS:
                raise UsageError(f"unknown chain task '{task}'")
        return ChainVectorEnv(tasks, seed)


SUITE = ChainSuite()


class ChainEnvFactory(RemoteEnvFactory):
    """What ``ctx.remote_envs()`` returns for a unit of ``task``, without a run directory (for
    driving an agent in-process): seals with ``key``, the key of the test's ``EpisodeInbox``."""

    def __init__(self, key: CollectorKey, task: str = "chain-8", num_actions: int = 3):
        super().__init__(key)
        self.task, self.num_actions = task, num_actions

    def suite_env(self, num_envs: int, seed: int, worker: int = 0, workers: int = 1):
        env = SUITE.make_env([self.task] * num_envs, seed)
        return env if self.num_actions == 3 else ChainVectorEnv(env.tasks, seed, self.num_actions)


@benchgen.hookimpl
def benchgen_suites():
    return [SUITE]


@benchgen.hookimpl
def benchgen_splits(suite):
    if suite.name != "chain":
        return []
    return [Split("chain", "all", tuple(TASKS))]
