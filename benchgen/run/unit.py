"""Executing one unit: build its env, recorder and agent, learn (or evaluate) to its budget.

Resume semantics (``benchgen resume``): every recorded episode is kept; the unit's frame counter
continues from the last committed value (committed with every episode and every checkpoint);
the agent restarts from its last checkpoint (its learning since that checkpoint is redone with
fresh frames) and the environments restart from a reset (the episodes that were in progress
when the process died were never recorded, by design: a partial episode has no score).
"""

from __future__ import annotations

import math
import pickle
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

from benchgen.agent import Agent, TrainingContext
from benchgen.capabilities import emulators_of
from benchgen.errors import UsageError
from benchgen.remote import CollectorKey, EpisodeInbox, RemoteEnvFactory, RemoteEpisodes
from benchgen.results.rundir import RunDir
from benchgen.results.store import Unit, UnitStore
from benchgen.run.best_policy import BestPolicy
from benchgen.run.checkpoints import Saver, save_points
from benchgen.run.evaluation import EvaluationRounds
from benchgen.run.plan import ResolvedRun, resolve_from_meta
from benchgen.run.recorder import EpisodeRecorder
from benchgen.run.signals import STOP, StopRequested
from benchgen.suite import EpisodeEnd, EvaluationSchedule, frames_to_steps


class UnitContext(TrainingContext):
    """The runner's side of the agent protocol for one unit."""

    def __init__(self, recorder: EpisodeRecorder, unit: Unit, run_dir: RunDir, save_points: list[int], save_fn, writer):
        self.recorder = recorder
        self.run_dir = run_dir
        self.unit = unit
        self.unit_dir = run_dir.unit_dir(unit.unit_id)
        self.seed = unit.seed
        self.phase, self.tasks = unit.phase, tuple(unit.tasks)
        self.budget_steps = frames_to_steps(unit.budget_frames, recorder.frames_per_step)
        self._save_points = sorted(p for p in save_points if p > recorder.frames_done)
        self._save_fn = save_fn
        self._writer = writer
        self.progress = None
        self._inbox = EpisodeInbox()  # opens the reports of this unit's remote_envs() collectors
        self._ray, self._started_ray = None, False
        #: training episodes per task that end the unit (``Suite.episode_budget``); None: frames only
        self.episode_budget: int | None = None
        #: plays the unit's evaluation rounds that are due (argument: whether training is over);
        #: None when its protocol has no evaluation phases (see ``_schedule_rounds``)
        self.play_rounds: Callable[[bool], None] | None = None

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
            self._save_fn()
        self.evaluate_due()

    def evaluate_due(self, training_over: bool = False) -> None:
        """Play the evaluation rounds that are due, if the unit's protocol has any."""
        if self.play_rounds is not None and not STOP.requested:
            self.play_rounds(training_over)

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
            from benchgen.run.ray_connect import connect_for_agent

            self._ray, self._started_ray = connect_for_agent()
        return self._ray

    def close(self) -> None:
        """Stop the Ray instance :meth:`ray` started for this unit, if it started one."""
        if self._started_ray:
            self._ray.shutdown()
            self._ray, self._started_ray = None, False


class UnitEnvFactory(RemoteEnvFactory):
    """``TrainingContext.remote_envs()`` of a unit: rebuilds the run from its directory (on
    storage every node reaches, as for ``--executor ray``) in the process that calls it."""

    def __init__(self, key: CollectorKey, run_dir: str, tasks: list[str]):
        super().__init__(key)
        self.run_dir, self.tasks = run_dir, tasks

    def _run(self) -> ResolvedRun:
        from benchgen.registry import get_registry

        return resolve_from_meta(get_registry(), RunDir(self.run_dir).record())

    def suite_env(self, num_envs: int, seed: int, worker: int = 0, workers: int = 1):
        r = self._run()
        return unit_suite_env(r, self.tasks, num_envs, seed, "train", worker, workers)

    def agent_wrappers(self, env):
        r = self._run()
        return r.suite.agent_wrappers(env, r.spec.needs)


