"""A run's agent settings: the agent's defaults, the suite's tuned settings for each task, the
variant, ``--config`` and ``--set``, in that order, each value with its source
(:mod:`benchgen.tuned`).

A run of one task (or a joint run) has one agent config. A run of several tasks whose suite tuned
the agent per task has one config per such task besides the run's own ("*" entries only); each
unit is built with its task's (``ResolvedRun.config_for``). Budgets and sub-environments the
suite gives per task apply where the run gives none (``--frames``/``--timesteps``,
``--num-envs``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchgen.agent import AgentSpec
from benchgen.config import build_dataclass, replace_config, suite_values
from benchgen.tuned import AGENT_DEFAULT, check_fields, layered, suite_source

#: the source of a value given by ``--config``/``--set`` when the caller does not say which
OVERRIDE = "--config/--set"


@dataclass
class AgentSettings:
    """The resolved agent settings of a run (see the module docstring)."""

    config: Any
    """The run's agent config: a run of one task, the task's; a joint run, the suite's joint
    settings; a run of several tasks, the settings for all tasks."""
    sources: dict[str, str]
    """Where each of ``config``'s values comes from (field -> source)."""
    task_configs: dict[str, Any] = field(default_factory=dict)
    """Configs of the tasks of a several-task run that the suite tuned on their own."""
    task_sources: dict[str, dict[str, str]] = field(default_factory=dict)
    """``task_configs``' sources."""
    budgets: dict[str, int] = field(default_factory=dict)
    """Each task's training budget the suite gives (budget unit), for a run that gives none."""
    num_envs: dict[str, int] = field(default_factory=dict)
    """Each task's sub-environments the suite gives, for a run without ``--num-envs``."""


def resolve_agent_settings(
    spec: AgentSpec,
    suite: Any,
    tasks: Sequence[str],
    overrides: Mapping[str, Any],
    override_sources: Mapping[str, str] | None = None,
) -> AgentSettings:
    """The agent settings of a run of ``spec`` on ``tasks`` of ``suite`` with the user's
    ``overrides`` (``--config``/``--set`` values; ``override_sources`` says which gave each)."""
    override_sources = override_sources or {}

    where = f"{spec.name} config"

    def build(entries) -> tuple[Any, dict[str, str]]:
        check_fields(spec.config_class, entries, suite.name, spec.name, spec.algorithm)
        layers = [(e.settings, suite_source(suite.name, e)) for e in entries]
        tuned, _ = layered(spec.config_class, layers)
        variant = overrides.get("variant", tuned.get("variant"))
        chosen = spec.variant_defaults(variant)
        if chosen:
            layers.append((chosen, f"variant {variant if variant is not None else 'default'}"))
        user = {k: override_sources.get(k, OVERRIDE) for k in overrides}
        layers += [({k: v}, user[k]) for k, v in overrides.items()]
        from_suite = suite_values(spec.config_class, suite)
        layers += [({k: v}, f"suite {suite.name}: its {k}") for k, v in from_suite.items()]
        values, sources = layered(spec.config_class, layers)
        config = replace_config(build_dataclass(spec.config_class, {}, where), values, where)
        return config, sources

    per_task = {} if spec.joint else {t: suite.tuned_settings(spec.algorithm, t) for t in dict.fromkeys(tasks)}
    budgets, num_envs = {}, {}
    for task, entries in per_task.items():
        for entry in entries:  # the last entry that gives one wins
            if entry.budget is not None:
                budgets[task] = entry.budget
            if entry.num_envs is not None:
                num_envs[task] = entry.num_envs
    if len(per_task) == 1:
        config, sources = build(next(iter(per_task.values())))
        return AgentSettings(config, sources, budgets=budgets, num_envs=num_envs)
    config, sources = build(suite.tuned_settings(spec.algorithm, None, joint=spec.joint))
    out = AgentSettings(config, sources, budgets=budgets, num_envs=num_envs)
    for task, entries in per_task.items():
        if any(e.label == task for e in entries):
            out.task_configs[task], out.task_sources[task] = build(entries)
    return out


def describe_sources(sources: Mapping[str, str], config: Any) -> list[str]:
    """Plan lines: the values that do not come from the agent's defaults, grouped by source."""
    by_source: dict[str, list[str]] = {}
    for name, source in sources.items():
        if source != AGENT_DEFAULT:
            by_source.setdefault(source, []).append(f"{name}={getattr(config, name)}")
    order = ("suite ", "variant ", "--config", "--set", "--vary")  # lowest precedence first

    def rank(source: str) -> int:
        return next((i for i, start in enumerate(order) if source.startswith(start)), len(order))

    return [f"{source}: {', '.join(by_source[source])}" for source in sorted(by_source, key=rank)]
