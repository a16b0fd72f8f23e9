"""Planning a run: validate the user's input once, resolve it, and divide it into units.

Every number and name of a run is checked here, before anything is written (``benchgen run``
and ``benchgen resume`` alike): the CLI parses, the executors execute, neither validates.
A unit is one (phase, tasks, seed) piece of work with its budget in emulator frames.
"""

from __future__ import annotations

import dataclasses
import json
import platform
import sys
import time
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from benchgen import protocols
from benchgen.agent import AgentSpec
from benchgen.config import RunConfig, build_dataclass, to_dict
from benchgen.errors import UsageError
from benchgen.machine import machine_facts
from benchgen.phases import (
    FINE_TUNING,
    FINETUNE,
    JOINT,
    NOT_LEARNING,
    TRAIN,
    TRANSFER_FINETUNE,
    TRANSFER_ZEROSHOT,
    ZEROSHOT,
)
from benchgen.registry import Registry
from benchgen.results.record import RunRecord
from benchgen.results.rundir import CHECKPOINT_FILE, RunDir
from benchgen.results.store import Unit
from benchgen.run.planning.agent_settings import describe_sources, resolve_agent_settings
from benchgen.run.planning.budget import describe_vector_steps, planned_frames, vector_width
from benchgen.run.planning.cost import describe_cost
from benchgen.run.planning.resolved import ResolvedRun
from benchgen.suite import Split, Suite

#: distributions whose versions every run records; a run adds those its suite and its agent
#: declare (``Suite.software``, ``AgentSpec.software``)
CORE_SOFTWARE = ("benchgen", "gymnasium", "numpy", "pluggy")
#: values of ``RunConfig.task_sampling`` (see :mod:`benchgen.joint_env`)
TASK_SAMPLINGS = ("fixed", "episode")
#: the largest seed numpy's and torch's generators accept
MAX_SEED = 2**32 - 1
#: a budget beyond this (10^15 frames, years of emulation) is a typo, and would overflow SQLite
MAX_FRAMES = 10**15


def validate_run_config(run: RunConfig, suite: Suite) -> None:
    """Every check of a run config's numbers and choices, in one place (one-line errors)."""
    unit = suite.budget_unit
    repeated = sorted({t for t in run.tasks if run.tasks.count(t) > 1})
    if repeated:
        raise UsageError(f"--tasks lists {', '.join(repeated)} twice; give each task once")
    if not run.seeds:
        raise UsageError("--seeds needs at least one seed")
    if len(set(run.seeds)) != len(run.seeds):
        raise UsageError("--seeds lists a seed twice; give each seed once")
    if any(s < 0 or s > MAX_SEED for s in run.seeds):
        raise UsageError(f"seeds must lie in [0, {MAX_SEED}]")
    if run.budget is not None and run.budget <= 0:
        raise UsageError(f"the budget must be a positive number of {unit}, got {run.budget}")
    for name in ("budget", "finetune_budget", "zeroshot_frames", "checkpoint_every"):
        value = getattr(run, name)
        if value is not None and suite.to_frames(value) > MAX_FRAMES:
            raise UsageError(f"{name} {value:,} {unit} is more than {MAX_FRAMES:.0e} frames; check the number")
    for name in ("checkpoint_every", "num_envs", "finetune_budget"):
        value = getattr(run, name)
        if value is not None and value <= 0:
            raise UsageError(f"{name} must be positive")
    if run.zeroshot_frames is not None and run.zeroshot_frames <= 0:
        raise UsageError(f"zeroshot_frames must be a positive number of {unit}")
    if run.zeroshot_episodes <= 0:
        raise UsageError("zeroshot_episodes must be positive")
    if run.executor not in ("local", "ray"):
        raise UsageError(f"executor must be 'local' or 'ray', not '{run.executor}'")
    if run.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if run.max_retries < 0:
        raise UsageError("max_retries must be 0 or more")
    if run.cpus_per_unit <= 0 or run.gpus_per_unit < 0:
        raise UsageError("cpus_per_unit must be positive and gpus_per_unit 0 or more")


