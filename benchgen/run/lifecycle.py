"""A run's life in one place: plan it, start it, resume it, sweep it, re-evaluate it, execute and
finish it.

Every caller starts and resumes runs through this module: the ``run``, ``resume`` and
``evaluate`` commands, :class:`benchgen.api.Recording` (a loop outside benchgen) and the
conformance kits. So every run passes the same checks in the same order:

1. :func:`plan`: the settings resolved and checked against the suite and the agent (nothing is
   built or written; ``--plan`` prints :func:`describe` of it);
2. :func:`start`: the preflight (the executor reachable, the agent built once for the suite's
   spaces, a ``--from`` checkpoint loaded) before anything is written, then the run directory;
3. :func:`resume`: the run's record read back, its settings checked again, the drift check
   (protocol, suite and software versions against what the run recorded; ``--force`` records
   the difference), the preflight;
4. :func:`execute`: the unfinished units run under the run directory's lock, a stop (SIGINT,
   SIGTERM) ending in exit 130 with every finished episode kept, then the report.

:func:`sweep` and :func:`evaluate` are runs too: one run per value of a parameter in one folder,
and a run that re-evaluates another's trained agents; :func:`open_recording` is the run of a
training loop outside benchgen. Messages for the user go to stderr
(the plan, the run directory) and stdout (the report's summary), as the commands print them.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchgen.config import RunConfig
from benchgen.errors import UsageError
from benchgen.registry import Registry
from benchgen.results.record import RunRecord, part_trained
from benchgen.results.rundir import RunDir
from benchgen.run.planning.plan import ResolvedRun, create_run, describe_plan, plan_units, resolve
from benchgen.suite import Suite


def plan(
    registry: Registry,
    run: RunConfig,
    agent_overrides: Mapping[str, Any],
    protocol_overrides: Mapping[str, Any] | None = None,
    sources: Mapping[str, str] | None = None,
) -> ResolvedRun:
    """The run ``run`` with the agent's settings ``agent_overrides`` resolved and checked
    (``sources``: where each override came from, shown in the plan and kept in ``run.json``)."""
    return resolve(registry, run, dict(agent_overrides), protocol_overrides, sources)


def describe(resolved: ResolvedRun) -> str:
    """The plan of a resolved run as the user reads it: units, budget, settings, wall time."""
    return describe_plan(resolved, plan_units(resolved))


def default_out(run: RunConfig, kind: str = "") -> Path:
    """``runs/SUITE-AGENT[-KIND]-TIMESTAMP``: where a run goes without ``--out``."""
    return Path("runs") / f"{run.suite}-{run.agent}{'-' + kind if kind else ''}-{time.strftime('%Y%m%d-%H%M%S')}"


def start(registry: Registry, resolved: ResolvedRun, out: Path | None = None, *, report: bool = True) -> int:
    """Start a planned run in ``out`` (default :func:`default_out`) and execute it: the exit code
    (0, or 130 when stopped). Nothing is written when the preflight fails or a stop came first."""
    from benchgen.run.execution.execute import preflight
    from benchgen.run.execution.signals import STOP

    preflight(resolved, resolved.run.from_checkpoint)
    out = out or default_out(resolved.run)
    if STOP.requested:
        print("benchgen: interrupted before the run started; nothing was written", file=sys.stderr)
        return 130
    run_dir = create_run(registry, resolved, out)
    print(describe(resolved), file=sys.stderr)
    print(f"run directory: {run_dir}", file=sys.stderr)
    return execute(run_dir, resolved, report=report)


def sweep(
    registry: Registry,
    run: RunConfig,
    agent_overrides: Mapping[str, Any],
    sources: Mapping[str, str],
    vary: list[str],
    out: Path | None = None,
    plan_only: bool = False,
) -> int:
    """One run per value of ``vary`` (``["PARAM=V1,V2"]``: an agent setting, else a protocol
    parameter), side by side in one folder, then the sweep's report; ``plan_only``: print each
    condition's plan and stop."""
    from benchgen.run.execution.execute import preflight
    from benchgen.run.planning import studies

    if len(vary) > 1:  # argparse would keep the last one silently
        raise UsageError(f"--vary given {len(vary)} times; a sweep varies one parameter: give one --vary PARAM=V1,V2")
    param, values = studies.parse_vary(vary[0])
    # an agent setting (e.g. Const's action) or else a protocol parameter
    if studies.is_agent_setting(registry.agent(run.agent), param):
        varied = {**sources, param: "--vary"}
        conditions = [
            (studies.condition_label(param, v), plan(registry, run, {**agent_overrides, param: v}, sources=varied))
            for v in values
        ]
    else:
        conditions = [
            (studies.condition_label(param, v), plan(registry, run, agent_overrides, {param: v}, sources))
            for v in values
        ]
    if plan_only:
        for label, resolved in conditions:
            print(f"condition {label}:\n{describe(resolved)}")
        return 0
    for _, resolved in conditions:  # each condition's agent is built once before anything is written
        preflight(resolved, resolved.run.from_checkpoint)
    out = out or default_out(run, "sweep")
    studies.check_sweep_out(out)
    run_dirs = [create_run(registry, resolved, out / label) for label, resolved in conditions]
    studies.write_sweep_file(out, run.suite, run.agent, param, values, [label for label, _ in conditions])
    print(f"sweep of {param} over {', '.join(map(str, values))}: {out}", file=sys.stderr)
    for run_dir, (_, resolved) in zip(run_dirs, conditions):
        print(describe(resolved), file=sys.stderr)
        code = execute(run_dir, resolved)
        if code:
            return code
    return _sweep_report(out, registry)


