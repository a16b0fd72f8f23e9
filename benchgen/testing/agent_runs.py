"""Running an agent on the kit suites as a user does, and what such a run left behind.

:class:`KitRunner` runs an agent through :mod:`benchgen.run.lifecycle`, as ``benchgen run`` and
``benchgen resume`` do (the plan, the preflight, the run directory, the executor, the drift check
on resume; not the report), in this process but as in a fresh one (:func:`instrumented`). A :class:`KitRun` holds what the run directory
recorded and what the kit suites' environments logged (:class:`EnvLog`), for the checks of
:mod:`benchgen.testing.agent_checks` to compare.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from benchgen.registry import Registry
from benchgen.results.store import Unit
from benchgen.testing import agent_suites
from benchgen.testing.agent_suites import KIT_SPLIT, LOG_ENV, STOP_ENV, reset_stop_request
from benchgen.testing.kit import CORE_EPISODE_COLUMNS, build_registry, use_registry

#: the store's columns that describe an episode (not when or where it was written): the core's
#: own episode columns less the row id
EPISODE_COLUMNS = tuple(sorted(CORE_EPISODE_COLUMNS - {"id"}))


# -- what a run left behind --------------------------------------------------------------------
@dataclass
class EnvLog:
    """What one environment of a kit suite did, from its own log."""

    env_id: str
    """The environment's id (its process and serial number)."""
    tasks: list[str]
    """The task of each sub-environment."""
    mode: str
    """``"train"`` or ``"eval"``, as ``make_env`` was asked."""
    seed: int
    """The seed ``make_env`` was given."""
    frames: int = 0
    """Emulator frames stepped, all sub-environments together."""
    actions: list[list[int]] = field(default_factory=list)
    """The actions of every step."""
    ends: list[tuple] = field(default_factory=list)
    """``(env_index, task, score, length_frames, end_reason)`` of every episode it ended."""
    capabilities: set[str] = field(default_factory=set)
    """The emulator capabilities (:mod:`benchgen.capabilities`) the agent used on it."""


def read_env_log(path: Path) -> list[EnvLog]:
    """The environments of a kit log file (:data:`~benchgen.testing.agent_suites.LOG_ENV`), in
    the order they were made."""
    envs: dict[str, EnvLog] = {}
    if not path.is_file():
        return []
    for line in path.read_text().splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a line cut short by a killed process
        if "make" in record:
            made = record["make"]
            envs[record["env"]] = EnvLog(record["env"], list(made["tasks"]), made["mode"], int(made["seed"]))
        elif "capability" in record and record.get("env") in envs:
            envs[record["env"]].capabilities.add(str(record["capability"]))
        elif record.get("env") in envs:
            env = envs[record["env"]]
            env.frames += int(record["frames"])
            env.actions.append(record["actions"])
            env.ends += [tuple(end) for end in record["ends"]]
    return list(envs.values())


@dataclass
class KitRun:
    """One run of the agent on a kit suite: what the run directory holds and what the suite's
    environments logged."""

    path: Path
    """The run directory."""
    units: list[Unit]
    """The run's units as stored after the run."""
    episodes: list[dict[str, Any]]
    """The recorded episodes in recording order (:data:`EPISODE_COLUMNS` only)."""
    envs: list[EnvLog]
    """Every environment made for the run, in the order they were made."""
    stopped: bool = False
    """The run ended on a stop request (exit 130 on the command line), not at its budget."""

    def stepped(self) -> list[EnvLog]:
        """The environments that took at least one step (the preflight's is built, never stepped)."""
        return [env for env in self.envs if env.frames]


