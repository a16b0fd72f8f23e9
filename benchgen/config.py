"""Run configuration: dataclasses, YAML files and ``--set key=value`` overrides.

A run's configuration is two dataclasses: :class:`RunConfig` (what to run: suite, agent, tasks,
seeds, budget...) and the agent's own config class. A YAML file given with ``--config`` and the
``--set`` pairs may name fields of either; ``agent.`` / ``run.`` prefixes disambiguate. Unknown
keys are errors with a "did you mean". The resolved values of both are saved with every run and
every checkpoint. An agent config field declared with :func:`from_suite` is the suite's value,
not a setting.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from benchgen.errors import UsageError, did_you_mean
from benchgen.inputs import YAMLLimitError, load_yaml, read_yaml


@dataclass
class RunConfig:
    """What a run does. Budgets are in the suite's budget unit (frames or timesteps)."""

    suite: str = ""
    """Suite name (a plugin's ``Suite.name``)."""
    agent: str = ""
    """Agent name (a plugin's ``AgentSpec.name``)."""
    tasks: list[str] = field(default_factory=list)
    """Tasks to run; empty means the split's tasks."""
    split: str | None = None
    """Split name or YAML file; used when ``tasks`` is empty (default: the suite's default split)."""
    protocol: str | None = None
    """The suite's protocol preset (``benchgen protocols SUITE``), or a YAML file that starts from
    one (``base: NAME``) and changes parameters (None: the suite's default protocol)."""
    seeds: list[int] = field(default_factory=lambda: [0])
    """One unit per (task, seed)."""
    budget: int | None = None
    """Training budget per unit in the suite's unit (None: the protocol's default)."""
    checkpoints: list[int] | None = None
    """Reporting checkpoints in the budget unit (None: the protocol's, scaled to the budget)."""
    checkpoint_every: int | None = None
    """Save a resumable checkpoint at least this often, in the budget unit (None: budget / 20)."""
    num_envs: int | None = None
    """Parallel sub-environments per unit (None: the agent's or the suite's default)."""
    task_sampling: str | None = None
    """How a unit that trains on several tasks (a joint unit) gives tasks to its sub-environments:
    "fixed" (each keeps one task, the tasks cycled over the sub-environments, every task at least
    once), "episode" (joint environments: each draws a new task at every episode, as Nichol et
    al. 2018's joint Rainbow); None: the agent's default (``AgentSpec.task_sampling``)."""
    finetune: bool = False
    """Joint agents: after joint training, run the suite's test protocol on every test task from
    the joint checkpoint."""
    from_checkpoint: str | None = None
    """Joint agents: skip joint training and fine-tune/evaluate from this checkpoint."""
    zeroshot_episodes: int = 10
    """Joint agents: episodes per task for zero-shot evaluation."""
    zeroshot_frames: int | None = None
    """Joint agents: the most a zero-shot unit may play, in the budget unit, if its episodes take
    that long (None: the joint budget / the number of train tasks); reports flag tasks that got
    fewer than ``zeroshot_episodes`` episodes."""
    finetune_budget: int | None = None
    """Joint agents: budget per test task for fine-tuning (None: the suite's default budget, the
    protocol's per-test-task budget, scaled down like the joint budget when the run's budget is
    below it; a larger joint budget leaves it unscaled)."""
    transfer_every: int | None = None
    """Joint agents: also evaluate zero-shot, on every train and test task, the joint checkpoints
    written every this many budget units (transfer curves, Nichol et al. 2018 Figure 4; None:
    the final checkpoint only)."""
    finetune_at: list[int] | None = None
    """Joint agents with ``finetune``: also fine-tune every test task from the joint checkpoints
    at these points, in the budget unit (None: from the final checkpoint only)."""
    executor: str = "local"
    """Where units run: 'local' (this process tree) or 'ray'."""
    jobs: int = 1
    """Units run at once by the local executor."""
    ray_address: str | None = None
    """Ray cluster address ('auto' for a running cluster; None: a local Ray instance)."""
    cpus_per_unit: float = 1.0
    """Ray resources per unit: CPUs."""
    gpus_per_unit: float = 0.0
    """Ray resources per unit: GPU fraction."""
    max_retries: int = 2
    """Times a failed unit is retried from its last checkpoint."""
    progress: bool = True
    """Show progress: a bar per unit on a terminal, else plain lines (see ``progress_every``)."""
    progress_every: float = 30.0
    """Seconds between plain progress lines when the output is not a terminal (frames, frames/s,
    ETA, episodes, recent mean score per running unit); a bar redraws on a terminal instead."""


#: metadata key of an agent config field whose value is the suite's (see :func:`from_suite`)
FROM_SUITE = "benchgen_from_suite"


def from_suite(attribute: str, default: Any) -> Any:
    """A dataclass field of an agent config whose value is the suite's ``attribute`` (e.g.
    ``frames_per_step``): set when a run is resolved and saved with the config, never a setting
    (``--config``/``--set`` refuse it). ``default`` holds for a config built without a suite."""
    return field(default=default, metadata={FROM_SUITE: attribute})