def _sweep_report(out: Path, registry: Registry) -> int:
    """Write the sweep's side-by-side table once its conditions are done; print it."""
    from benchgen.run.planning import studies

    print(studies.write_sweep_report(out, registry))
    print(f"sweep report: {out / 'sweep.md'}")
    return 0


def evaluate(
    registry: Registry,
    source: Path,
    protocol: str | None = None,
    episodes: int | None = None,
    num_envs: int | None = None,
    out: Path | None = None,
    progress: bool = True,
    progress_every: float | None = None,
) -> int:
    """Re-evaluate the trained agents of the run ``source`` (their last checkpoints) under
    ``protocol`` (default: the run's own) in a new run directory ``out`` (default
    ``SOURCE-eval[-PROTOCOL]``); execute it. ``source`` is held against ``run``/``resume`` while
    its checkpoints are read (a run in training is refused: its retention deletes checkpoints)."""
    src = RunDir(source)
    if not src.is_run():
        raise UsageError(f"{source} is not a benchgen run directory (it needs run.json and results.sqlite)")
    with src.reading(then="evaluate it"):
        return _evaluate(registry, source, protocol, episodes, num_envs, out, progress, progress_every)


def _evaluate(registry, source, protocol, episodes, num_envs, out, progress, progress_every) -> int:
    from benchgen.run.execution.execute import preflight
    from benchgen.run.planning import studies
    from benchgen.run.planning.plan import run_metadata

    resolved, units, extra = studies.plan_reevaluation(registry, source, protocol, episodes)
    if num_envs is not None and num_envs <= 0:
        raise UsageError("--num-envs must be positive")
    resolved = _with_run(resolved, progress, progress_every, num_envs=num_envs)
    preflight(resolved, units[0].init_checkpoint)  # a damaged checkpoint is refused now
    given = resolved.run.protocol  # --protocol, else the run's own (None: a suite's only protocol)
    name = (Path(given).stem if given.endswith((".yaml", ".yml")) else given) if given else ""
    absolute = Path(os.path.abspath(source))  # (`.` and `runs/base/..` have a name too)
    out = out or absolute.with_name(f"{absolute.name}-eval" + (f"-{name}" if name else ""))
    run_dir = RunDir.create(out, dataclasses.replace(run_metadata(registry, resolved), **extra), units)
    schedule = extra["reevaluation"]["schedule"]
    quota = f"{schedule['episodes']:,} episodes" if schedule["episodes"] else f"{schedule['frames']:,} frames"
    print(
        f"re-evaluating {len(units)} agent{'s' * (len(units) != 1)} trained under "
        f"{extra['reevaluation']['source_protocol_label']}, under {given or 'its protocol'}: {quota} per task, "
        f"epsilon {schedule['epsilon']}\nrun directory: {run_dir}",
        file=sys.stderr,
    )
    part_way = part_trained(extra["reevaluation"])
    if part_way:  # a partly trained agent is scored, and said so (its report says it too)
        print(f"not fully trained: {part_way}", file=sys.stderr)
    try:
        return execute(run_dir, resolved)
    except Exception:  # (a stopped evaluation returns 130 and resumes)
        _discard_if_empty(run_dir)
        raise


