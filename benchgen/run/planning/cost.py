"""What a run will cost in wall time, stated in its plan (issue 29, "the plan states its cost").

The estimate comes from the frames per second measured of the run's agent on its suite, which the
suite ships (``Suite.measured_speeds``, :mod:`benchgen.speeds`): numbers measured with ``benchgen
run`` itself, one unit at a time, mostly on the development machine (2 CPU cores, no GPU, torch on
CPU, beside other work) and a few on a GPU machine (``device`` "cuda"), which a run whose agent
will use a CUDA device (``AgentSpec.device``) is planned from. There is no calibration run: a plan
is printed in a moment and writes nothing. Each row says what was measured and when; a suite and
agent without a row get no estimate, never a guess. A faster or idler machine (more cores,
another GPU) runs faster than the plan says.

A protocol's evaluation rounds (``Suite.evaluation_schedule``) are counted where the suite measured
its agent's evaluation episodes on the task (``Suite.measured_evaluation``: their mean length and
frames per second; a trained agent's episodes can run far longer than its training episodes); a
task without such a row is said to be not estimated, never guessed.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from benchgen.machine import cpu_count, processor_name, same_processor
from benchgen.speeds import MACHINES, EvaluationSpeed, Speed

if TYPE_CHECKING:
    from benchgen.results.store import Unit
    from benchgen.run.planning.resolved import ResolvedRun

#: a total beyond this gets a warning in the plan
DAY_SECONDS = 24 * 3600


def speeds(r: ResolvedRun) -> list[Speed]:
    """The speeds measured on the run's suite (``Suite.measured_speeds``): emulator frames per
    second of one unit including its learner updates."""
    return list(r.suite.measured_speeds())


def _agent_names(r: ResolvedRun) -> tuple[list[str], str | None]:
    """The agent names a suite's rows may hold for the run (its own, then its single-task agent's,
    ``AgentSpec.joint_of``) and its variant (None: the agent declares none)."""
    variant = r.agent_config.variant if r.spec.variants else None  # (declared: the config has the field)
    return [r.spec.name, *([r.spec.joint_of] if r.spec.joint_of else [])], variant


def _variant_entry(entries: list, variant: str | None):
    """The first of a suite's rows (``Speed`` or ``EvaluationSpeed``) measured with ``variant``,
    else the first measured without one; None: neither."""
    for e in entries:
        if e.variant is not None and e.variant == variant:
            return e
    return next((e for e in entries if e.variant is None), None)


def find_evaluation(r: ResolvedRun, task: str) -> EvaluationSpeed | None:
    """The suite's measured evaluation of the run's agent on ``task`` (its variant's, else one
    for any variant; a joint agent without rows takes its single-task agent's). None: no row."""
    names, variant = _agent_names(r)
    measured = [e for e in r.suite.measured_evaluation() if e.task == task]
    for name in names:
        entry = _variant_entry([e for e in measured if e.agent == name], variant)
        if entry is not None:
            return entry
    return None


def evaluation_rounds(r: ResolvedRun, u: Unit) -> int:
    """How many evaluation rounds a unit plays (``Suite.evaluation_schedule``): one at every
    interval of training frames, one after training, and the best agent's round; 0 without a
    schedule or for a unit that does not learn."""
    schedule = r.suite.evaluation_schedule()
    if schedule is None or not u.learn:
        return 0
    every = schedule.interval_frames
    return (1 + (u.budget_frames - 1) // every if every else 1) + int(schedule.best_policy)


def evaluation_seconds(r: ResolvedRun, u: Unit) -> tuple[float, list[str]]:
    """The estimated wall time of a unit's evaluation rounds, and the unit's tasks without a
    measured evaluation (their rounds are not in the time)."""
    schedule, rounds = r.suite.evaluation_schedule(), evaluation_rounds(r, u)
    if schedule is None or not rounds:
        return 0.0, []
    seconds, missing = 0.0, []
    for task in dict.fromkeys(u.tasks):
        e = find_evaluation(r, task)
        if e is None:
            missing.append(task)
            continue
        frames = schedule.episodes * e.episode_frames if schedule.episodes else schedule.frames
        seconds += rounds * frames / e.frames_per_second
    return seconds, missing


def describe_evaluation(r: ResolvedRun, units: list[Unit], missing: list[str]) -> list[str]:
    """The plan's line on where the evaluation estimate comes from, and which tasks have none."""
    schedule = r.suite.evaluation_schedule()
    if schedule is None or not any(evaluation_rounds(r, u) for u in units):
        return []
    tasks = sorted({t for u in units if evaluation_rounds(r, u) for t in u.tasks})
    found = [e for e in (find_evaluation(r, t) for t in tasks) if e is not None]
    names, variant = _agent_names(r)
    what = f"{names[0]}{f' variant={variant}' if variant else ''} on {r.suite.name}"
    lines = []
    if found:
        rounds = sorted({evaluation_rounds(r, u) for u in units if evaluation_rounds(r, u)})
        quota = f"{schedule.episodes:,} episodes" if schedule.episodes else f"{schedule.frames:,} frames"
        if len(found) <= 3:
            each = ", ".join(
                f"{e.task} {e.episode_frames:,.0f} frames an episode at {e.frames_per_second:,.0f} frames/s ({e.measured})"
                for e in found
            )
        else:
            each = f"the measured episodes of {len(found)} of its {len(tasks)} tasks"
        lines.append(
            f"    evaluation ({quota} a round, {' / '.join(map(str, rounds))} round{'s' * (rounds != [1])} a unit) "
            f"from {each}, {what}; shipped table ({found[0].table}, no calibration)"
        )
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        lines.append(
            f"    evaluation not estimated for {shown}: no measured evaluation of {what} "
            "(a suite lists the measured ones in its data/evaluation_speeds.csv)"
        )
    return lines


def run_device(r: ResolvedRun) -> str:
    """Where the run's agent will put its network, as the agent declares it (``AgentSpec.device``):
    "cpu" or "cuda"; "cpu" for an agent that declares nothing."""
    return "cpu" if r.spec.device is None else str(r.spec.device(r.agent_config))


def find_speed(r: ResolvedRun) -> tuple[Speed, str] | None:
    """The suite's entry for the run's agent (its variant's, if the suite has one; a joint agent
    without entries of its own takes its single-task agent's, ``AgentSpec.joint_of``: its units
    run at that speed at best), measured on the run's device where the suite has one, else on the
    other; with the run's device ("cpu" when the suite holds that agent on the CPU only: the
    device is then not asked). None: no entry."""
    names, variant = _agent_names(r)
    measured = speeds(r)
    for name in names:
        entries = [s for s in measured if s.agent == name]
        if not entries:
            continue
        device = run_device(r) if any(s.device != "cpu" for s in entries) else "cpu"
        # the run's device first, then this machine's processor, then rows whose named settings the
        # run has; stable otherwise
        entries.sort(key=lambda s: (s.device != device, processor_rank(s), bool(settings_differing(s, r.agent_config))))
        entry = _variant_entry(entries, variant)
        if entry is not None:
            return entry, device
    return None


#: plan for this processor instead of this machine's (planning a run for another machine)
PLAN_PROCESSOR_VARIABLE = "BENCHGEN_PLAN_PROCESSOR"


def plan_processor() -> str:
    """The processor a plan is for: ``$BENCHGEN_PLAN_PROCESSOR`` if set, else this machine's."""
    return os.environ.get(PLAN_PROCESSOR_VARIABLE, "").strip() or processor_name()


def processor_rank(speed: Speed) -> int:
    """0: ``speed`` was measured on the planned processor; 1: its row names none; 2: another."""
    if not speed.processor:
        return 1
    return 0 if same_processor(speed.processor, plan_processor()) else 2


def settings_differing(speed: Speed, agent_config) -> list[str]:
    """The settings a speed row names (``Speed.settings``) that the run's agent config does not
    have, as ``name=row value (this run: value)``: empty when it has them all."""
    differing = []
    for name, measured in speed.settings:
        if not hasattr(agent_config, name):
            differing.append(f"{name}={measured} (this run: not a setting)")
            continue
        value = getattr(agent_config, name)
        shown = str(value).lower() if isinstance(value, bool) else str(value)
        if shown != measured:
            differing.append(f"{name}={measured} (this run: {shown})")
    return differing


def duration(seconds: float) -> str:
    """``seconds`` as a short, rounded duration: 40 s, 12 min, 3.5 h, 12 days."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:,.0f} days"


def _this_machine() -> str:
    """The machine the plan is for, as its line names it."""
    if os.environ.get(PLAN_PROCESSOR_VARIABLE, "").strip():
        return f"planned for {plan_processor()}: ${PLAN_PROCESSOR_VARIABLE}"
    return f"this machine: {cpu_count()} cores{f', {processor_name()}' if processor_name() else ''}"


def describe_cost(r: ResolvedRun, units: list[Unit]) -> list[str]:
    """The plan's lines on wall time: per unit of each phase and in total, the speed they come
    from and what it was measured on, and a warning when the total exceeds a day."""
    found = find_speed(r)
    if found is None:
        return [
            f"  wall time: not estimated, no measured speed for {r.spec.name} on {r.suite.name} "
            "(a suite lists the measured ones in its data/speeds.csv)"
        ]
    speed, device = found
    per_phase: dict[str, list[float]] = {}
    evaluation: dict[str, list[float]] = {}
    missing: list[str] = []
    for u in units:
        per_phase.setdefault(u.phase, []).append(u.budget_frames / speed.frames_per_second)
        if evaluation_rounds(r, u):
            seconds, lacking = evaluation_seconds(r, u)
            missing += [t for t in lacking if t not in missing]
            if len(lacking) < len(set(u.tasks)):
                evaluation.setdefault(u.phase, []).append(seconds)
    total = sum(sum(times) for times in [*per_phase.values(), *evaluation.values()])
    parts = []
    for phase, times in per_phase.items():
        at_most = "at most " if not all(u.learn for u in units if u.phase == phase) else ""
        each = " / ".join(duration(t) for t in sorted(set(times)))
        parts.append(f"{phase} {at_most}{each} per unit")
        if phase in evaluation:
            times = sorted(set(evaluation[phase]))
            each = (
                " / ".join(map(duration, times))
                if len(times) <= 3
                else f"{duration(times[0])} to {duration(times[-1])}"
            )
            parts.append(f"{phase}_eval {each} per unit")
        elif any(evaluation_rounds(r, u) for u in units if u.phase == phase):
            parts.append(f"{phase}_eval not estimated")
    what = f"{speed.agent}{f' variant={speed.variant}' if speed.variant else ''} on {r.suite.name}"
    notes = []
    if speed.agent != r.spec.name:
        notes.append(f"{r.spec.name}'s units at {speed.agent}'s single-task speed")
    if device != speed.device:
        notes.append(f"measured with torch on {speed.device.upper()}, this run's agent uses {device.upper()}")
    if processor_rank(speed) == 2:
        notes.append(f"measured on another processor ({speed.processor})")
    differing = settings_differing(speed, r.agent_config)
    if differing:
        notes.append(f"measured with {', '.join(differing)}")
    num_envs = r.num_envs
    if num_envs != speed.num_envs:
        notes.append(
            f"measured with {speed.num_envs} sub-environment{'s' * (speed.num_envs != 1)}, this run has {num_envs}"
        )
    at_once = ""
    if r.run.jobs > 1 and len(units) > 1:
        at_once = f"; {r.run.jobs} at once (--jobs) take about 1/{min(r.run.jobs, len(units))} of it if the cores allow"
    elif len(units) > 1 and cpu_count() > 1:  # the way to the shorter wall time, where the machine has it
        n = min(cpu_count(), len(units))
        at_once = f"; --jobs {n} runs {n} at once: about {duration(total / n)} if each unit keeps to one core"
    lines = [
        f"  wall time (estimated): {', '.join(parts)}; {duration(total)} in total"
        f"{' (without the evaluation not estimated)' if missing else ''}, one unit after another{at_once}",
        f"    from {speed.frames_per_second:,.0f} frames/s, {what}: {speed.measured}; shipped table "
        f"({f'{speed.table}, ' if speed.table else ''}no calibration), measured on {MACHINES[speed.device]}"
        f"{f', {speed.processor}' if speed.processor else ''} ({_this_machine()})" + "".join(f"; {n}" for n in notes),
        *describe_evaluation(r, units, missing),
    ]
    if total > DAY_SECONDS:
        lines.append(
            f"  warning: about {duration(total)} of wall time, more than a day; --frames/--timesteps scale the "
            "budget down"
        )
    return lines
