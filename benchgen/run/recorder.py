"""The episode recorder: the layer between a suite's env and everything an agent wraps on top.

It counts frames, collects each finished episode's facts from the suite env, numbers episodes
contiguously per task, and commits them to the results store as they finish (in the same
transaction as the unit's frame counter). It also feeds the progress bar and TensorBoard.
Agent-side wrappers (reward clipping, action discretizers, frame warping) sit above it, so a
recorded score is always the suite's raw score.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any, Callable

import gymnasium as gym
import numpy as np

from benchgen.results.store import Unit, UnitStore
from benchgen.suite import SuiteVectorEnv


class EpisodeRecorder(gym.vector.VectorWrapper):
    """Wraps a :class:`SuiteVectorEnv`; see the module docstring."""

    def __init__(
        self,
        env: SuiteVectorEnv,
        store: UnitStore,
        unit: Unit,
        frames_done: int = 0,
        on_episodes: Callable[[list[dict[str, Any]]], None] | None = None,
    ):
        super().__init__(env)
        self.suite_env = env
        self.store = store
        self.unit = unit
        self.frames_per_step = env.frames_per_step
        #: the unit's frame counter: emulator frames used, all sub-environments together
        self.frames_done = frames_done
        self._next_episode = store.next_episode_numbers(unit.unit_id)
        self._on_episodes = on_episodes
        self.recent_scores: deque[float] = deque(maxlen=100)
        self.episodes_recorded = sum(self._next_episode.values())
        self._steps_into_episode = np.zeros(env.num_envs, dtype=np.int64)

    @property
    def steps_done(self) -> int:
        """Agent steps (transitions over all sub-environments) used so far."""
        return self.frames_done // self.frames_per_step

    def reset(self, *, seed=None, options=None):
        """Reset the suite env; refused while an episode is under way, because the running
        episodes would end unrecorded (the suite env starts the next episode by itself)."""
        running = np.flatnonzero(self._steps_into_episode)
        if running.size:
            raise RuntimeError(
                f"the agent reset the env while sub-environments {running.tolist()} were mid-episode; "
                "their episodes would be lost. Suite envs autoreset (SAME_STEP): reset once, before the first step"
            )
        return self.env.reset(seed=seed, options=options)

    def step(self, actions):
        obs, rewards, terminated, truncated, infos = self.env.step(actions)
        self.frames_done += self.num_envs * self.frames_per_step
        ended = np.logical_or(terminated, truncated)
        self._steps_into_episode = np.where(ended, 0, self._steps_into_episode + 1)
        ends = self.suite_env.pop_episode_ends()
        if ends:
            self._record(ends)
        return obs, rewards, terminated, truncated, infos

    def _record(self, ends) -> None:
        records = []
        for end in ends:
            number = self._next_episode.get(end.task, 0)
            self._next_episode[end.task] = number + 1
            records.append(
                {
                    "task": end.task,
                    "episode": number,
                    "env_index": int(end.env_index),
                    "frames_total": self.frames_done,
                    "length_frames": int(end.length_frames),
                    "score": float(end.score),
                    "end_reason": end.end_reason,
                    "extras": {k: _jsonable(v) for k, v in end.extras.items()},
                    "events": end.events,
                }
            )
        self.store.record_episodes(self.unit, records, self.frames_done)
        self.episodes_recorded += len(records)
        for r in records:
            if not math.isinf(r["score"]):
                self.recent_scores.append(r["score"])
        if self._on_episodes:
            self._on_episodes(records)

    def episodes_of(self, task: str) -> int:
        """Episodes recorded so far for ``task`` in this unit (resumed ones included)."""
        return self._next_episode.get(task, 0)

    def recent_mean(self) -> float:
        return float(np.mean(self.recent_scores)) if self.recent_scores else float("nan")


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    return value


class EpisodeCollector(gym.vector.VectorWrapper):
    """The recorder's stand-in inside a remote actor process (e.g. Ape-X actors).

    It counts frames and keeps the suite's finished-episode facts until the actor ships them to
    the learner, whose :meth:`benchgen.agent.TrainingContext.record_external` numbers and commits
    them under the unit. It never touches scores either.
    """

    def __init__(self, env: SuiteVectorEnv):
        super().__init__(env)
        self.suite_env = env
        self.frames_per_step = env.frames_per_step
        self._frames = 0
        self._ends: list = []

    def step(self, actions):
        result = self.env.step(actions)
        self._frames += self.num_envs * self.frames_per_step
        self._ends.extend(self.suite_env.pop_episode_ends())
        return result

    def drain(self) -> tuple[list, int]:
        """(finished episodes, frames used) since the last call."""
        ends, frames = self._ends, self._frames
        self._ends, self._frames = [], 0
        return ends, frames