def agent_suite(registry: Registry, spec: AgentSpec, suite_name: str, choice: dict[str, Any] | None) -> Suite:
    """The suite whose envs an agent plays, for training and for every evaluation alike: suite
    ``suite_name`` under the protocol ``choice`` (``protocols.parse_choice``; None: its default),
    checked for the agent (``AgentSpec.check``: one line if the agent cannot run on it) and
    offering the emulator capabilities the agent declares (``AgentSpec.suite_for``). Every
    resolved run gets its suite here, so no path builds an agent's envs without them."""
    return spec.suite_for(protocols.apply_choice(registry.suite(suite_name), choice))


def resolve(
    registry: Registry,
    run: RunConfig,
    agent_overrides: dict[str, Any],
    protocol_changes: dict[str, Any] | None = None,
    override_sources: dict[str, str] | None = None,
) -> ResolvedRun:
    """Validate names and numbers and fill protocol defaults. Raises UsageError on bad input.
    ``protocol_changes``: parameters changed on top of ``run.protocol`` (one condition of a sweep);
    ``override_sources``: which of ``--config``/``--set`` gave each of ``agent_overrides``."""
    choice = protocols.parse_choice(run.protocol)
    if protocol_changes:
        default = registry.suite(run.suite)
        if not default.protocol_presets():
            raise UsageError(f"suite '{default.name}' has a single protocol; it has no protocol parameter to vary")
        choice = choice or {"preset": default.default_protocol, "changes": {}}
        choice = {"preset": choice["preset"], "changes": {**choice["changes"], **protocol_changes}}
    spec = registry.agent(run.agent)
    suite = agent_suite(registry, spec, run.suite, choice)
    validate_run_config(run, suite)
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
    settings = resolve_agent_settings(spec, suite, tasks, agent_overrides, override_sources)
    resolved = ResolvedRun.planned(
        run,
        settings.config,
        suite,
        spec,
        split,
        tasks,
        choice,
        task_budgets=settings.budgets,
        config_sources=settings.sources,
        task_configs=settings.task_configs,
        task_sources=settings.task_sources,
        task_num_envs=settings.num_envs,
    )
    _check_transfer(run, spec, resolved.budget, suite.budget_unit)
    if run.from_checkpoint and not spec.joint:
        raise UsageError(f"--from is for joint agents; '{spec.name}' is not one")
    if run.from_checkpoint and not (Path(run.from_checkpoint) / CHECKPOINT_FILE).is_file():
        raise UsageError(f"--from {run.from_checkpoint}: no benchgen checkpoint there (no {CHECKPOINT_FILE})")
    sampling = run.task_sampling or spec.task_sampling
    if sampling not in TASK_SAMPLINGS:
        raise UsageError(f"task_sampling must be one of {', '.join(TASK_SAMPLINGS)}, not '{sampling}'")
    run = dataclasses.replace(run, task_sampling=sampling)  # resolved: saved in run.json
    if spec.check_config is not None:  # settings this run cannot use: one line, nothing written
        for config in (settings.config, *settings.task_configs.values()):
            spec.check_config(config, run)
    return dataclasses.replace(resolved, run=run)


def transfer_unit_id(phase: str, point_frames: int, task: str, seed: int) -> str:
    """The id of a transfer unit: its phase, the joint frame count it starts from, task, seed."""
    return f"{phase}-f{point_frames}-{task}-s{seed}"


def transfer_point(unit_id: str) -> int:
    """The joint frame count a transfer unit starts from (from :func:`transfer_unit_id`)."""
    return int(unit_id.split("-", 2)[1].removeprefix("f"))


def _check_transfer(run: RunConfig, spec: AgentSpec, budget: int, unit: str) -> None:
    """One-line refusals of transfer settings that cannot apply (before anything is written)."""
    if run.transfer_every is None and run.finetune_at is None:
        return
    if not spec.joint:
        raise UsageError(f"--transfer-every and --finetune-at are for joint agents; '{spec.name}' is not one")
    if run.from_checkpoint:
        raise UsageError("--transfer-every and --finetune-at need a joint unit to follow; drop --from")
    if run.transfer_every is not None and not 0 < run.transfer_every < budget:
        raise UsageError(f"--transfer-every must lie in (0, {budget:,}) {unit}, the joint budget")
    if run.finetune_at is not None:
        if not run.finetune:
            raise UsageError("--finetune-at needs --finetune")
        bad = [p for p in run.finetune_at if not 0 < p < budget]
        if bad:
            raise UsageError(f"--finetune-at points must lie in (0, {budget:,}) {unit}, the joint budget; got {bad}")