#: metadata key of an agent config field that sets how the agent runs, not what it learns (see
#: :func:`execution_setting`)
EXECUTION = "benchgen_execution"


def execution_setting(default: Any) -> Any:
    """A dataclass field of an agent config that sets how the agent runs (device, threads, logging
    cadence, what a checkpoint holds), not what it learns: the same updates up to the order of
    float sums. Runs of one agent that differ only in such settings are the same experiment, so
    ``benchgen compare`` pools their seeds (and says how they ran) instead of telling them apart."""
    return field(default=default, metadata={EXECUTION: True})


def execution_settings(config_class: type) -> frozenset[str]:
    """The names of ``config_class``'s :func:`execution_setting` fields."""
    return frozenset(f.name for f in dataclasses.fields(config_class) if f.metadata.get(EXECUTION))


def suite_values(config_class: type, suite: Any) -> dict[str, Any]:
    """The values of ``config_class``'s :func:`from_suite` fields for ``suite``."""
    return {
        f.name: getattr(suite, f.metadata[FROM_SUITE])
        for f in dataclasses.fields(config_class)
        if FROM_SUITE in f.metadata
    }


def field_docs(cls: type) -> dict[str, str]:
    """Field docstrings of a dataclass (the string literal after each field), for help texts; a
    field a subclass redefines takes the subclass's docstring, one it inherits its base's."""
    import ast
    import inspect
    import textwrap

    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):  # bases first, so subclasses override
        if klass is object or not dataclasses.is_dataclass(klass):
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError):
            continue
        body = tree.body[0].body  # type: ignore[attr-defined]
        for node, nxt in zip(body, body[1:]):
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                if isinstance(nxt, ast.Expr) and isinstance(getattr(nxt, "value", None), ast.Constant):
                    docs[node.target.id] = " ".join(str(nxt.value.value).split())
    return docs


def _coerce(value: Any, annotation: Any, key: str, bounded: bool = True) -> Any:
    """Turn a YAML/``--set`` value into the field's type, with a one-line error if it cannot
    (``bounded``: integers at most :data:`MAX_INTEGER` in size)."""
    if isinstance(annotation, str):
        annotation = eval(annotation, vars(typing), {})  # dataclass annotations are strings here
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        if value is None or (isinstance(value, str) and value.lower() in ("none", "null")):
            if type(None) in args:
                return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _coerce(value, arg, key, bounded)
            except UsageError as exc:
                errors.append(str(exc))
        raise UsageError(errors[0] if errors else f"bad value for {key}")
    if origin in (list, tuple):
        inner = args[0] if args else str
        if isinstance(value, str):
            value = [v for v in value.split(",") if v.strip()]
        if not isinstance(value, (list, tuple)):
            value = [value]
        return [_coerce(v, inner, key, bounded) for v in value]
    if annotation is bool:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("1", "true", "yes", "on"):
            return True
        if text in ("0", "false", "no", "off"):
            return False
        raise UsageError(f"{key} must be true or false, not '{value}'")
    if annotation is int:
        if isinstance(value, bool):
            raise UsageError(f"{key} must be an integer, not '{value}'")
        if isinstance(value, int):
            return _within(value, key) if bounded else value
        try:
            as_float = float(str(value).replace("_", ""))
        except ValueError:
            raise UsageError(f"{key} must be an integer, not '{value}'")
        if not math.isfinite(as_float) or not as_float.is_integer():
            raise UsageError(f"{key} must be an integer, not '{value}'")
        return _within(int(as_float), key) if bounded else int(as_float)
    if annotation is float:
        if isinstance(value, bool):  # (YAML's true is no number: `gamma=true` was taken as 1.0)
            raise UsageError(f"{key} must be a number, not '{value}'")
        try:
            number = float(str(value).replace("_", "")) if not isinstance(value, (int, float)) else float(value)
        except (ValueError, OverflowError):
            raise UsageError(f"{key} must be a number, not '{value}'")
        if not math.isfinite(number):
            raise UsageError(f"{key} must be a finite number, not '{value}'")
        return number
    if annotation is str:
        return str(value)
    return value


#: the largest integer setting accepted: counts beyond it (``batch_size=1e100``) would pass here
#: and fail mid-run (numpy's 64-bit counters, memory); 2**53 is also where floats stop holding
#: every integer, so ``1e16`` could not mean what it says
MAX_INTEGER = 2**53


def _within(value: int, key: str) -> int:
    if abs(value) > MAX_INTEGER:
        raise UsageError(f"{key} is {value:.3g}, beyond any count a run can use (at most 2**53); give a smaller one")
    return value