def _discard_if_empty(run_dir: RunDir) -> None:
    """Remove a run this module created that failed before recording anything: no half-made run
    is left behind (one with episodes or checkpoints is kept, to resume)."""
    if not run_dir.is_run():
        return
    try:
        store = run_dir.store(readonly=True)
        try:
            empty = store.count_episodes() == 0 and not store.checkpoints()
        finally:
            store.close()
    except Exception:  # a store that cannot be read is left as it is
        return
    if empty:
        shutil.rmtree(run_dir.path, ignore_errors=True)


def resume(
    registry: Registry,
    path: Path,
    *,
    force: bool = False,
    progress: bool = True,
    progress_every: float | None = None,
    report: bool = True,
    settings: dict[str, Any] | None = None,
) -> int:
    """Continue the run (or every run of the sweep) in ``path`` from its last checkpoints, after
    the drift check (``force``: continue past a drift, recorded in ``run.json``); ``settings``
    (``--set``) change how the agent runs from here on (see :func:`_with_settings`)."""
    from benchgen.run.planning import studies
    from benchgen.run.planning.plan import resolve_from_meta

    if not studies.is_sweep(path):
        return _resume_run(registry, RunDir(path), force, progress, progress_every, report, settings or {})
    labels = studies.read_sweep(path)["runs"]
    for label in labels if settings else ():  # every run's settings checked before any run changes
        _with_settings(resolve_from_meta(registry, RunDir(path / label).record()), path / label, settings)
    for label in labels:
        code = _resume_run(registry, RunDir(path / label), force, progress, progress_every, report, settings or {})
        if code:
            return code
    return _sweep_report(path, registry)


def _resume_run(
    registry: Registry,
    run_dir: RunDir,
    force: bool,
    progress: bool,
    progress_every: float | None,
    report: bool,
    settings: dict[str, Any],
) -> int:
    from benchgen.run.execution.execute import preflight
    from benchgen.run.planning.plan import drift, resolve_from_meta, validate_run_config

    record = run_dir.record()
    if record.external_loop:
        raise UsageError(
            f"{run_dir.path} was recorded by a training loop outside benchgen (benchgen.api.Recording); "
            "run that script again to continue it"
        )
    resolved, changes = _with_settings(resolve_from_meta(registry, record), run_dir.path, settings)
    resolved = _with_run(resolved, resolved.run.progress and progress, progress_every)
    validate_run_config(resolved.run, resolved.suite)
    changed = drift(record, resolved)
    if changed and not force:
        shown = ", ".join(f"{k} ({v[0]} -> {v[1]})" for k, v in list(changed.items())[:4])
        more = f" and {len(changed) - 4} more" if len(changed) > 4 else ""
        raise UsageError(
            f"{run_dir} was recorded under another protocol or software: {shown}{more}; continuing "
            "would mix them in one run. Reinstall what it recorded, or pass --force (the change is "
            "recorded in run.json)"
        )
    preflight(resolved, resolved.run.from_checkpoint)
    if changed:
        run_dir.record_forced_resume({k: {"recorded": v[0], "installed": v[1]} for k, v in changed.items()})
    run_dir.record_machine()
    added = _settings_added_since(record, resolved)
    for name in changes.keys() & added.keys():  # set on resume, never recorded before
        changes[name]["recorded"] = added.pop(name)["recorded"]
    if changes:  # into run.json, from which the units' processes rebuild the run
        run_dir.record_settings_change(changes)
    if added:
        run_dir.record_settings_change(added, ADDED_SETTING_SOURCE)
    return execute(run_dir, resolved, report=report)


