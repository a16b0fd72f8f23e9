"""Executing one unit, read top to bottom in :func:`run_unit`: build its parts (environment,
recorder, agent, checkpoint saver, evaluation, context), restore its agent, train it while its
evaluation rounds are played at their checkpoints, re-evaluate the best policy, save; a unit that
does not learn evaluates instead.

Resume semantics (``benchgen resume``): every recorded episode is kept; the unit's frame counter
continues from the last committed value (committed with every episode and every checkpoint);
the agent restarts from its last checkpoint (its learning since that checkpoint is redone with
fresh frames) and the environments restart from a reset (the episodes that were in progress
when the process died were never recorded, by design: a partial episode has no score).
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from typing import Any

from benchgen.agent import Agent, TrainingContext
from benchgen.remote import EpisodeInbox, RemoteEpisodes
from benchgen.results.rundir import RunDir
from benchgen.results.store import Unit, UnitStore
from benchgen.run.evaluation.best_policy import BestPolicy
from benchgen.run.evaluation.rounds import CheckpointEvaluation, EvaluationRounds
from benchgen.run.execution.build import UnitEnvFactory, build_agent, env_tasks, restore, unit_suite_env
from benchgen.run.execution.checkpoints import Saver, save_points
from benchgen.run.execution.recorder import EpisodeRecorder
from benchgen.run.execution.signals import STOP, StopRequested
from benchgen.run.planning.resolved import ResolvedRun
from benchgen.suite import EpisodeEnd, EvaluationSchedule


def execute_unit(run_dir: RunDir, r: ResolvedRun, unit_id: str, progress=None, store: UnitStore | None = None) -> Unit:
    """Run (or continue) one unit to its budget (:func:`run_unit`). Returns the unit as stored
    afterwards.

    ``store`` is the run's :class:`~benchgen.results.store.ResultsStore` by default; a remote
    worker passes another :class:`~benchgen.results.store.UnitStore` that streams its writes to
    the driver (see ``benchgen.run.execution.ray_cluster``).
    """
    own_store = store is None
    store = store if store is not None else run_dir.store()
    try:
        unit = store.unit(unit_id)
        if unit.status != "done":
            run_unit(run_dir, r, store, unit, progress)
        return store.unit(unit_id)
    finally:
        if own_store:
            store.checkpoint_wal()  # the unit's episodes now live in results.sqlite itself
            store.close()


def run_unit(run_dir: RunDir, r: ResolvedRun, store: UnitStore, unit: Unit, progress=None) -> None:
    """The unit loop: build, restore, train (evaluating at checkpoints), re-evaluate the best
    policy, save; a unit that does not learn plays its re-evaluation round or its zero-shot
    episodes instead of training. A stop (SIGINT, SIGTERM) saves, then raises
    :class:`StopRequested`."""
    run_dir.unit_dir(unit.unit_id).mkdir(parents=True, exist_ok=True)
    store.update_unit(unit.unit_id, status="running", started_at=time.time())
    parts = UnitParts.build(run_dir, r, store, unit, progress)  # build, restore
    final_saved = False  # the final agent's checkpoint is written (the best round's agent plays after it)
    try:
        if progress is not None:
            progress.tick(parts.recorder, force=True)
        if unit.learn:
            if parts.evaluation is not None:
                parts.evaluation.play_due()  # a round a kill interrupted: finish it first
            parts.agent.learn(parts.env, parts.ctx)  # train: ctx.maybe_checkpoint saves and evaluates when due
            if parts.evaluation is not None:
                parts.evaluation.play_due(training_over=True)
            if parts.best is not None and parts.best.due:  # re-evaluate the best policy
                parts.saver()  # the final agent's checkpoint, before the best round's takes its place
                final_saved = True
                parts.best.play(parts.evaluation)
        elif parts.evaluation is not None:  # a re-evaluation (``benchgen evaluate``): one round
            parts.evaluation.play_due(training_over=True)
        else:
            evaluate(parts.agent, parts.env, parts.recorder, parts.ctx, r.run.zeroshot_episodes)
    except OSError as exc:
        run_dir.check_present(exc)  # a run directory removed mid-run: one line saying so
        raise
    finally:
        parts.close()
    if not final_saved:
        parts.saver()  # save
    if STOP.requested:
        store.update_unit(unit.unit_id, status="running")
        raise StopRequested(unit.unit_id)
    store.update_unit(unit.unit_id, status="done", finished_at=time.time())


@dataclass(frozen=True)
class UnitParts:
    """What runs one unit, built once (:meth:`build`) and never changed."""

    env: Any
    """The unit's environment as the agent gets it: the suite env under the recorder under the
    suite's agent wrappers."""
    recorder: EpisodeRecorder
    agent: Agent
    saver: Saver
    evaluation: CheckpointEvaluation | None
    """The unit's evaluation rounds (a learning unit's protocol's, or a re-evaluation's one
    round); None: none."""
    best: BestPolicy | None
    """The best policy's re-evaluation, under a protocol that scores it."""
    ctx: UnitContext
    writer: Any
    run_dir: RunDir

    @classmethod
    def build(cls, run_dir: RunDir, r: ResolvedRun, store: UnitStore, unit: Unit, progress=None) -> UnitParts:
        """Build the unit's parts and restore its agent (its last checkpoint, or its starting
        one); on a failure what was built is closed."""
        num_envs = r.num_envs_for(unit.tasks)
        # A different seed per resume keeps fresh environments from replaying the same episodes.
        env_seed = unit.seed * 1_000_003 + unit.frames_done
        tasks_of_envs = env_tasks(unit.tasks, num_envs)  # evaluation rounds keep fixed tasks
        writer = _tensorboard(run_dir, unit)
        env = None
        try:
            suite_env = unit_suite_env(r, unit.tasks, num_envs, env_seed, "train" if unit.learn else "eval")
            recorder = EpisodeRecorder(suite_env, store, unit, unit.frames_done, progress, writer)
            env = r.suite.agent_wrappers(recorder, r.spec.needs)
            agent = build_agent(r, env, unit.tasks)
            restore(agent, run_dir, unit)
        except BaseException:
            if env is not None:
                env.close()
            _close_writer(writer, run_dir)
            raise
        schedule = r.suite.evaluation_schedule() if unit.learn else None
        if schedule is not None:
            rounds = EvaluationRounds(schedule, unit, recorder, tasks_of_envs, env_seed)
            checkpoint_dir = functools.partial(run_dir.checkpoint_dir, unit.unit_id)
            best = BestPolicy(rounds, checkpoint_dir) if schedule.best_policy else None
            # the best round's checkpoint survives the pruning
            saver = Saver(agent, r, store, unit, run_dir, recorder, also_keep=best.kept_frames if best else set)
            evaluation = CheckpointEvaluation(r, agent, rounds, saver)
        else:
            best = None
            saver = Saver(agent, r, store, unit, run_dir, recorder)
            evaluation = None
            if not unit.learn and r.reevaluation is not None:  # recorded under the unit's own phase
                once = EvaluationSchedule(**r.reevaluation)
                rounds = EvaluationRounds(once, unit, recorder, tasks_of_envs, env_seed, phase=unit.phase)
                evaluation = CheckpointEvaluation(r, agent, rounds)  # its agent is on disk: no save
        episode_budget = r.suite.episode_budget() if unit.learn else None
        ctx = UnitContext(r, unit, run_dir, recorder, saver, writer, progress, evaluation, episode_budget)
        return cls(env, recorder, agent, saver, evaluation, best, ctx, writer, run_dir)

    def close(self) -> None:
        """Close the environment, the Ray instance the unit started (if any) and the writer."""
        try:
            self.env.close()
        finally:
            self.ctx.close()
            _close_writer(self.writer, self.run_dir)