def env_tasks(tasks: list[str], num_envs: int) -> list[str]:
    """One task per sub-environment: a joint unit cycles its tasks (each at least once)."""
    if len(set(tasks)) > 1:
        return [tasks[i % len(tasks)] for i in range(max(num_envs, len(tasks)))]
    return tasks[:1] * num_envs


def worker_tasks(tasks: list[str], num_envs: int, worker: int, workers: int) -> list[str]:
    """The tasks of worker ``worker``'s ``num_envs`` sub-environments when ``workers`` workers share
    a unit (:meth:`benchgen.remote.RemoteEnvFactory.suite_env`): one worker has
    :func:`env_tasks`; several take the unit's distinct tasks in turn, sub-environment ``i`` of
    worker ``w`` playing task ``(w * num_envs + i) % T`` (188 workers of one sub-environment on
    47 tasks: 4 workers per task, as Nichol et al. 2018 ran joint PPO)."""
    if workers <= 1:
        return env_tasks(tasks, num_envs)
    distinct = list(dict.fromkeys(tasks))
    return [distinct[(worker * num_envs + i) % len(distinct)] for i in range(num_envs)]


def unit_suite_env(
    r: ResolvedRun, tasks: list[str], num_envs: int, seed: int, mode: str, worker: int = 0, workers: int = 1
):
    """A unit's suite env (of one of ``workers`` workers): a training unit of several tasks under
    ``task_sampling`` "episode" gets joint environments (:class:`benchgen.joint_env.JointTaskVectorEnv`,
    ``num_envs`` slots drawing a new task every episode); any other unit, sub-environments with
    fixed tasks (:func:`worker_tasks`)."""
    if mode == "train" and r.run.task_sampling == "episode" and len(set(tasks)) > 1:
        from benchgen.joint_env import JointTaskVectorEnv

        def make_one(task: str, one_seed: int):
            return r.suite.make_env([task], seed=one_seed, mode=mode)

        return JointTaskVectorEnv(make_one, tasks, num_envs, seed)
    return r.suite.make_env(worker_tasks(tasks, num_envs, worker, workers), seed=seed, mode=mode)


def build_agent(r: ResolvedRun, env, tasks=None) -> Agent:
    """``factory(config, environment)`` (``AgentSpec.factory``) for ``env``, the unit's env under
    the suite's agent wrappers, with the config of a unit playing ``tasks`` (``config_for``; None:
    the run's); an agent that declared emulator capabilities gets ``env``'s emulators
    (``Agent.use_emulators``)."""
    config = r.agent_config if tasks is None else r.config_for(tasks)
    agent = r.spec.factory(config, r.spec.environment(r.suite, env))
    bind_emulators(r, agent, env)
    return agent


def bind_emulators(r: ResolvedRun, agent: Agent, env):
    """Hand ``agent`` the emulators of ``env`` (:mod:`benchgen.capabilities`) if it declared
    capabilities; returns ``env``."""
    if r.spec.needs.capabilities:
        agent.use_emulators(emulators_of(env))
    return env


def _restore(agent: Agent, run_dir: RunDir, unit: Unit) -> None:
    """Load the unit's last checkpoint (a resume) or its starting checkpoint (fine-tuning, zero-shot).

    A checkpoint the store says exists must load: continuing the frame counter with a fresh agent
    would silently restart learning."""
    last = run_dir.absolute(unit.last_checkpoint)
    if last is not None:
        run_dir.inside(last)  # a unit's own checkpoints live in the run
        if not last.is_dir():
            raise UsageError(
                f"unit {unit.unit_id}: its last checkpoint {last} is missing; restore it from a copy "
                "of the run (checkpoints live under the run directory)"
            )
        load_checkpoint(agent, last, f"unit {unit.unit_id}: its last checkpoint", "restore it from a copy of the run")
    elif unit.init_checkpoint:
        start = run_dir.absolute(unit.init_checkpoint)
        if not start.is_dir():
            raise UsageError(
                f"unit {unit.unit_id}: its starting checkpoint {start} is missing; restore it or start a new run"
            )
        load_checkpoint(agent, start, f"unit {unit.unit_id}: its starting checkpoint", "restore it or start a new run")


_COPY = "restore it from a copy of the run"

