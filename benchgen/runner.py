"""Runs: planning units, executing them with checkpoints, resuming after a crash.

A run directory holds::

    run.json            the fully resolved config, protocol, plugin and dependency versions
    results.sqlite      the results store (episodes, units, checkpoints)
    units/<unit>/checkpoints/<frames>/   resumable agent checkpoints (+ checkpoint.json)
    tb/<unit>/          TensorBoard logs

Resume semantics (``benchgen resume``): every recorded episode is kept; the unit's frame counter
continues from the last committed value (committed with every episode and every checkpoint);
the agent restarts from its last checkpoint (its learning since that checkpoint is redone with
fresh frames) and the environments restart from a reset (the episodes that were in progress
when the process died were never recorded, by design: a partial episode has no score).
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
import math
import platform
import shutil
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchgen.agent import Agent, AgentSpec, TrainingContext
from benchgen.config import RunConfig, build_dataclass, replace_config, to_dict
from benchgen.errors import UsageError
from benchgen.recorder import EpisodeRecorder
from benchgen.registry import Registry
from benchgen.store import DB_NAME, ResultsStore, Unit
from benchgen.suite import Split, Suite

RUN_FILE = "run.json"
CHECKPOINT_FILE = "checkpoint.json"
DEPENDENCIES = ("benchgen", "gymnasium", "ale-py", "stable-retro", "torch", "stable-baselines3", "numpy", "pluggy")


# -- planning ------------------------------------------------------------------------------
@dataclass
class ResolvedRun:
    """Everything a run needs, resolved from the user's input."""

    run: RunConfig
    agent_config: Any
    suite: Suite
    spec: AgentSpec
    split: Split | None
    tasks: list[str]
    budget: int
    checkpoints: list[int]


def resolve(registry: Registry, run: RunConfig, agent_overrides: dict[str, Any]) -> ResolvedRun:
    """Validate names and numbers and fill protocol defaults. Raises UsageError on bad input."""
    suite = registry.suite(run.suite)
    spec = registry.agent(run.agent)
    if spec.check_suite is not None:
        spec.check_suite(suite)
    split = None
    if run.tasks:
        tasks = registry.check_tasks(suite, run.tasks)
        if spec.joint:
            raise UsageError(f"agent '{spec.name}' trains on a split's train tasks; pass --split instead of --tasks")
    else:
        split_name = run.split or (spec.joint and suite.default_joint_split) or suite.default_split
        if split_name is None:
            raise UsageError(f"suite '{suite.name}' has no default split; pass --tasks or --split")
        split = registry.split(suite, split_name)
        tasks = list(split.train if spec.joint else split.tasks)
        if spec.joint and run.finetune and not split.test:
            raise UsageError(f"split '{split.name}' has no test tasks to fine-tune on; choose a split with a test set")
    for task in set(tasks) | set(split.test if (split and spec.joint) else ()):
        suite.check_task_available(task)
    if not run.seeds:
        raise UsageError("--seeds needs at least one seed")
    if len(set(run.seeds)) != len(run.seeds):
        raise UsageError("--seeds lists a seed twice; give each seed once")
    budget = suite.default_budget if run.budget is None else run.budget
    if budget <= 0:
        raise UsageError(f"the budget must be a positive number of {suite.budget_unit}, got {budget}")
    if run.checkpoints is not None:
        checkpoints = sorted(set(run.checkpoints))
        if any(c <= 0 or c > budget for c in checkpoints):
            raise UsageError(f"reporting checkpoints must lie in (0, {budget}] {suite.budget_unit}")
    else:
        scale = budget / suite.default_budget
        checkpoints = sorted({max(1, int(round(c * scale))) for c in suite.default_checkpoints} | {budget})
    if run.checkpoint_every is not None and run.checkpoint_every <= 0:
        raise UsageError("checkpoint_every must be positive")
    if run.num_envs is not None and run.num_envs <= 0:
        raise UsageError("num_envs must be positive")
    if run.finetune_budget is not None and run.finetune_budget <= 0:
        raise UsageError("finetune_budget must be positive")
    if run.zeroshot_frames is not None and run.zeroshot_frames <= 0:
        raise UsageError(f"zeroshot_frames must be a positive number of {suite.budget_unit}")
    if run.zeroshot_episodes <= 0:
        raise UsageError("zeroshot_episodes must be positive")
    if run.from_checkpoint and not spec.joint:
        raise UsageError(f"--from is for joint agents; '{spec.name}' is not one")
    if run.from_checkpoint and not (Path(run.from_checkpoint) / CHECKPOINT_FILE).is_file():
        raise UsageError(f"--from {run.from_checkpoint}: no benchgen checkpoint there (no {CHECKPOINT_FILE})")
    defaults = spec.defaults_for(suite)
    agent_config = build_dataclass(spec.config_class, {}, f"{spec.name} config")
    agent_config = replace_config(agent_config, {**defaults, **agent_overrides}, f"{spec.name} config")
    return ResolvedRun(run, agent_config, suite, spec, split, tasks, budget, checkpoints)