def finetune_budget(r: ResolvedRun) -> int:
    """Budget of each fine-tuning unit, in the budget unit: ``finetune_budget`` if given, else the
    suite's per-task protocol budget (``default_budget``: Sonic's 1M timesteps per test level),
    scaled down like the joint budget when the run's budget is below it (``--frames 20k`` on a
    200M-frame protocol fine-tunes 20K frames). A joint budget above it is the joint phase's own
    length (the paper's 100M timesteps), not a scaling: fine-tuning keeps the protocol's budget."""
    if r.run.finetune_budget is not None:
        return r.run.finetune_budget
    return min(r.budget, r.suite.default_budget)


def finetune_budget_rule(r: ResolvedRun) -> str:
    """Where :func:`finetune_budget`'s number comes from, in words (for the plan)."""
    unit = r.suite.budget_unit
    if r.run.finetune_budget is not None:
        return "run.finetune_budget"
    if r.budget < r.suite.default_budget:
        return f"the protocol's {r.suite.default_budget:,} {unit} per test task, scaled down like the joint budget"
    return "the protocol's budget per test task; set run.finetune_budget to change it"


def plan_units(r: ResolvedRun) -> list[Unit]:
    """The units of a run, in execution order."""
    units: list[Unit] = []
    budget_frames = r.budget_frames

    def add(phase, tasks, seed, frames, learn=True, init=None, uid=None):
        uid = uid or f"{phase}-{tasks[0]}-s{seed}"
        units.append(Unit(uid, len(units), phase, list(tasks), seed, frames, init, learn))

    for seed in r.run.seeds:
        if not r.spec.joint:
            for task in r.tasks:
                add(TRAIN, [task], seed, r.unit_frames(task))
            continue
        split_name = r.split.name if r.split else "custom"
        init = None
        if r.run.from_checkpoint:
            init = str(Path(r.run.from_checkpoint).resolve())
        else:
            add(JOINT, r.tasks, seed, budget_frames, uid=f"{JOINT}-{split_name}-s{seed}")
        if r.run.zeroshot_frames is not None:
            zs_frames = r.suite.to_frames(r.run.zeroshot_frames)
        else:
            zs_frames = max(r.suite.frames_per_step, budget_frames // max(1, len(r.tasks)))
        for task in (*r.split.train, *r.split.test):
            add(ZEROSHOT, [task], seed, zs_frames, learn=False, init=init)
        ft_frames = r.suite.to_frames(finetune_budget(r))
        if r.run.finetune:
            for task in r.split.test:
                add(FINETUNE, [task], seed, ft_frames, init=init)
        zeroshot_points, finetune_points = r.transfer_frames
        for point in zeroshot_points:
            for task in (*r.split.train, *r.split.test):
                uid = transfer_unit_id(TRANSFER_ZEROSHOT, point, task, seed)
                add(TRANSFER_ZEROSHOT, [task], seed, zs_frames, learn=False, uid=uid)
        for point in finetune_points:
            for task in r.split.test:
                add(
                    TRANSFER_FINETUNE,
                    [task],
                    seed,
                    ft_frames,
                    uid=transfer_unit_id(TRANSFER_FINETUNE, point, task, seed),
                )
    return units


def describe_plan(r: ResolvedRun, units: list[Unit]) -> str:
    """A few lines saying what the run will do: units per phase and their budgets."""
    by_phase: dict[str, list[Unit]] = {}
    for u in units:
        by_phase.setdefault(u.phase, []).append(u)
    unit_name = r.suite.budget_unit
    lines = [
        f"plan: {r.spec.name} on {r.suite.name}, {len(units)} unit{'s' * (len(units) != 1)}, "
        f"seeds {', '.join(map(str, r.run.seeds))}"
    ]
    label = protocols.protocol_label(r.suite.protocol())
    if label:
        changed = "".join(f", {k} {old} -> {new}" for k, (old, new) in r.suite.protocol_changes.items())
        lines.append(f"  protocol  {label}{changed}")
    if r.suite.episode_budget() is not None:
        lines.append(f"  training ends after {r.suite.episode_budget():,} episodes per task, or at its budget")
    schedule = r.suite.evaluation_schedule()
    if schedule is not None:
        quota = f"{schedule.episodes:,} episodes" if schedule.episodes else f"{schedule.frames:,} frames"
        when = f"every {schedule.interval_frames:,} training frames and " if schedule.interval_frames else ""
        policy = f"epsilon {schedule.epsilon}" if schedule.epsilon else "greedy"
        lines.append(f"  evaluation {quota} per task, {when}after training ({policy}), recorded as <phase>_eval")
        if schedule.best_policy:
            lines.append(
                f"  best policy: the best round's agent plays {quota} per task more after training, recorded as "
                "<phase>_best (the task score)"
            )
    if r.spec.joint and r.run.task_sampling == "episode":
        lines.append("  joint environments: every training sub-environment draws a new task at every episode")
    if r.spec.check_config is not None:
        lines += [f"  {note}" for note in r.spec.check_config(r.agent_config, r.run)]
    lines += describe_settings(r)
    width = max([9, *map(len, by_phase)])
    for phase, members in by_phase.items():
        budgets = sorted({r.suite.from_frames(u.budget_frames) for u in members})
        shown = " / ".join(f"{b:,}" for b in budgets)
        tasks = sorted({t for u in members for t in u.tasks})
        what = f"{len(tasks)} task{'s' * (len(tasks) != 1)}"
        widths = sorted({vector_width(r, u) for u in members if u.learn})
        if widths and widths != [r.num_envs_for(members[0].tasks)]:  # all the agent's workers', say so
            what += f"; {' / '.join(f'{w:,}' for w in widths)} sub-environments stepped at once"
        cap = " at most" if phase in NOT_LEARNING else ""
        if phase in FINE_TUNING:
            what += f"; {finetune_budget_rule(r)}"
        lines.append(
            f"  {phase:{width}} {len(members):4} unit{'s' * (len(members) != 1)} x{cap} {shown} {unit_name} ({what})"
        )
    zeroshot_points, finetune_points = r.transfer_frames if r.spec.joint else ([], [])
    starts = [
        f"{what} from the joint checkpoints at {', '.join(f'{r.suite.from_frames(p):,}' for p in points)} {unit_name}"
        for what, points in (("zero-shot", zeroshot_points), ("fine-tuning", finetune_points))
        if points
    ]
    if starts:
        lines.append(f"  transfer curves: {'; '.join(starts)} (each the first written at or past its point)")
    lines += describe_vector_steps(r, units)
    total = sum(planned_frames(r, u) for u in units)
    lines.append(f"  total at most {total:,} frames")
    lines += describe_cost(r, units)
    return "\n".join(lines)


def describe_settings(r: ResolvedRun) -> list[str]:
    """Plan lines: the agent settings not at the agent's defaults and where they come from, for
    the run and for each task the suite tuned on its own; the tasks' own budgets."""
    lines = [f"  settings {line}" for line in describe_sources(r.config_sources, r.agent_config)]
    for task, config in r.task_configs.items():
        lines += [f"  settings for {task} {line}" for line in describe_sources(r.task_sources[task], config)]
    unit = r.suite.budget_unit
    lines += [
        f"  budget of {task}: {budget:,} {unit}, the suite's for this task (--frames/--timesteps set another)"
        for task, budget in r.task_budgets.items()
    ]
    return lines


def software(r: ResolvedRun) -> tuple[str, ...]:
    """The distributions a run's results depend on: benchgen's own, its suite's and its agent's."""
    return tuple(dict.fromkeys((*CORE_SOFTWARE, *r.suite.software, *r.spec.software)))


def versions(distributions: Iterable[str]) -> dict[str, str]:
    """Python, platform and the installed versions of ``distributions`` (those not installed left out)."""
    import importlib.metadata

    out = {"python": platform.python_version(), "platform": platform.platform()}
    for dist in distributions:
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            pass
    return out


def run_metadata(registry: Registry, r: ResolvedRun) -> RunRecord:
    """What ``run.json`` records: the resolved run, its protocol and the software that ran it."""
    return RunRecord(
        run=to_dict(r.run),
        agent_config=to_dict(r.agent_config),
        # where each setting comes from (agent default, the suite's tuned settings, --config, --set)
        agent_config_sources=dict(r.config_sources),
        task_agent_configs={task: to_dict(config) for task, config in r.task_configs.items()},
        task_agent_config_sources=dict(r.task_sources),
        task_budgets=dict(r.task_budgets),
        task_num_envs=dict(r.task_num_envs),
        suite=r.suite.name,
        agent=r.spec.name,
        joint=r.spec.joint,
        tasks=list(r.tasks),
        split=dataclasses.asdict(r.split) if r.split else None,
        budget=r.budget,
        budget_unit=r.suite.budget_unit,
        frames_per_step=r.suite.frames_per_step,
        checkpoints=list(r.checkpoints),
        protocol=r.suite.protocol(),
        # the --protocol choice as data (a custom file's values, not its path): resume rebuilds it
        protocol_choice=r.protocol_choice,
        suite_version=r.suite.version,
        task_score_rule=r.suite.task_score_rule,
        episode_fields=list(r.suite.episode_fields),
        score_views=dict(r.suite.score_views),
        plugins=registry.plugin_versions(),
        versions=versions(software(r)),
        created_at=time.time(),
        machines=[{"at": time.time(), **machine_facts()}],
        # the run's identity: made once, kept by copies, so a comparison can tell a copy of a run
        # from another run
        run_id=uuid.uuid4().hex,
        command=list(sys.argv),
    )


def drift(record: RunRecord, r: ResolvedRun) -> dict[str, tuple[Any, Any]]:
    """What differs between a run as recorded and the suite and software installed now:
    ``name -> (recorded, installed)`` for each protocol parameter, the suite's version and the
    version of each distribution the run recorded (Python included, the OS's build not), against
    the one installed: a distribution the run did not record (one its suite or agent declared
    since) is no change, and one it recorded that they no longer declare is still compared."""
    recorded = {f"protocol.{k}": v for k, v in (record.protocol or {}).items()}
    recorded["suite_version"] = record.suite_version
    recorded_versions = {k: v for k, v in (record.versions or {}).items() if k != "platform"}
    recorded |= {f"version.{k}": v for k, v in recorded_versions.items()}
    now = {f"protocol.{k}": v for k, v in json.loads(json.dumps(r.suite.protocol(), default=str)).items()}
    now["suite_version"] = r.suite.version
    installed = versions(k for k in recorded_versions if k != "python")
    now |= {f"version.{k}": v for k, v in installed.items() if k != "platform"}
    return {k: (recorded.get(k), now.get(k)) for k in dict.fromkeys([*recorded, *now]) if recorded.get(k) != now.get(k)}


def create_run(registry: Registry, r: ResolvedRun, out: str | Path) -> RunDir:
    """Write the run directory of a resolved run: its metadata and its planned units."""
    return RunDir.create(out, run_metadata(registry, r), plan_units(r))


def resolve_from_meta(registry: Registry, record: RunRecord) -> ResolvedRun:
    """Rebuild the resolved run from a run directory's record (resume, workers)."""
    run = build_dataclass(RunConfig, record.run, "saved run config")
    spec = registry.agent(record.agent)
    fields = {f.name for f in dataclasses.fields(spec.config_class) if f.init}

    def config(values: dict[str, Any]) -> Any:
        return build_dataclass(
            spec.config_class, {k: v for k, v in values.items() if k in fields}, f"{spec.name} config"
        )

    agent_config = config(record.agent_config)
    task_configs = {task: config(values) for task, values in record.task_agent_configs.items()}
    choice = record.protocol_choice
    suite = agent_suite(registry, spec, record.suite, choice)
    split = None
    if record.split:
        s = record.split
        split = Split(**{**s, "train": tuple(s["train"]), "test": tuple(s["test"])})
    reevaluation = (record.reevaluation or {}).get("schedule")
    return ResolvedRun(
        run,
        agent_config,
        suite,
        spec,
        split,
        record.tasks,
        record.budget,
        record.checkpoints,
        choice,
        reevaluation,
        config_sources=dict(record.agent_config_sources),
        task_configs=task_configs,
        task_sources=dict(record.task_agent_config_sources),
        task_budgets=dict(record.task_budgets),
        task_num_envs=dict(record.task_num_envs),
    )