#: what an agent's ``load`` raises on a damaged, truncated or foreign checkpoint file (a broken
#: JSON or text file is a ``ValueError``; numpy's ``.npz`` files are zip archives)
_DAMAGED = (
    OSError,
    EOFError,
    ValueError,
    KeyError,
    IndexError,
    TypeError,
    AttributeError,
    RuntimeError,
    zipfile.BadZipFile,
    pickle.UnpicklingError,
)


def load_checkpoint(agent: Agent, directory: Path, what: str, hint: str) -> None:
    """``agent.load(directory)``; a checkpoint it cannot read (truncated, damaged, another
    agent's) is one line naming it, not the agent's traceback. Every checkpoint benchgen loads
    (a resume, a fine-tuning start, ``evaluate``, ``--from``) is loaded through here."""
    try:
        agent.load(directory)
    except UsageError:
        raise
    except _DAMAGED as exc:
        first = (str(exc).strip().splitlines() or [""])[0][:200]
        raise UsageError(f"{what} {directory} cannot be loaded ({type(exc).__name__}: {first}); {hint}") from None


def execute_unit(run_dir: RunDir, r: ResolvedRun, unit_id: str, progress=None, store: UnitStore | None = None) -> Unit:
    """Run (or continue) one unit to its budget. Returns the unit as stored afterwards.

    ``store`` is the run's :class:`~benchgen.results.store.ResultsStore` by default; a remote
    worker passes another :class:`~benchgen.results.store.UnitStore` that streams its writes to
    the driver (see ``benchgen.run.ray_cluster``).
    """
    own_store = store is None
    store = store if store is not None else run_dir.store()
    try:
        unit = store.unit(unit_id)
        if unit.status == "done":
            return unit
        run_dir.unit_dir(unit.unit_id).mkdir(parents=True, exist_ok=True)
        store.update_unit(unit.unit_id, status="running", started_at=time.time())
        num_envs = r.num_envs_for(unit.tasks)
        # A different seed per resume keeps fresh environments from replaying the same episodes.
        env_seed = unit.seed * 1_000_003 + unit.frames_done
        tasks_of_envs = env_tasks(unit.tasks, num_envs)  # evaluation rounds keep fixed tasks
        suite_env = unit_suite_env(r, unit.tasks, num_envs, env_seed, "train" if unit.learn else "eval")
        task_done = _TaskProgress(progress, unit)
        recorder = EpisodeRecorder(suite_env, store, unit, frames_done=unit.frames_done, on_episodes=task_done)
        env = r.suite.agent_wrappers(recorder, r.spec.needs)
        try:
            agent = build_agent(r, env, unit.tasks)
            _restore(agent, run_dir, unit)
        except BaseException:
            env.close()
            raise
        writer = _tensorboard(run_dir, unit)
        saver = Saver(agent, r, store, unit, run_dir, recorder)
        ctx = UnitContext(recorder, unit, run_dir, save_points(r, unit), saver, writer)
        task_done.bind(recorder, ctx)
        ctx.progress = progress
        best = None
        if unit.learn:
            ctx.episode_budget = r.suite.episode_budget()
            best = _schedule_rounds(ctx, r, store, agent, saver, tasks_of_envs, env_seed)
        holds_best = False  # whether the agent is the best round's, not the final one (no save then)
        if progress is not None:
            progress.tick(recorder, force=True)
        try:
            if unit.learn:
                ctx.evaluate_due()  # a round a kill interrupted: finish it first
                agent.learn(env, ctx)
                ctx.evaluate_due(training_over=True)
                if best is not None and best.due:
                    saver()  # the final agent's checkpoint, before the best round's takes its place
                    holds_best = True
                    best.play(
                        lambda path: load_checkpoint(
                            agent, path, f"unit {unit.unit_id}: its best round's checkpoint", _COPY
                        ),
                        lambda rounds: _play_due(rounds, r, agent, lambda: None, training_over=True),
                    )
            elif r.reevaluation is not None:
                _reevaluate(ctx, r, agent, tasks_of_envs, env_seed)
            else:
                evaluate(agent, env, recorder, ctx, r.run.zeroshot_episodes)
        except OSError:
            run_dir.check_present()  # a run directory removed mid-run: one line saying so
            raise
        finally:
            env.close()
            ctx.close()
            _close_writer(writer, run_dir)
        if not holds_best:
            saver()
        if STOP.requested:
            store.update_unit(unit.unit_id, status="running")
            raise StopRequested(unit.unit_id)
        store.update_unit(unit.unit_id, status="done", finished_at=time.time())
        return store.unit(unit.unit_id)
    finally:
        if own_store:
            store.checkpoint_wal()  # the unit's episodes now live in results.sqlite itself
            store.close()


