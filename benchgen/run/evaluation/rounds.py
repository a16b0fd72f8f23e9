"""A learning unit's separate evaluation phases (``Suite.evaluation_schedule``).

Mnih et al. 2015, Hessel et al. 2018 and Bellemare et al. 2013 score an agent in evaluation
phases apart from training: learning pauses, the agent plays its tasks with its own policy mode
(greedy, or epsilon-greedy) in the suite's ``"eval"`` mode, and those episodes alone make the
score. Here a round is due when the unit's training frame counter passes one of the schedule's
points; the unit saves a checkpoint first, so the agent that plays the round is the one on disk.

Round ``k``'s episodes are recorded under the phase ``<unit phase>_eval`` with
``extras["eval_round"] = k`` and the frame counter at which the round began as ``frames_total``
(evaluation frames never count against the training budget). After ``kill -9`` or a stop, a
resumed unit restores that same checkpoint and *continues* the round: the episodes already
recorded were played by the same agent, so they count toward the round's quota; only the episodes
in progress at the kill are lost, as everywhere in benchgen.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from benchgen.phases import evaluation_phase
from benchgen.remote import EpisodeTracker
from benchgen.results.compare.gather import ROUND_KEY
from benchgen.run.execution.build import bind_emulators
from benchgen.run.execution.signals import STOP
from benchgen.suite import EpisodeEnd, EvaluationSchedule


class _RoundTracker(EpisodeTracker):
    """The eval env's tracker: frames and episode ends, handed to the round."""

    def __init__(self, env, on_ends: Callable[[list[EpisodeEnd]], None]):
        super().__init__(env)
        self._on_ends = on_ends

    def take(self, ends: list[EpisodeEnd]) -> None:
        self._on_ends(ends)


class EvaluationRounds:
    """The rounds of one learning unit: which are done, and playing those that are due.

    ``make_env(tasks)`` builds the suite env of the round (``mode="eval"``), ``wrap(env)`` puts
    the suite's agent wrappers on it; ``recorder`` is the unit's
    :class:`~benchgen.run.execution.recorder.EpisodeRecorder`, whose episode numbering the rounds share.
    """

    def __init__(
        self,
        schedule: EvaluationSchedule,
        unit,
        recorder,
        env_tasks: list[str],
        seed: int,
        phase: str | None = None,
        extras: dict | None = None,
    ):
        self.schedule = schedule
        self.unit = unit
        self.recorder = recorder
        self.env_tasks = env_tasks
        self.seed = seed
        #: the phase the rounds are recorded under: ``<unit phase>_eval``, or the unit's own phase
        #: for a unit that only evaluates (a re-evaluation under another protocol)
        self.phase = phase or evaluation_phase(unit.phase)
        #: recorded with every episode of the rounds, next to the round's number
        self.extras = dict(extras or {})
        self.points = schedule.points(unit.budget_frames)
        # what earlier attempts recorded, per round and task: (episodes, frames)
        self.recorded: dict[int, dict[str, tuple[int, int]]] = {}
        # per round and task: the sum of the raw scores recorded
        self.scores: dict[int, dict[str, float]] = {}
        # the training frame counter each round began at (its agent's checkpoint)
        self.began: dict[int, int] = {}
        for t in recorder.tally:
            if t.phase == self.phase and t.round is not None:
                self.recorded.setdefault(int(t.round), {})[t.task] = (t.episodes, t.frames)
                self.scores.setdefault(int(t.round), {})[t.task] = float(t.score or 0.0)
                self.began[int(t.round)] = int(t.frames_total)

    def complete(self, k: int) -> bool:
        """Whether round ``k`` has its quota for every task of the unit."""
        got = self.recorded.get(k, {})
        return all(self._quota_met(*got.get(task, (0, 0))) for task in set(self.unit.tasks))

    def mean_score(self, k: int) -> float:
        """Round ``k``'s mean raw score: the mean over the unit's tasks of each task's mean
        episode score (for one task, the mean of the round's episodes)."""
        got, sums = self.recorded.get(k, {}), self.scores.get(k, {})
        means = [sums.get(t, 0.0) / got[t][0] for t in sorted(set(self.unit.tasks)) if got.get(t, (0, 0))[0]]
        return float(np.mean(means)) if means else float("nan")

    def best_round(self) -> int | None:
        """The complete round with the highest mean raw score (the earliest of equals); None
        before one is complete."""
        done = [k for k in sorted(self.recorded) if self.complete(k)]
        return max(done, key=self.mean_score) if done else None

    def _quota_met(self, episodes: int, frames: int) -> bool:
        s = self.schedule
        return episodes >= s.episodes if s.episodes else frames >= s.frames

    def due(self, frames_done: int, training_over: bool) -> list[int]:
        """Rounds to play now: those whose point the counter has passed, and after training the
        last one (an episode budget may end training before the last point)."""
        last = len(self.points)
        rounds = [k for k, p in enumerate(self.points, 1) if p <= frames_done and k < last]
        if training_over or frames_done >= self.points[-1]:
            rounds.append(last)
        return [k for k in rounds if not self.complete(k)]

    def play_due(self, agent, make_env, wrap, save, training_over: bool = False) -> None:
        """Play every due round; ``save()`` writes the agent's checkpoint at the current counter
        first (a no-op when one is already there)."""
        rounds = self.due(self.recorder.frames_done, training_over)
        if rounds:
            save()
        for k in rounds:
            if STOP.requested:
                return
            self._play(k, agent, make_env, wrap)

    def _play(self, k: int, agent, make_env, wrap) -> None:
        s = self.schedule
        frames_at = self.recorder.frames_done
        got = {task: list(self.recorded.get(k, {}).get(task, (0, 0))) for task in set(self.unit.tasks)}
        started = {task: n for task, (n, _) in got.items()}
        n_envs = len(self.env_tasks)
        rng = np.random.default_rng([self.seed, k, frames_at])

        def open_for(task: str) -> bool:
            # an episode counts if it starts while its task's quota is open
            return started[task] < s.episodes if s.episodes else got[task][1] + running_frames(task) < s.frames

        sums = {task: self.scores.get(k, {}).get(task, 0.0) for task in set(self.unit.tasks)}
        counted = np.zeros(n_envs, dtype=bool)
        steps_in = np.zeros(n_envs, dtype=np.int64)

        def running_frames(task: str) -> int:
            mask = counted & (np.asarray(self.env_tasks) == task)
            return int(steps_in[mask].sum()) * tracker.frames_per_step

        def start(i: int) -> None:
            task = self.env_tasks[i]
            counted[i] = open_for(task)
            if counted[i]:
                started[task] += 1

        def on_ends(ends: list[EpisodeEnd]) -> None:
            mine = [e for e in ends if counted[e.env_index]]
            for e in ends:
                counted[e.env_index] = False
                steps_in[e.env_index] = 0
            for e in mine:
                got[e.task][0] += 1
                got[e.task][1] += int(e.length_frames)
                sums[e.task] += float(e.score)
            self.recorder.record(mine, 0, phase=self.phase, extras={**self.extras, ROUND_KEY: k})
            for e in ends:
                start(e.env_index)

        env_seed = self.seed * 1_000_003 + frames_at + 7_919 * k
        tracker = _RoundTracker(make_env(self.env_tasks, env_seed), on_ends)
        env = wrap(tracker)
        try:
            obs, _ = env.reset(seed=env_seed)
            for i in range(n_envs):
                start(i)
            space = env.single_action_space
            space.seed(int(rng.integers(2**31)))
            while counted.any() and not STOP.requested:
                actions = np.asarray(agent.act(obs, greedy=True))
                if s.epsilon > 0:
                    explore = rng.random(n_envs) < s.epsilon
                    if explore.any():
                        actions = actions.copy()
                        for i in np.flatnonzero(explore):
                            actions[i] = space.sample()
                steps_in += counted
                obs, *_ = env.step(actions)
        finally:
            env.close()
        self.recorded[k] = {task: (n, f) for task, (n, f) in got.items()}
        self.scores[k] = sums
        self.began[k] = frames_at


