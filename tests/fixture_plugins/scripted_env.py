"""What the scripted test suites' vector envs share: tasks named "NAME-L" (L = the episode's step
limit), SAME_STEP autoreset, and the episode facts a suite hands the recorder.

A subclass says what an observation looks like (``_obs``), what an action earns and whether it
ends the episode (``_rules``), and which of its own per-episode state a new episode clears
(``_begin``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from benchgen.episodes import EpisodeBook
from benchgen.suite import SuiteVectorEnv


class ScriptedVectorEnv(SuiteVectorEnv):
    frames_per_step = 4

    def __init__(self, tasks: Sequence[str], seed: int, observation_space: gym.spaces.Box, num_actions: int = 3):
        self.tasks = list(tasks)
        self.num_envs = len(tasks)
        self.single_observation_space = observation_space
        self.single_action_space = gym.spaces.Discrete(num_actions)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, self.num_envs)
        self.metadata = {"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}
        self.limits = np.array([int(t.split("-")[1]) for t in self.tasks])
        self.rng = np.random.default_rng(seed)
        self.episodes = EpisodeBook(self.tasks, self.frames_per_step)

    # -- what a subclass defines -------------------------------------------------------------
    def _obs(self) -> np.ndarray:
        raise NotImplementedError

    def _rules(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(reward, terminated) of this step's actions; may update the subclass's state."""
        raise NotImplementedError

    def _begin(self, which: np.ndarray) -> None:
        """Clear the subclass's per-episode state of the sub-environments in mask ``which``."""

    def _extras(self, index: int) -> dict[str, Any]:
        """Suite-specific facts of sub-environment ``index``'s finished episode."""
        return {}

    # -- the shared bookkeeping -------------------------------------------------------------
    def reset(self, *, seed=None, options=None):
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self.episodes.reset()
        self._begin(np.ones(self.num_envs, bool))
        return self._obs(), {}

    def step(self, actions):
        actions = np.asarray(actions)
        reward, terminated = self._rules(actions)
        self.episodes.add(reward)
        truncated = (self.t >= self.limits) & ~terminated
        done = terminated | truncated
        info = {}
        if done.any():
            info["final_obs"] = self._obs()
            for i in np.flatnonzero(done):
                self.episodes.end(i, "game_over" if terminated[i] else "time_limit", extras=self._extras(i))
            self._begin(done)
        return self._obs(), reward, terminated, truncated, info

    @property
    def t(self) -> np.ndarray:
        """Each sub-environment's steps into its episode."""
        return self.episodes.steps

    @property
    def score(self) -> np.ndarray:
        """Each sub-environment's raw score so far in its episode."""
        return self.episodes.returns

    def pop_episode_ends(self):
        return self.episodes.pop()