def to_frames(suite: Suite, amount: int) -> int:
    """Budget units -> emulator frames."""
    return amount if suite.budget_unit == "frames" else amount * suite.frames_per_step


def plan_units(r: ResolvedRun) -> list[Unit]:
    """The units of a run, in execution order."""
    units: list[Unit] = []
    budget_frames = to_frames(r.suite, r.budget)

    def add(phase, tasks, seed, frames, learn=True, init=None, uid=None):
        uid = uid or f"{phase}-{tasks[0]}-s{seed}"
        units.append(Unit(uid, len(units), phase, list(tasks), seed, frames, init, learn))

    for seed in r.run.seeds:
        if not r.spec.joint:
            for task in r.tasks:
                add("train", [task], seed, budget_frames)
            continue
        split_name = r.split.name if r.split else "custom"
        init = None
        if r.run.from_checkpoint:
            init = str(Path(r.run.from_checkpoint).resolve())
        else:
            add("joint", r.tasks, seed, budget_frames, uid=f"joint-{split_name}-s{seed}")
        if r.run.zeroshot_frames is not None:
            zs_frames = to_frames(r.suite, r.run.zeroshot_frames)
        else:
            zs_frames = max(r.suite.frames_per_step, budget_frames // max(1, len(r.tasks)))
        for task in (*r.split.train, *r.split.test):
            add("zeroshot", [task], seed, zs_frames, learn=False, init=init)
        if r.run.finetune:
            ft = r.run.finetune_budget if r.run.finetune_budget is not None else r.suite.default_budget
            for task in r.split.test:
                add("finetune", [task], seed, to_frames(r.suite, ft), init=init)
    return units


def versions() -> dict[str, str]:
    out = {"python": platform.python_version(), "platform": platform.platform()}
    for dist in DEPENDENCIES:
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            pass
    return out


def create_run_dir(registry: Registry, r: ResolvedRun, out: Path) -> Path:
    """Make the run directory, refusing one that holds another run. Writes nothing on failure."""
    if (out / DB_NAME).exists() or (out / RUN_FILE).exists():
        raise UsageError(f"{out} already holds a run; continue it with `benchgen resume {out}` or pick another --out")
    if out.exists() and any(out.iterdir()):
        raise UsageError(f"{out} is not empty; pick an empty or new --out directory")
    units = plan_units(r)
    out.mkdir(parents=True, exist_ok=True)
    meta = {
        "run": to_dict(r.run),
        "agent_config": to_dict(r.agent_config),
        "suite": r.suite.name,
        "agent": r.spec.name,
        "joint": r.spec.joint,
        "tasks": r.tasks,
        "split": dataclasses.asdict(r.split) if r.split else None,
        "budget": r.budget,
        "budget_unit": r.suite.budget_unit,
        "frames_per_step": r.suite.frames_per_step,
        "checkpoints": r.checkpoints,
        "protocol": r.suite.protocol(),
        "suite_version": r.suite.version,
        "task_score_rule": r.suite.task_score_rule,
        "episode_fields": list(r.suite.episode_fields),
        "plugins": registry.plugin_versions(),
        "versions": versions(),
        "created_at": time.time(),
        "command": sys.argv,
    }
    (out / RUN_FILE).write_text(json.dumps(meta, indent=2, default=str))
    store = ResultsStore(out)
    for key, value in meta.items():
        store.set_meta(key, value)
    store.add_units(units)
    store.close()
    return out


def load_meta(run_dir: Path) -> dict[str, Any]:
    path = Path(run_dir) / RUN_FILE
    if not path.is_file() or not (Path(run_dir) / DB_NAME).is_file():
        raise UsageError(f"{run_dir} is not a benchgen run directory (no {RUN_FILE} / {DB_NAME})")
    return json.loads(path.read_text())


def resolve_from_meta(registry: Registry, meta: dict[str, Any]) -> ResolvedRun:
    """Rebuild the resolved run from a run directory's saved config (resume, workers)."""
    run = build_dataclass(RunConfig, meta["run"], "saved run config")
    spec = registry.agent(meta["agent"])
    fields = {f.name for f in dataclasses.fields(spec.config_class) if f.init}
    agent_config = build_dataclass(
        spec.config_class, {k: v for k, v in meta["agent_config"].items() if k in fields}, f"{spec.name} config"
    )
    suite = registry.suite(meta["suite"])
    split = Split(**{**meta["split"], "train": tuple(meta["split"]["train"]), "test": tuple(meta["split"]["test"])}) if meta["split"] else None
    return ResolvedRun(run, agent_config, suite, spec, split, meta["tasks"], meta["budget"], meta["checkpoints"])


# -- executing a unit ----------------------------------------------------------------------
class UnitContext(TrainingContext):
    """The runner's side of the agent protocol for one unit."""

    def __init__(self, recorder: EpisodeRecorder, unit: Unit, unit_dir: Path, save_points: list[int], save_fn, writer,
                 run_dir: Path | None = None):
        self.recorder = recorder
        self.run_dir = run_dir
        self.unit = unit
        self.unit_dir = unit_dir
        self.seed = unit.seed
        fps = recorder.frames_per_step
        self.budget_steps = unit.budget_frames // fps
        self._save_points = sorted(p for p in save_points if p > recorder.frames_done)
        self._save_fn = save_fn
        self._writer = writer
        self.progress = None

    @property
    def steps_done(self) -> int:
        return self.recorder.steps_done

    @property
    def finished(self) -> bool:
        return STOP.requested or self.steps_done >= self.budget_steps

    def maybe_checkpoint(self) -> None:
        if self.progress is not None:
            self.progress.tick(self.recorder)
        if self._save_points and self.recorder.frames_done >= self._save_points[0]:
            while self._save_points and self.recorder.frames_done >= self._save_points[0]:
                self._save_points.pop(0)
            self._save_fn()

    def log_scalar(self, tag: str, value: float) -> None:
        if self._writer is not None:
            self._writer.add_scalar(tag, value, self.recorder.frames_done)

    def actor_env_factory(self) -> "ActorEnvFactory":
        return ActorEnvFactory(str(self.run_dir), self.unit.unit_id, list(self.unit.tasks))

    def record_external(self, episode_ends: list, frames: int) -> None:
        self.recorder.frames_done += frames
        if episode_ends:
            self.recorder._record(episode_ends)


@dataclass
class ActorEnvFactory:
    """Builds a unit's environment in another process (see ``TrainingContext.actor_env_factory``)."""

    run_dir: str
    unit_id: str
    tasks: list[str]

    def __call__(self, num_envs: int, seed: int):
        from benchgen.recorder import EpisodeCollector
        from benchgen.registry import get_registry

        r = resolve_from_meta(get_registry(), load_meta(Path(self.run_dir)))
        suite_env = r.suite.make_env(_env_tasks(self.tasks, num_envs), seed=seed, mode="train")
        collector = EpisodeCollector(suite_env)
        return r.suite.agent_wrappers(collector, r.spec.name), collector


def _env_tasks(tasks: list[str], num_envs: int) -> list[str]:
    """One task per sub-environment: a joint unit cycles its tasks (each at least once)."""
    if len(set(tasks)) > 1:
        return [tasks[i % len(tasks)] for i in range(max(num_envs, len(tasks)))]
    return tasks[:1] * num_envs


def _save_points(r: ResolvedRun, unit: Unit) -> list[int]:
    """Frame counts at which the unit saves a resumable checkpoint."""
    if not unit.learn:
        # An evaluation unit's agent never changes: its final save is enough (a resumed one
        # restarts from its init checkpoint), not a copy of the model every budget / 20.
        return []
    fps = r.suite.frames_per_step
    total = unit.budget_frames
    every = to_frames(r.suite, r.run.checkpoint_every) if r.run.checkpoint_every else max(fps, total // 20)
    points = set(range(every, total, every)) | _reporting_frames(r, unit)
    return sorted(p for p in points if 0 < p < total)


def _reporting_frames(r: ResolvedRun, unit: Unit) -> set[int]:
    """The unit's reporting checkpoints in frames (their agent checkpoints are kept)."""
    if unit.phase not in ("train", "finetune", "joint"):
        return set()
    scale = unit.budget_frames / to_frames(r.suite, r.budget)
    return {int(to_frames(r.suite, c) * scale) for c in r.checkpoints}


class _Saver:
    """Writes the unit's checkpoints; keeps, for each reporting checkpoint, the first agent
    checkpoint written at or past it (save points are crossed at the first vector step past them)."""

    def __init__(self, agent, r, store, unit, unit_dir: Path, recorder):
        self.args = (agent, r, store, unit, unit_dir)
        self.recorder = recorder
        self.pending = sorted(_reporting_frames(r, unit))
        ckpt_dir = unit_dir / "checkpoints"
        existing = sorted(int(p.name) for p in ckpt_dir.glob("*") if p.name.isdigit()) if ckpt_dir.is_dir() else []
        self.kept: set[int] = set()
        for point in list(self.pending):  # a resumed unit keeps what it kept before
            at_or_past = [f for f in existing if f >= point]
            if at_or_past and at_or_past[0] <= recorder.frames_done:
                self.kept.add(at_or_past[0])
                self.pending.remove(point)

    def __call__(self) -> Path:
        frames = self.recorder.frames_done
        if any(p <= frames for p in self.pending):
            self.pending = [p for p in self.pending if p > frames]
            self.kept.add(frames)
        return write_checkpoint(*self.args, frames, keep_frames=frozenset(self.kept))


def build_agent(r: ResolvedRun, env) -> Agent:
    """``factory(config, observation_space, action_space)``, plus ``suite=`` for factories that
    accept it (agents such as JERK that need ``Suite.action_semantics()``)."""
    import inspect

    try:
        params = inspect.signature(r.spec.factory).parameters
    except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
        params = {}
    kwargs = {"suite": r.suite} if "suite" in params else {}
    return r.spec.factory(r.agent_config, env.single_observation_space, env.single_action_space, **kwargs)


def write_checkpoint(agent: Agent, r: ResolvedRun, store: ResultsStore, unit: Unit, unit_dir: Path, frames: int,
                     keep_frames: frozenset[int] = frozenset()) -> Path:
    """Save the agent and the configs next to it; record it in the store last (atomic enough:
    a checkpoint directory without its store row is ignored on resume)."""
    path = unit_dir / "checkpoints" / f"{frames:012d}"
    tmp = path.with_name(path.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    agent.save(tmp)
    info = {
        "unit": unit.unit_id, "phase": unit.phase, "tasks": unit.tasks, "seed": unit.seed, "frames": frames,
        "suite": r.suite.name, "agent": r.spec.name, "agent_config": to_dict(r.agent_config),
        "run": to_dict(r.run), "protocol": r.suite.protocol(), "init_checkpoint": unit.init_checkpoint,
    }
    (tmp / CHECKPOINT_FILE).write_text(json.dumps(info, indent=2, default=str))
    if path.exists():
        shutil.rmtree(path)
    tmp.rename(path)
    store.record_checkpoint(unit.unit_id, frames, str(path))
    # Retention: the newest checkpoint (to resume) and those at reporting checkpoints (to study);
    # intermediate ones are deleted once a newer one is safely on disk and in the store.
    for old in (unit_dir / "checkpoints").iterdir():
        if old != path and old.name.isdigit() and int(old.name) not in keep_frames:
            shutil.rmtree(old, ignore_errors=True)
    return path


class StopRequested(Exception):
    """Raised after a SIGINT/SIGTERM once the unit's state was saved."""


def execute_unit(run_dir: Path, r: ResolvedRun, unit_id: str, progress=None, store=None) -> Unit:
    """Run (or continue) one unit to its budget. Returns the unit as stored afterwards.

    ``store`` is the run's :class:`ResultsStore` by default; a remote worker passes an object
    with the same methods that streams its writes to the driver (see ``benchgen.distributed``).
    """
    own_store = store is None
    store = store if store is not None else ResultsStore(run_dir)
    try:
        unit = store.unit(unit_id)
        if unit.status == "done":
            return unit
        unit_dir = run_dir / "units" / unit.unit_id
        unit_dir.mkdir(parents=True, exist_ok=True)
        store.update_unit(unit.unit_id, status="running", started_at=time.time())
        num_envs = r.run.num_envs or r.spec.default_num_envs or r.suite.default_num_envs
        tasks = _env_tasks(unit.tasks, num_envs)
        # A different seed per resume keeps fresh environments from replaying the same episodes.
        env_seed = unit.seed * 1_000_003 + unit.frames_done
        suite_env = r.suite.make_env(tasks, seed=env_seed, mode="train" if unit.learn else "eval")
        task_done = _TaskProgress(progress, unit)
        recorder = EpisodeRecorder(suite_env, store, unit, frames_done=unit.frames_done, on_episodes=task_done)
        env = r.suite.agent_wrappers(recorder, r.spec.name)
        agent = build_agent(r, env)
        if unit.last_checkpoint and Path(unit.last_checkpoint).is_dir():
            agent.load(Path(unit.last_checkpoint))
        elif unit.init_checkpoint:
            agent.load(Path(unit.init_checkpoint))
        writer = _tensorboard(run_dir, unit)
        saver = _Saver(agent, r, store, unit, unit_dir, recorder)
        ctx = UnitContext(recorder, unit, unit_dir, _save_points(r, unit), saver, writer, run_dir=run_dir)
        task_done.bind(recorder, ctx)
        ctx.progress = progress
        if progress is not None:
            progress.tick(recorder, force=True)
        try:
            if unit.learn:
                agent.learn(env, ctx)
            else:
                evaluate(agent, env, recorder, ctx, r.run.zeroshot_episodes)
        finally:
            env.close()
            if writer is not None:
                writer.close()
        saver()
        if STOP.requested:
            store.update_unit(unit.unit_id, status="running")
            raise StopRequested(unit.unit_id)
        store.update_unit(unit.unit_id, status="done", finished_at=time.time())
        return store.unit(unit.unit_id)
    finally:
        if own_store:
            store.close()


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
                    self.ctx.log_scalar(f"episode/score/{rec['task']}", rec["score"])
        if self.progress is not None and self.recorder is not None:
            self.progress.tick(self.recorder, force=True)


def _tensorboard(run_dir: Path, unit: Unit):
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:  # pragma: no cover - torch and tensorboard are dependencies
        return None
    return SummaryWriter(log_dir=str(run_dir / "tb" / unit.unit_id))


class _StopFlag:
    """Set by SIGINT/SIGTERM: the running unit saves a checkpoint and the run exits resumable."""

    requested = False


STOP = _StopFlag()


def install_stop_handler() -> None:
    """Turn SIGINT/SIGTERM into a clean stop (call once, early, in the main thread)."""

    def handler(signum, frame):
        STOP.requested = True

    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, handler)
    except ValueError:  # not the main thread (Ray workers, threads): no handler
        pass