def _play_due(rounds: EvaluationRounds, r: ResolvedRun, agent: Agent, save, training_over: bool) -> None:
    """Play ``rounds``' due rounds in the suite's eval env, under the suite's agent wrappers (the
    agent gets each round's emulators, then the training env's back)."""
    try:
        rounds.play_due(
            agent,
            lambda tasks, seed: r.suite.make_env(tasks, seed=seed, mode="eval"),
            lambda env: bind_emulators(r, agent, r.suite.agent_wrappers(env, r.spec.needs)),
            save,
            training_over,
        )
    finally:
        bind_emulators(r, agent, rounds.recorder)


def _reevaluate(ctx: UnitContext, r: ResolvedRun, agent: Agent, tasks_of_envs: list[str], env_seed: int) -> None:
    """A re-evaluation unit (``benchgen evaluate``): one round under the run's protocol, recorded
    under the unit's own phase (continued, like any round, after a kill)."""
    schedule = EvaluationSchedule(**r.reevaluation)
    rounds = EvaluationRounds(schedule, ctx.unit, ctx.recorder, tasks_of_envs, env_seed, phase=ctx.unit.phase)
    # the agent is its starting checkpoint, already on disk: nothing to save before the round
    _play_due(rounds, r, agent, lambda: None, training_over=True)


def _schedule_rounds(
    ctx: UnitContext, r: ResolvedRun, store: UnitStore, agent: Agent, saver, tasks_of_envs: list[str], env_seed: int
) -> BestPolicy | None:
    """Give the unit its evaluation phases (``Suite.evaluation_schedule``), if its protocol has any;
    returns the re-evaluation of the best round's agent under a protocol that scores it."""
    schedule = r.suite.evaluation_schedule()
    if schedule is None:
        return None
    unit, recorder = ctx.unit, ctx.recorder
    rounds = EvaluationRounds(schedule, unit, recorder, tasks_of_envs, env_seed)
    best = None
    if schedule.best_policy:
        best = BestPolicy(rounds, lambda frames: ctx.run_dir.checkpoint_dir(unit.unit_id, frames))
        saver.also_keep = best.kept_frames  # the best round's checkpoint survives the pruning

    def save() -> None:  # the round's agent is the one on disk (a resume continues the round with it)
        if store.unit(unit.unit_id).last_checkpoint_frames != recorder.frames_done:
            saver()

    ctx.play_rounds = lambda training_over: _play_due(rounds, r, agent, save, training_over)
    return best


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


class _TaskProgress:
    """Progress-bar and TensorBoard feed for one unit."""

    def __init__(self, progress, unit: Unit):
        self.progress = progress
        self.unit = unit
        self.recorder = None
        self.ctx = None

    def bind(self, recorder, ctx):
        self.recorder, self.ctx = recorder, ctx

    def __call__(self, records):
        if self.ctx is not None:
            for rec in records:
                if not math.isinf(rec["score"]):
                    kind = "evaluation" if "phase" in rec else "episode"
                    self.ctx.log_scalar(f"{kind}/score/{rec['task']}", rec["score"])
        if self.progress is not None and self.recorder is not None:
            self.progress.tick(self.recorder, force=True)


def _close_writer(writer, run_dir: RunDir) -> None:
    try:
        writer.close()
    except OSError:
        if run_dir.meta_file.is_file():
            raise  # else the run directory went away, and the error on its way says so


def _tensorboard(run_dir: RunDir, unit: Unit):
    from torch.utils.tensorboard import SummaryWriter

    return SummaryWriter(log_dir=str(run_dir.tensorboard_dir(unit.unit_id)))
