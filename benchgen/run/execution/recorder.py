"""The episode recorder: the layer between a suite's env and everything an agent wraps on top.

It counts frames, collects each finished episode's facts from the suite env, numbers episodes
contiguously per task, and commits them to the results store as they finish (in the same
transaction as the unit's frame counter). It also feeds the progress bar and TensorBoard.
Agent-side wrappers (reward clipping, action discretizers, frame warping) sit above it, so a
recorded score is always the suite's raw score. Frame counting and the refusal of a reset
mid-episode are those of :class:`benchgen.remote.EpisodeTracker`, which it shares with the
collectors of the unit's environments in other processes; their episodes reach it through
sealed reports (:mod:`benchgen.remote`), numbered and committed by :meth:`EpisodeRecorder.record`.
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np

from benchgen.remote import EpisodeTracker, jsonable
from benchgen.results.store import Unit, UnitStore
from benchgen.suite import EpisodeEnd, SuiteVectorEnv, frames_to_steps


class EpisodeRecorder(EpisodeTracker):
    """Wraps a :class:`SuiteVectorEnv`; see the module docstring."""

    def __init__(
        self,
        env: SuiteVectorEnv,
        store: UnitStore,
        unit: Unit,
        frames_done: int = 0,
        progress=None,
        writer=None,
    ):
        # frames_done: the unit's frame counter, continued on resume; progress: the run's
        # ``RunProgress``, writer: the unit's TensorBoard ``SummaryWriter``, each fed every
        # recorded episode (None: not fed)
        super().__init__(env, frames_done)
        self.store = store
        self.unit = unit
        self._next_episode = store.next_episode_numbers(unit.unit_id)
        self.tally = store.episode_tally(unit.unit_id)
        #: task -> episodes recorded in the unit's own phase (its evaluation rounds' not counted)
        self.own_episodes = {t.task: t.episodes for t in self.tally if t.phase == unit.phase}
        self.progress = progress
        self.writer = writer
        self.recent_scores: deque[float] = deque(maxlen=100)
        self.episodes_recorded = sum(self._next_episode.values())

    @property
    def steps_done(self) -> int:
        """Agent steps (transitions over all sub-environments) used so far."""
        return frames_to_steps(self.frames_done, self.frames_per_step)

    def take(self, ends: list[EpisodeEnd]) -> None:
        self.record(ends)

    def record(
        self, ends: list[EpisodeEnd], frames: int = 0, phase: str | None = None, extras: dict | None = None
    ) -> None:
        """Count ``frames`` more emulator frames, then number and commit ``ends`` under the unit
        (with the frame counter, in one transaction). The suite env's own episodes come through
        :meth:`step`; those of its copies in other processes through
        ``TrainingContext.report_remote_episodes``, which opens their sealed reports first.
        ``phase`` and ``extras``: an evaluation round's episodes (``benchgen.run.evaluation.rounds``),
        numbered in the same sequence as the unit's own but recorded under their own phase."""
        self.frames_done += frames
        if not ends:
            return
        records = []
        for end in ends:
            number = self._next_episode.get(end.task, 0)
            self._next_episode[end.task] = number + 1
            if phase is None:
                self.own_episodes[end.task] = self.own_episodes.get(end.task, 0) + 1
            records.append(
                {
                    **({"phase": phase} if phase is not None else {}),
                    "task": end.task,
                    "episode": number,
                    "env_index": int(end.env_index),
                    "frames_total": self.frames_done,
                    "length_frames": int(end.length_frames),
                    "score": float(end.score),
                    "end_reason": end.end_reason,
                    "extras": {k: jsonable(v) for k, v in {**end.extras, **(extras or {})}.items()},
                    "events": end.events,
                }
            )
        self.store.record_episodes(self.unit, records, self.frames_done)
        self.episodes_recorded += len(records)
        for r in records:
            if phase is None and not math.isinf(r["score"]):
                self.recent_scores.append(r["score"])
        if self.writer is not None:
            for r in records:
                if not math.isinf(r["score"]):
                    kind = "evaluation" if "phase" in r else "episode"
                    self.writer.add_scalar(f"{kind}/score/{r['task']}", r["score"], self.frames_done)
        if self.progress is not None:
            self.progress.tick(self, force=True)

    def episodes_of(self, task: str) -> int:
        """Episodes recorded so far for ``task`` in the unit's own phase (resumed ones included)."""
        return self.own_episodes.get(task, 0)

    def recent_mean(self) -> float:
        return float(np.mean(self.recent_scores)) if self.recent_scores else float("nan")
