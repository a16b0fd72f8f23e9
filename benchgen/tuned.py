"""Task-fitted agent settings owned by suites, and where each setting of a run comes from.

Tuned hyperparameters are knowledge about a task, published with it (the RL Baselines3 Zoo keeps
them per environment id; the Sonic paper states its PPO's), so a suite ships them as data, for
the algorithms of the shared agents: ``tuned/<algorithm>.yaml`` next to the suite's module,
read by :meth:`benchgen.suite.Suite.tuned_settings`. An agent names the algorithm whose settings
its config takes (``AgentSpec.algorithm``: by default its own name; a joint agent keeps its
single-task agent's), so that neither core nor agent names a suite and a suite names no agent
implementation, only the algorithm whose published settings it carries.

A file is a mapping of entries; each gives ``source`` (where the values are published: paper and
section, or file and commit) and ``settings`` (fields of the agent's config), and optionally
``budget`` (the task's training budget in the suite's budget unit, used when the run gives none)
and ``num_envs`` (sub-environments, used when ``--num-envs`` is not given)::

    "*":            # every unit of the suite (a task without an entry of its own keeps these)
      source: ...
      settings: {...}
    joint:          # units that train on several tasks at once (a joint agent's run)
      source: ...
      settings: {...}
    CartPole-v1:    # one task, over "*"
      source: ...
      budget: 50000
      settings: {...}

Precedence when a run is resolved (``benchgen.run.planning.plan.resolve``): the agent config's defaults,
then the suite's entries ("*", then "joint" or the task's), then a variant the user picks
(``--set variant=NAME``), then ``--config``, then ``--set``. The resolved run records the
source of every value (:data:`AGENT_DEFAULT` for those untouched), shown by ``--plan``.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchgen.errors import UsageError
from benchgen.inputs import read_yaml

#: the source of a value no one set: the agent config class's default (the agent's paper's)
AGENT_DEFAULT = "agent default"
#: the entry of a tuned-settings file that applies to every unit
ALL_TASKS = "*"
#: the entry that applies to units training on several tasks at once (joint agents)
JOINT = "joint"
#: the keys an entry may have
ENTRY_KEYS = ("source", "settings", "budget", "num_envs")


@dataclass(frozen=True)
class TunedSettings:
    """One entry of a suite's tuned settings for an algorithm."""

    source: str
    """Where the values are published (paper and section, or file and commit)."""
    settings: Mapping[str, Any] = field(default_factory=dict)
    """Agent config fields and their values."""
    budget: int | None = None
    """The task's training budget in the suite's budget unit (None: the suite's default)."""
    num_envs: int | None = None
    """Sub-environments per unit (None: the agent's or the suite's default)."""
    label: str = ""
    """The entry's name in its file ("*", "joint" or a task), for messages and sources."""


def load_tuned_file(path: Path) -> dict[str, TunedSettings]:
    """The entries of one ``tuned/<algorithm>.yaml``; a malformed file is a ``ValueError`` (a
    plugin author's mistake, raised when a run first reads it). Read once per version of the file."""
    path = Path(path)
    return dict(_load(str(path), path.stat().st_mtime_ns))


@functools.lru_cache(maxsize=64)
def _load(name: str, _mtime_ns: int) -> dict[str, TunedSettings]:
    path = Path(name)
    data = read_yaml(path, "tuned settings file") or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: tuned settings must be a mapping of task (or '*', 'joint') to entry")
    out = {}
    for label, entry in data.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("source"), str) or not entry["source"].strip():
            raise ValueError(f"{path}: entry {label!r} needs a 'source' naming where its values are published")
        unknown = sorted(set(entry) - set(ENTRY_KEYS))
        if unknown:
            raise ValueError(f"{path}: entry {label!r} has unknown keys {unknown}; known: {list(ENTRY_KEYS)}")
        settings = entry.get("settings") or {}
        if not isinstance(settings, dict):
            raise ValueError(f"{path}: entry {label!r}: 'settings' must be a mapping of config field to value")
        for key in ("budget", "num_envs"):
            value = entry.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
                raise ValueError(f"{path}: entry {label!r}: {key} must be a positive integer, not {value!r}")
        out[str(label)] = TunedSettings(
            " ".join(entry["source"].split()), dict(settings), entry.get("budget"), entry.get("num_envs"), str(label)
        )
    return out


def entries_for(table: Mapping[str, TunedSettings], task: str | None, joint: bool) -> list[TunedSettings]:
    """The entries of ``table`` that apply to a unit, lowest precedence first: "*", then "joint"
    for a joint run (``task`` None) or the task's own."""
    out = [table[ALL_TASKS]] if ALL_TASKS in table else []
    key = JOINT if joint else task
    if key is not None and key in table:
        out.append(table[key])
    return out


def suite_source(suite_name: str, entry: TunedSettings) -> str:
    """How a value from ``entry`` names its source in a resolved config."""
    where = "all tasks" if entry.label == ALL_TASKS else entry.label
    return f"suite {suite_name} ({where}): {entry.source}"


def layered(
    config_class: type, layers: Sequence[tuple[Mapping[str, Any], str]]
) -> tuple[dict[str, Any], dict[str, str]]:
    """``(values, sources)`` from ``(settings, source)`` layers, lowest precedence first: every
    field of ``config_class`` a layer sets takes that layer's value and source."""
    names = [f.name for f in dataclasses.fields(config_class) if f.init]
    values: dict[str, Any] = {}
    sources = {name: AGENT_DEFAULT for name in names}
    for settings, source in layers:
        for key, value in settings.items():
            values[key] = value
            sources[key] = source
    return values, sources


def check_fields(config_class: type, entries: Sequence[TunedSettings], suite: str, agent: str, algorithm: str) -> None:
    """``UsageError`` (one line) when a suite's tuned settings set a field ``agent``'s config lacks:
    the agent declares an algorithm whose settings it does not take."""
    names = {f.name for f in dataclasses.fields(config_class) if f.init}
    for entry in entries:
        unknown = sorted(set(entry.settings) - names)
        if unknown:
            raise UsageError(
                f"suite {suite}'s tuned settings for {algorithm} ({entry.label}) set {unknown}, which agent "
                f"{agent} does not take; the agent's plugin should declare another algorithm"
            )


def tuned_values(suite: Any, algorithm: str, task: str | None = None, joint: bool = False) -> dict[str, Any]:
    """The agent settings ``suite`` tuned ``algorithm`` with for a unit playing ``task`` (None: a
    unit of several tasks), merged in precedence order (:meth:`benchgen.suite.Suite.tuned_settings`)."""
    values: dict[str, Any] = {}
    for entry in suite.tuned_settings(algorithm, task, joint):
        values.update(entry.settings)
    return values