class UnitContext(TrainingContext):
    """The runner's side of the agent protocol for one unit, complete when built: the unit's
    recorder, the saver of its checkpoints, its evaluation at checkpoints, the progress display
    and the TensorBoard writer it reports to."""

    def __init__(
        self,
        r: ResolvedRun,
        unit: Unit,
        run_dir: RunDir,
        recorder: EpisodeRecorder,
        saver: Saver,
        writer,
        progress=None,
        evaluation: CheckpointEvaluation | None = None,
        episode_budget: int | None = None,
    ):
        self.recorder = recorder
        self.run_dir = run_dir
        self.unit = unit
        self.unit_dir = run_dir.unit_dir(unit.unit_id)
        self.seed = unit.seed
        self.phase, self.tasks = unit.phase, tuple(unit.tasks)
        self.budget_steps = r.to_steps(unit.budget_frames)
        #: training episodes per task that end the unit (``Suite.episode_budget``); None: frames only
        self.episode_budget = episode_budget
        #: the unit's evaluation rounds, played when due; None when its protocol has none
        self.evaluation = evaluation
        self.progress = progress
        self._save_points = sorted(p for p in save_points(r, unit) if p > recorder.frames_done)
        self._saver = saver
        self._writer = writer
        self._inbox = EpisodeInbox()  # opens the reports of this unit's remote_envs() collectors
        self._ray, self._started_ray = None, False

    @property
    def steps_done(self) -> int:
        return self.recorder.steps_done

    @property
    def finished(self) -> bool:
        return STOP.requested or self.steps_done >= self.budget_steps or self.episode_budget_reached

    @property
    def episode_budget_reached(self) -> bool:
        n = self.episode_budget
        return n is not None and all(self.recorder.episodes_of(t) >= n for t in set(self.unit.tasks))

    def maybe_checkpoint(self) -> None:
        if self.progress is not None:
            self.progress.tick(self.recorder)
        if self._save_points and self.recorder.frames_done >= self._save_points[0]:
            while self._save_points and self.recorder.frames_done >= self._save_points[0]:
                self._save_points.pop(0)
            self._saver()
        if self.evaluation is not None:
            self.evaluation.play_due()

    def log_scalar(self, tag: str, value: float) -> None:
        if self._writer is not None:
            self._writer.add_scalar(tag, value, self.recorder.frames_done)

    def remote_envs(self) -> UnitEnvFactory:
        return UnitEnvFactory(self._inbox.key, str(self.run_dir.path), list(self.unit.tasks))

    def report_remote_episodes(self, report: RemoteEpisodes) -> list[EpisodeEnd]:
        ends, frames = self._inbox.open(report)
        self.recorder.record(ends, frames)
        return ends

    def ray(self):
        if self._ray is None:
            from benchgen.run.execution.ray_connect import connect_for_agent

            self._ray, self._started_ray = connect_for_agent()
        return self._ray

    def close(self) -> None:
        """Stop the Ray instance :meth:`ray` started for this unit, if it started one."""
        if self._started_ray:
            self._ray.shutdown()
            self._ray, self._started_ray = None, False


def evaluate(agent: Agent, env, recorder: EpisodeRecorder, ctx: UnitContext, episodes_per_task: int) -> None:
    """Zero-shot evaluation: act greedily, no learning, until every task has its episodes
    (or the unit's frame cap is reached)."""
    obs, _ = env.reset(seed=ctx.reset_seed)
    tasks = set(ctx.unit.tasks)
    while not ctx.finished:
        if all(recorder.episodes_of(t) >= episodes_per_task for t in tasks):
            break
        obs, *_ = env.step(agent.act(obs, greedy=True))
        ctx.maybe_checkpoint()


def _close_writer(writer, run_dir: RunDir) -> None:
    try:
        writer.close()
    except OSError:
        if run_dir.meta_file.is_file():
            raise  # else the run directory went away, and the error on its way says so


def _tensorboard(run_dir: RunDir, unit: Unit):
    from torch.utils.tensorboard import SummaryWriter

    return SummaryWriter(log_dir=str(run_dir.tensorboard_dir(unit.unit_id)))