def collect(path: Path, log: Path, stopped: bool, earlier: Sequence[EnvLog] = ()) -> KitRun:
    """The :class:`KitRun` of the run directory ``path`` whose environments logged to ``log``
    (after those of ``earlier`` runs of the same directory)."""
    from benchgen.results.rundir import RunDir

    store = RunDir(path).store(readonly=True)
    try:
        units = store.units()
        episodes = [{k: ep[k] for k in EPISODE_COLUMNS} for ep in store.episodes()]
    finally:
        store.close()
    return KitRun(path, units, episodes, [*earlier, *read_env_log(log)], stopped)


@contextlib.contextmanager
def instrumented(log: Path | None, stop_at_frames: int | None = None) -> Iterator[None]:
    """A run in this process as in a fresh ``benchgen`` process: the kit suites' log and stop
    request set up, SIGINT/SIGTERM turned into clean stops as ``benchgen run`` does, the global
    random generators (Python's, numpy's, torch's) seeded from the OS's entropy; everything put
    back afterwards (signal handlers, stop flag, generators, torch's thread count)."""
    from benchgen.run.execution.signals import STOP, install_stop_handler

    saved_env = {k: os.environ.get(k) for k in (LOG_ENV, STOP_ENV)}
    saved_handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    torch = sys.modules.get("torch")
    threads = torch.get_num_threads() if torch is not None else None
    saved_rngs = (random.getstate(), np.random.get_state(), torch.get_rng_state() if torch is not None else None)
    # the global generators as a fresh `benchgen` process has them: seeded from the OS's entropy
    random.seed()
    np.random.seed()
    if torch is not None:
        torch.seed()
    os.environ.pop(LOG_ENV, None)
    os.environ.pop(STOP_ENV, None)
    if log is not None:
        os.environ[LOG_ENV] = str(log)
    if stop_at_frames is not None:
        os.environ[STOP_ENV] = f"{os.getpid()}:{stop_at_frames}"
        reset_stop_request()
    STOP.requested = False
    install_stop_handler()
    try:
        yield
    finally:
        STOP.requested = False
        for sig, handler in saved_handlers.items():
            with contextlib.suppress(ValueError, TypeError):  # not the main thread
                signal.signal(sig, handler)
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        random.setstate(saved_rngs[0])
        np.random.set_state(saved_rngs[1])
        if torch is not None:
            torch.set_rng_state(saved_rngs[2])
            torch.set_num_threads(threads)


@contextlib.contextmanager
def fixed_global_rngs(seed: int) -> Iterator[None]:
    """Python's, numpy's and (if loaded) torch's global generators seeded with ``seed`` for the
    block, then put back as they were."""
    torch = sys.modules.get("torch")
    saved = (random.getstate(), np.random.get_state(), torch.get_rng_state() if torch is not None else None)
    random.seed(seed)
    np.random.seed(seed)
    if torch is not None:
        torch.manual_seed(seed)
    try:
        yield
    finally:
        random.setstate(saved[0])
        np.random.set_state(saved[1])
        if torch is not None:
            torch.set_rng_state(saved[2])


# -- running the agent -------------------------------------------------------------------------
def kit_registry(plugins: Any = None) -> Registry:
    """A registry with the agent plugin(s) under test, the first-party agents and the kit suites.
    ``plugins`` as for :func:`~benchgen.testing.kit.build_registry`; None: the installed plugins."""
    if plugins is None:
        return Registry(plugins=[(agent_suites.__name__, agent_suites)])
    listed = list(plugins) if isinstance(plugins, (list, tuple)) else [plugins]
    return build_registry([*listed, agent_suites])


@dataclass
class KitOptions:
    """How the kit runs an agent (:class:`AgentConformance
    <benchgen.testing.agent_conformance.AgentConformance>` fills it from its class attributes)."""

    settings: Mapping[str, Any] = field(default_factory=dict)
    """Settings for every run, as ``--set KEY=VALUE`` (agent settings, or run settings)."""
    suite_settings: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Per kit suite, settings over ``settings``."""
    budget_steps: int = 301
    """Each unit's budget in agent steps (transitions over all sub-environments)."""
    num_envs: int = 2
    """Sub-environments per unit."""
    seed: int = 0
    """The seed of every run (the reproducibility check also uses ``seed + 1``)."""


