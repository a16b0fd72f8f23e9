"""Episode bookkeeping for suite environments: what every ``SuiteVectorEnv`` keeps per
sub-environment (the running raw return and length) and the finished episodes it has not yet
handed out (``pop_episode_ends``).

Modelled on Gymnasium's ``RecordEpisodeStatistics`` wrapper (which sums rewards and counts steps
per episode and reports them when it ends), but as a helper a suite env holds rather than a
wrapper around it: the suite knows why an episode ended and what else to record about it
(``EpisodeEnd.end_reason``, ``extras``, ``events``), and some suites end episodes the wrapped
game does not (Atari SABER's stuck limit). A suite env, first-party or third-party::

    self.episodes = EpisodeBook(self.tasks, self.frames_per_step)

    def reset(self, ...):
        self.episodes.reset()             # a reset abandons the running episodes
    def step(self, actions):
        ...
        self.episodes.add(rewards)        # every sub-environment took one agent step
        for i in np.flatnonzero(terminated | truncated):
            self.episodes.end(i, "game_over" if terminated[i] else "time_limit")
    def pop_episode_ends(self):
        return self.episodes.pop()

Scores are raw: the book sums the rewards it is given, and a suite that shapes rewards for agents
does so in its agent wrappers, after the book has counted them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from benchgen.suite import EpisodeEnd


class EpisodeBook:
    """Per sub-environment running return and length, and the episodes finished since the last
    :meth:`pop`."""

    def __init__(self, tasks: Sequence[str], frames_per_step: int):
        #: the task each sub-environment plays
        self.tasks = list(tasks)
        #: emulator frames per agent step (an episode's length is counted in frames)
        self.frames_per_step = int(frames_per_step)
        #: each sub-environment's raw return so far in its running episode
        self.returns = np.zeros(len(self.tasks), dtype=np.float64)
        #: agent steps each sub-environment has taken in its running episode
        self.steps = np.zeros(len(self.tasks), dtype=np.int64)
        self._ended: list[EpisodeEnd] = []

    def reset(self) -> None:
        """Every sub-environment starts a new episode; the running ones are abandoned (they never
        finished, so they are not recorded) and so are finished ones not yet popped."""
        self.returns[:] = 0.0
        self.steps[:] = 0
        self._ended = []

    def restart(self, which) -> None:
        """The sub-environments in ``which`` (a mask or indices) start new episodes without
        recording the running ones (a partial reset); finished episodes stay to be popped."""
        self.returns[which] = 0.0
        self.steps[which] = 0

    def add(self, rewards) -> None:
        """Every sub-environment took one agent step and got ``rewards`` (raw)."""
        self.returns += rewards
        self.steps += 1

    def end(
        self,
        index: int,
        end_reason: str,
        *,
        score: float | None = None,
        length_frames: int | None = None,
        extras: dict[str, Any] | None = None,
        events: list[dict[str, Any]] | None = None,
    ) -> EpisodeEnd:
        """Sub-environment ``index``'s episode ended: record it and start its next one. ``score``
        and ``length_frames`` default to the running return and steps x ``frames_per_step``; a
        suite passes its own where its rules differ (SABER's infinite gameplay)."""
        i = int(index)
        end = EpisodeEnd(
            env_index=i,
            task=self.tasks[i],
            score=float(self.returns[i]) if score is None else float(score),
            length_frames=int(self.steps[i]) * self.frames_per_step if length_frames is None else int(length_frames),
            end_reason=end_reason,
            extras=dict(extras or {}),
            events=list(events or []),
        )
        self._ended.append(end)
        self.returns[i] = 0.0
        self.steps[i] = 0
        return end

    def record(self, end: EpisodeEnd) -> None:
        """Keep an episode a sub-environment recorded itself (another process, another env)."""
        self._ended.append(end)

    @property
    def pending(self) -> list[EpisodeEnd]:
        """The finished episodes not yet popped (the book's own list)."""
        return self._ended

    def pop(self) -> list[EpisodeEnd]:
        """Return (and forget) the episodes that finished since the last call."""
        ended, self._ended = self._ended, []
        return ended
