"""What a learning unit's budget runs, in whole vector steps.

An agent steps all its sub-environments at once, so a unit advances by one *vector step*
(sub-environments x the suite's ``frames_per_step`` frames) at a time and stops at the first
vector step at or past its budget (the agent contract: ``ctx.finished`` is checked after every
vector step; ``budget_frames // frames_per_step`` agent steps). A budget that is not a whole
number of vector steps therefore runs a little more than asked (or less, by under one agent
step, when it is not a whole number of agent steps).

benchgen keeps such a budget rather than refusing it: budgets are also derived (a joint
budget's scaled fine-tuning budget, a protocol's default over a split's width) and the agent
conformance kit runs odd budgets on purpose. It is never silent: the plan says, per phase,
what each unit will run and the nearest budgets that run exactly what they say.
"""

from __future__ import annotations

import math

from benchgen.results.store import Unit
from benchgen.suite import frames_to_steps


def vector_width(r, unit: Unit) -> int:
    """The sub-environments a learning unit of run ``r`` steps at once (all data-parallel workers'
    together)."""
    num_envs = r.num_envs_for(unit.tasks)
    if r.spec.vector_width is not None:  # what the agent declares it steps (data-parallel workers)
        declared = r.spec.vector_width(r.agent_config, num_envs, len(unit.tasks), unit.phase == "finetune")
        if declared is not None:
            return int(declared)
    if r.spec.joint and r.run.task_sampling == "episode":
        return num_envs  # one-task slots that draw a new task every episode
    return max(num_envs, len(unit.tasks)) if len(unit.tasks) > 1 else num_envs


def frames_run(budget_frames: int, width: int, frames_per_step: int) -> int:
    """The frames a learning unit with this budget runs: whole vector steps up to the first at or
    past ``budget_frames // frames_per_step`` agent steps.

    >>> frames_run(1001, 8, 4), frames_run(1024, 8, 4), frames_run(1001, 1, 4)
    (1024, 1024, 1000)
    """
    steps = frames_to_steps(budget_frames, frames_per_step)
    return math.ceil(steps / width) * width * int(frames_per_step)


def planned_frames(r, unit: Unit) -> int:
    """The most frames ``unit`` of run ``r`` runs: a learning unit's whole vector steps
    (:func:`frames_run`), an evaluation unit's budget (it stops at it, or earlier at its episodes)."""
    return (
        frames_run(unit.budget_frames, vector_width(r, unit), r.suite.frames_per_step)
        if unit.learn
        else unit.budget_frames
    )


def describe_vector_steps(r, units: list[Unit]) -> list[str]:
    """Plan lines, one per learning phase and budget that is not a whole number of vector steps:
    what each unit will run instead and the nearest budgets that run exactly what they say; and a
    warning per learning phase whose budget is below one of the agent's learning rounds
    (``AgentSpec.round_steps``)."""
    fps = int(r.suite.frames_per_step)
    unit_name = r.suite.budget_unit
    seen, lines = set(), []
    for u in units:
        if not u.learn:
            continue
        width = vector_width(r, u)
        key = (u.phase, u.budget_frames, width)
        ran = frames_run(u.budget_frames, width, fps)
        if r.spec.round_steps is not None and (u.phase, "round") not in seen:
            round_steps, budget_steps = (
                int(r.spec.round_steps(r.agent_config, width)),
                frames_to_steps(u.budget_frames, fps),
            )
            if budget_steps < round_steps:
                seen.add((u.phase, "round"))
                lines.append(
                    f"  warning: each {u.phase} unit's budget ({budget_steps:,} agent steps) "
                    f"is below one learning round of {r.spec.name} ({round_steps:,} agent steps over {width} "
                    "sub-environments): it will never update; raise the budget or shorten the round"
                )
        if key in seen or ran == u.budget_frames:
            continue
        seen.add(key)
        step = width * fps
        lower, upper = (u.budget_frames // step) * step, -(-u.budget_frames // step) * step
        nearest = " or ".join(f"{r.suite.from_frames(b):,}" for b in sorted({lower, upper}) if b > 0)
        lines.append(
            f"  budget: each {u.phase} unit runs {r.suite.from_frames(ran):,} {unit_name}, not the "
            f"{r.suite.from_frames(u.budget_frames):,} asked: it stops at a whole vector step of {width} "
            f"sub-environment{'s' * (width != 1)} x {fps} frames; {nearest} {unit_name} run exactly"
        )
    return lines