class KitRunner:
    """Runs one agent on the kit suites as ``benchgen run`` and ``benchgen resume`` do; keeps each
    suite's first run for the checks that read it."""

    def __init__(self, registry: Registry, agent: str, workdir: Path, options: KitOptions | None = None):
        self.registry, self.agent, self.workdir = registry, agent, Path(workdir)
        self.options = options or KitOptions()
        self.spec = registry.agent(agent)
        self._runs: dict[tuple[str, int], KitRun] = {}

    def settings(self, suite: str) -> dict[str, Any]:
        """The ``--set`` values of a run on ``suite``."""
        return {**self.options.settings, **self.options.suite_settings.get(suite, {})}

    def run_config(self, suite_name: str, seed: int):
        """The run config and agent settings of a kit run (as ``benchgen run`` builds them)."""
        from benchgen.config import RunConfig, build_dataclass, split_overrides

        suite = self.registry.suite(suite_name)
        budget = suite.from_timesteps(self.options.budget_steps)
        run_over, agent_over = split_overrides(
            self.settings(suite_name), self.spec.config_class, "the kit's settings", f"benchgen settings {self.agent}"
        )
        values: dict[str, Any] = {
            "suite": suite_name,
            "agent": self.agent,
            "seeds": [seed],
            "budget": budget,
            "num_envs": self.options.num_envs,
            "checkpoint_every": max(1, budget // 4),
            "progress": False,
        }
        if self.spec.joint:  # joint training, zero-shot units and fine-tuning, all short
            values |= {"split": KIT_SPLIT, "zeroshot_episodes": 2, "zeroshot_frames": max(1, budget // 4)}
            values |= {"finetune": True, "finetune_budget": max(1, budget // 2)}
        else:
            values["tasks"] = suite.tasks()[:1]
        return build_dataclass(RunConfig, {**values, **run_over}, "the kit's run config"), agent_over

    def run(self, suite: str, name: str, seed: int | None = None, stop_at_frames: int | None = None) -> KitRun:
        """Run the agent on ``suite`` into ``workdir/name`` as ``benchgen run`` does."""
        from benchgen.run import lifecycle

        seed = self.options.seed if seed is None else seed
        out, log = self.workdir / name, self.workdir / f"{name}.envlog"
        run, agent_over = self.run_config(suite, seed)
        with use_registry(self.registry), instrumented(log, stop_at_frames):
            resolved = lifecycle.plan(self.registry, run, agent_over)
            code = lifecycle.start(self.registry, resolved, out, report=False)
        return collect(out, log, code == 130)

    def resume(self, path: Path, earlier: Sequence[EnvLog] = ()) -> KitRun:
        """Resume the run in ``path`` as ``benchgen resume`` does (the drift check included);
        ``earlier``: the environments of its runs so far, for the result's :attr:`KitRun.envs`."""
        from benchgen.run import lifecycle

        log = path.with_name(f"{path.name}.envlog")
        with use_registry(self.registry), instrumented(log):
            code = lifecycle.resume(self.registry, path, report=False)
        return collect(path, log, code == 130, earlier)

    def first_run(self, suite: str, seed: int | None = None) -> KitRun:
        """The run of ``suite`` with ``seed`` (default: the kit's), made once."""
        seed = self.options.seed if seed is None else seed
        if (suite, seed) not in self._runs:
            self._runs[suite, seed] = self.run(suite, f"{suite}-seed{seed}", seed)
        return self._runs[suite, seed]

    def half(self, suite: str) -> int:
        """Half the budget of a unit on ``suite``, in frames: where the kit stops a run."""
        kit_suite = self.registry.suite(suite)
        return kit_suite.to_frames(kit_suite.from_timesteps(self.options.budget_steps)) // 2