#: the source of a setting benchgen added after a run started, given its default on resume
ADDED_SETTING_SOURCE = "agent default (a setting added since the run started)"


def _settings_added_since(record: RunRecord, resolved: ResolvedRun) -> dict[str, dict[str, Any]]:
    """The agent's settings ``record`` lacks (added to the agent after the run started, which
    resumes them at their defaults), each as {"recorded": None, "now": value}: recorded so that
    run.json and the report say from when the run ran with them."""
    if not dataclasses.is_dataclass(resolved.agent_config):
        return {}
    return {
        f.name: {"recorded": None, "now": getattr(resolved.agent_config, f.name)}
        for f in dataclasses.fields(resolved.agent_config)
        if f.init and f.name not in record.agent_config
    }


def _with_settings(
    resolved: ResolvedRun, where: Path, settings: dict[str, Any]
) -> tuple[ResolvedRun, dict[str, dict[str, Any]]]:
    """``resume --set``: ``resolved`` with ``settings`` of how its agent runs (its config's
    ``execution_setting`` fields: device, threads, logging) in its agent config and each task's,
    checked and coerced as ``run --set`` does; and the settings that changed, each as
    {"recorded": ..., "now": ...}. A run resumed on another machine may need another device or
    thread count; a setting of what the agent learns would make the run two experiments, so it is
    refused."""
    from benchgen.config import execution_settings, replace_config

    if not settings:
        return resolved, {}
    spec = resolved.spec
    allowed = execution_settings(spec.config_class)
    values = {key.removeprefix("agent."): value for key, value in settings.items()}
    refused = sorted(set(values) - allowed)
    if refused:
        may = f"only how {spec.name} runs ({', '.join(sorted(allowed))})" if allowed else f"nothing of {spec.name}"
        raise UsageError(
            f"resume --set may change {may}; {where} keeps the {', '.join(refused)} it started with "
            "(a change part-way would make it two experiments): start a new run for another value"
        )
    current = resolved.agent_config
    agent_config = replace_config(current, values, "resume --set")
    changes = {
        key: {"recorded": getattr(current, key), "now": getattr(agent_config, key)}
        for key in values
        if getattr(agent_config, key) != getattr(current, key)
    }
    now = {key: change["now"] for key, change in changes.items()}
    task_configs = {task: replace_config(config, now, "resume --set") for task, config in resolved.task_configs.items()}
    return dataclasses.replace(resolved, agent_config=agent_config, task_configs=task_configs), changes


def _with_run(resolved: ResolvedRun, progress: bool, progress_every: float | None, **given: Any) -> ResolvedRun:
    """``resolved`` with the run settings a command gives on top of a recorded run: the
    progress display, and each of ``given`` that is not None."""
    changes = {k: v for k, v in {"progress_every": progress_every, **given}.items() if v is not None}
    return dataclasses.replace(resolved, run=dataclasses.replace(resolved.run, progress=progress, **changes))


def execute(run_dir: RunDir, resolved: ResolvedRun, *, report: bool = True) -> int:
    """Run the unfinished units of ``run_dir`` under its lock, then finish: the store's log folded
    in, the report written and its summary printed (``report=False``: no report). 130 when a
    SIGINT or SIGTERM stopped it (every finished episode kept, resumable), else 0."""
    from benchgen.results.report import write_report
    from benchgen.run.execution.execute import run_units
    from benchgen.run.execution.progress import RunProgress
    from benchgen.run.execution.signals import StopRequested, install_stop_handler

    install_stop_handler()
    with run_dir.lock():
        try:
            with RunProgress(enabled=resolved.run.progress, every=resolved.run.progress_every) as progress:
                run_units(run_dir, resolved, progress)
        except StopRequested:
            print(
                f"benchgen: interrupted; every finished episode is saved. Continue with `benchgen resume {run_dir}`",
                file=sys.stderr,
            )
            return 130
        finally:
            if run_dir.is_run():  # (a run directory removed mid-run has nothing left to fold)
                store = run_dir.store()
                try:
                    store.checkpoint_wal()
                finally:
                    store.close()
    if not report:
        return 0
    print(write_report(run_dir.path))
    store = run_dir.store(readonly=True)
    try:
        retries = sum(u.retries for u in store.units())
    finally:
        store.close()
    if retries:
        print(
            f"{retries} unit retr{'y' if retries == 1 else 'ies'} after worker failures (no episode lost or duplicated)"
        )
    return 0