def _on_disk() -> None:
    """The save before a round whose agent is already on disk: nothing to write."""


class CheckpointEvaluation:
    """A unit's evaluation rounds played with its agent when they are due, in the suite's
    ``"eval"`` environments under the suite's agent wrappers (the agent gets each round's
    emulators, then the training environment's back). The unit's checkpoint schedule calls
    :meth:`play_due` after every vector step (``TrainingContext.maybe_checkpoint``) and once
    training is over; ``saver`` (:class:`benchgen.run.execution.checkpoints.Saver`) writes the agent that
    plays a round first, so a resumed unit continues the round with it (None: the agent is on
    disk already, a re-evaluated one)."""

    def __init__(self, r, agent, rounds: EvaluationRounds, saver=None):
        self.r = r
        self.agent = agent
        self.rounds = rounds
        self.saver = saver

    def play_due(self, training_over: bool = False) -> None:
        """Play the unit's rounds that are due (after training: the last one too)."""
        if not STOP.requested:
            self._play(self.rounds, training_over, self.saver.save_current if self.saver else _on_disk)

    def play_once(self, rounds: EvaluationRounds) -> None:
        """Play ``rounds``' due round with the agent as it is, on disk already (the best policy's
        re-evaluation, ``benchgen.run.evaluation.best_policy``)."""
        self._play(rounds, True, _on_disk)

    def _eval_env(self, tasks: list[str], seed: int):
        return self.r.suite.make_env(tasks, seed=seed, mode="eval")

    def _wrap(self, env):
        return bind_emulators(self.r, self.agent, self.r.suite.agent_wrappers(env, self.r.spec.needs))

    def _play(self, rounds: EvaluationRounds, training_over: bool, save) -> None:
        try:
            rounds.play_due(self.agent, self._eval_env, self._wrap, save, training_over)
        finally:
            bind_emulators(self.r, self.agent, rounds.recorder)