def parse_set_pairs(pairs: list[str]) -> dict[str, Any]:
    """``["lr=1e-4", "agent.batch_size=64"]`` -> dict; values parsed as YAML scalars."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise UsageError(f"--set expects key=value, got '{pair}'")
        try:
            out[key] = load_yaml(raw) if raw.strip() else ""
        except YAMLLimitError as exc:
            raise UsageError(f"--set {key}: the value {exc}; give a plain value")
        except yaml.YAMLError:
            out[key] = raw
    return out


def load_config_file(path: str | Path) -> dict[str, Any]:
    """Read a YAML config file: a flat mapping, or ``{run: {...}, agent: {...}}``."""
    path = Path(path)
    data = read_yaml(path, "config file")
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UsageError(f"config file {path} must be a mapping of key: value")
    flat: dict[str, Any] = {}
    for key, value in data.items():
        if key in ("run", "agent") and isinstance(value, dict):
            for sub, v in value.items():
                flat[f"{key}.{sub}"] = v
        else:
            flat[str(key)] = value
    return flat


#: run settings only the command line gives (``benchgen run SUITE AGENT``): a ``--set`` or
#: ``--config`` value for them would be overwritten by it, so they are refused there and not listed
COMMAND_LINE_ONLY = ("suite", "agent")


def split_overrides(
    overrides: dict[str, Any], agent_config_class: type, where: str, listed_by: str = "benchgen settings AGENT"
) -> tuple[dict, dict]:
    """Route each key to the run config or the agent config; unknown keys are errors, which name
    the command that lists the settings (``listed_by``)."""
    # Derived fields (init=False, computed in __post_init__) and the suite's values are not settings.
    from_suite_fields = {f.name for f in dataclasses.fields(agent_config_class) if FROM_SUITE in f.metadata}
    run_fields = {f.name for f in dataclasses.fields(RunConfig) if f.init}
    agent_fields = {f.name for f in dataclasses.fields(agent_config_class) if f.init} - from_suite_fields
    run_over: dict[str, Any] = {}
    agent_over: dict[str, Any] = {}
    for key, value in overrides.items():
        scope, dot, name = key.partition(".")
        if (name if dot and scope == "run" else key) in COMMAND_LINE_ONLY and not (dot and scope == "agent"):
            raise UsageError(
                f"{key} is given on the command line (benchgen run SUITE AGENT), not by {where}; remove it"
            )
        if (name if dot and scope == "agent" else key) in from_suite_fields:
            raise UsageError(f"{key} is set from the suite, not by {where}; remove it")
        if dot and scope == "run":
            target, fields, bare = run_over, run_fields, name
        elif dot and scope == "agent":
            target, fields, bare = agent_over, agent_fields, name
        elif key in agent_fields:
            target, fields, bare = agent_over, agent_fields, key
        elif key in run_fields:
            target, fields, bare = run_over, run_fields, key
        else:
            raise did_you_mean(f"config key in {where}", key, run_fields | agent_fields, listed_by=listed_by)
        if bare not in fields:
            raise did_you_mean(f"{scope} config key in {where}", bare, fields, listed_by=listed_by)
        target[bare] = value
    return run_over, agent_over


def build_dataclass(cls: type, values: dict[str, Any], where: str) -> Any:
    """Instantiate ``cls`` from ``values`` with type coercion; validation errors become one line."""
    hints = typing.get_type_hints(cls)
    # the run config's numbers have ranges of their own, with more to say than a size
    # (``plan.validate_run_config``: a budget's frames, a seed's range); an agent's have only this
    bounded = cls is not RunConfig
    kwargs = {}
    for f in dataclasses.fields(cls):
        if f.init and f.name in values:
            kwargs[f.name] = _coerce(values[f.name], hints.get(f.name, f.type), f"{f.name} ({where})", bounded)
    try:
        return cls(**kwargs)
    except UsageError:
        raise
    except (TypeError, ValueError) as exc:
        raise UsageError(f"invalid {where}: {exc}")


def replace_config(config: Any, values: dict[str, Any], where: str) -> Any:
    """A copy of dataclass ``config`` with ``values`` applied (coerced), re-validated."""
    merged = {f.name: getattr(config, f.name) for f in dataclasses.fields(config) if f.init}
    merged.update(values)
    return build_dataclass(type(config), merged, where)


def to_dict(config: Any) -> dict[str, Any]:
    """JSON-ready dict of a dataclass config (init fields and derived fields alike)."""
    return {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}


def settings_table(config_class: type, defaults: dict[str, Any] | None = None) -> str:
    """The settable fields of a config dataclass, one per line: name, default (``defaults``
    override the class's), and the field's docstring (``benchgen settings``)."""
    docs = field_docs(config_class)
    lines = []
    for f in dataclasses.fields(config_class):
        if not f.init or FROM_SUITE in f.metadata or (config_class is RunConfig and f.name in COMMAND_LINE_ONLY):
            continue
        if defaults and f.name in defaults:
            value = defaults[f.name]
        elif f.default is not dataclasses.MISSING:
            value = f.default
        elif f.default_factory is not dataclasses.MISSING:
            value = f.default_factory()
        else:
            value = "(required)"
        lines.append(f"  {f.name:24} {str(value):14} {docs.get(f.name, '')}")
    return "\n".join(lines)
