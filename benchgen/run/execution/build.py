"""Building a unit's parts: its environment (one task per sub-environment, or joint
environments; in this process or, through :class:`UnitEnvFactory`, in another), its agent, and
the checkpoints loaded into that agent (a resume's, a fine-tuning start's, a re-evaluated one's).
"""

from __future__ import annotations

import pickle
import zipfile
from pathlib import Path

from benchgen.agent import Agent
from benchgen.capabilities import emulators_of
from benchgen.errors import UsageError
from benchgen.remote import CollectorKey, RemoteEnvFactory
from benchgen.results.rundir import RunDir
from benchgen.results.store import Unit
from benchgen.run.planning.plan import resolve_from_meta
from benchgen.run.planning.resolved import ResolvedRun


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


def restore(agent: Agent, run_dir: RunDir, unit: Unit) -> None:
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


#: the hint of a unit's own checkpoint that cannot be loaded
COPY_HINT = "restore it from a copy of the run"

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