# -- a training loop outside benchgen (benchgen.api.Recording) ------------------------------------
@dataclasses.dataclass
class _OwnLoopConfig:
    """The settings of a training loop outside benchgen, as its author passed them."""


def _refuse(config, environment):
    raise UsageError("this agent is a training loop outside benchgen: run your own script, not `benchgen run`")


def _config_changes(recorded: dict[str, Any], given: dict[str, Any]) -> str:
    """What differs between two configs, in a few words (``lr: 0.001 -> 0.01``)."""
    keys = sorted(set(recorded) | set(given), key=str)
    changes = [
        f"{k}: {recorded.get(k, '(none)')} -> {given.get(k, '(none)')}" for k in keys if recorded.get(k) != given.get(k)
    ]
    return ", ".join(changes[:3]) + (", ..." if len(changes) > 3 else "")


def open_recording(
    registry: Registry,
    out: str | Path,
    suite: Suite,
    choice: dict | None,
    *,
    task: str,
    agent: str,
    seed: int,
    budget: int | None,
    protocol: str | None,
    num_envs: int,
    config: Mapping[str, Any] | None,
) -> RunDir:
    """The run directory ``out`` of one (task, seed) of a loop outside benchgen: created (one
    training unit, ``external_loop`` in its record), or continued when it holds this same
    recording (its budget kept); another run there is refused in one line."""
    from benchgen.agent import AgentSpec
    from benchgen.phases import TRAIN
    from benchgen.results.store import Unit
    from benchgen.run.planning.plan import run_metadata

    run_dir = RunDir(out)
    if run_dir.is_run():
        record = run_dir.record()
        wanted = {"suite": suite.name, "tasks": [task], "agent": agent, "protocol_choice": choice}
        recorded = {k: getattr(record, k) for k in wanted}
        if not record.external_loop or recorded != wanted or record.seeds != [seed]:
            raise UsageError(
                f"{out} holds another run ({record.agent} on {record.suite} {record.tasks}); pick another directory"
            )
        if dict(config or {}) != record.agent_config:  # as resume refuses a changed config
            raise UsageError(
                f"{out} was recorded with another config ({_config_changes(record.agent_config, dict(config or {}))}); "
                "continue it with the same config, or record into another directory"
            )
        if budget is not None and budget != record.budget:  # a continued run keeps its budget
            raise UsageError(
                f"{out} is a run with a budget of {record.budget:,} {record.budget_unit}, not "
                f"{budget:,}; continue it with budget={record.budget} (or None), or record into another directory"
            )
        return run_dir
    budget = suite.default_budget if budget is None else budget
    run = RunConfig(
        suite=suite.name, agent=agent, tasks=[task], seeds=[seed], budget=budget, protocol=protocol, num_envs=num_envs
    )
    spec = AgentSpec(agent, _OwnLoopConfig, _refuse, description="a training loop outside benchgen")
    resolved = ResolvedRun.planned(run, _OwnLoopConfig(), suite, spec, None, [task], choice)
    meta = dataclasses.replace(run_metadata(registry, resolved), external_loop=True, agent_config=dict(config or {}))
    unit = Unit(f"{TRAIN}-{task}-s{seed}", 0, TRAIN, [task], seed, resolved.budget_frames)
    return RunDir.create(out, meta, [unit])
