"""A run's record: what ``run.json`` holds, as one typed object with one reader and one writer.

``run.json`` is written once when a run is created (``RunDir.create``) and again only to note a
forced resume; every reader (resume, workers, report, compare, export, video, re-evaluation)
goes through :meth:`RunRecord.from_json`, which checks the entries readers rely on (a damaged or
missing one is a one-line error naming it) and brings a file written by an older benchgen up to
the current format (:data:`RUN_FORMAT`), so old runs stay readable.

Formats:

- 1 (no ``format`` entry): runs written before the record was versioned. Runs older still lack
  ``score_views`` (their time views are the ``score_*`` episode fields), ``run_id`` (they are told
  apart by path) and ``protocol_choice``.
- 2: ``format`` is written; ``score_views`` is always present.

Entries this version does not know are kept as written (:attr:`RunRecord.extra`) and written back.
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchgen.errors import UsageError
from benchgen.suite import budget_to_frames, frames_to_budget

RUN_FILE = "run.json"
#: the format :meth:`RunRecord.to_json` writes (see the module docstring)
RUN_FORMAT = 2

#: the entries every reader relies on, and their JSON types: a file without one cannot be read
REQUIRED: dict[str, tuple[type, ...]] = {
    "suite": (str,),
    "agent": (str,),
    "run": (dict,),
    "agent_config": (dict,),
    "tasks": (list,),
    "split": (dict, type(None)),
    "budget": (int,),
    "budget_unit": (str,),
    "frames_per_step": (int,),
    "checkpoints": (list,),
}


@dataclass
class RunRecord:
    """What a run recorded when it was created (``run.json``)."""

    #: the suite's registered name
    suite: str
    #: the agent's registered name
    agent: str
    #: the resolved run config (``RunConfig`` as plain JSON)
    run: dict[str, Any]
    #: the agent's resolved config (its config dataclass as plain JSON)
    agent_config: dict[str, Any]
    #: the tasks the run trains on (a joint run's train tasks)
    tasks: list[str]
    #: the split of a joint run (``Split`` as plain JSON); None for single-task runs
    split: dict[str, Any] | None
    #: the per-unit budget, in ``budget_unit``
    budget: int
    #: the suite's budget unit ("frames" or "timesteps")
    budget_unit: str
    #: emulator frames per agent step, as the suite declared it
    frames_per_step: int
    #: the reporting checkpoints, in ``budget_unit``
    checkpoints: list[int]
    #: whether the agent is one policy over several tasks
    joint: bool = False
    #: the suite's protocol parameters (``Suite.protocol()``)
    protocol: dict[str, Any] = field(default_factory=dict)
    #: the ``--protocol`` choice as data (resume and workers rebuild the same suite from it)
    protocol_choice: Any = None
    #: the suite's version
    suite_version: str | None = None
    #: the suite's per-task score rule, in words
    task_score_rule: str | None = None
    #: the extra per-episode fields the suite records
    episode_fields: list[str] = field(default_factory=list)
    #: the suite's time views of a score: episode field -> label
    score_views: dict[str, str] = field(default_factory=dict)
    #: the plugin distributions and their versions
    plugins: Any = field(default_factory=list)
    #: the versions of the software a result depends on
    versions: dict[str, Any] = field(default_factory=dict)
    #: when the run was created (seconds since the epoch)
    created_at: float | None = None
    #: the machines that ran it (``benchgen.machine.machine_facts`` with "at": when it started or
    #: was resumed there), one entry per change of machine, oldest first; empty: not recorded
    #: (runs made before benchgen recorded them)
    machines: list[dict[str, Any]] = field(default_factory=list)
    #: the run's identity, kept by copies (None: a run made before run ids existed)
    run_id: str | None = None
    #: the command line that created the run
    command: list[str] = field(default_factory=list)
    #: a re-evaluation run's schedule and source (``benchgen evaluate``); None otherwise
    reevaluation: dict[str, Any] | None = None
    #: recorded by a training loop outside benchgen (``benchgen.api.Recording``)
    external_loop: bool = False
    #: one entry per ``resume --force`` under another protocol or software
    forced_resumes: list[dict[str, Any]] = field(default_factory=list)
    #: one entry per ``resume --set`` that changed how the agent runs (``execution_setting`` fields):
    #: when, and each setting's value before and after; and one per resume that gave the settings
    #: benchgen added after the run started their defaults (its ``source`` says so; before: None)
    settings_changes: list[dict[str, Any]] = field(default_factory=list)
    #: where each value of ``agent_config`` comes from: "agent default", the suite's tuned
    #: settings and their source, a variant, ``--config FILE`` or ``--set`` (runs made before
    #: sources were recorded: empty)
    agent_config_sources: dict[str, str] = field(default_factory=dict)
    #: the agent configs of tasks the suite tuned on their own, in a run of several tasks
    task_agent_configs: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: their sources (task -> field -> source)
    task_agent_config_sources: dict[str, dict[str, str]] = field(default_factory=dict)
    #: each task's budget the suite gave (budget unit), for a run that gave none
    task_budgets: dict[str, int] = field(default_factory=dict)
    #: each task's sub-environments the suite gave, for a run without ``--num-envs``
    task_num_envs: dict[str, int] = field(default_factory=dict)
    #: the file's format (:data:`RUN_FORMAT` once read: older files are migrated)
    format: int = RUN_FORMAT
    #: entries this version does not know, kept as written
    extra: dict[str, Any] = field(default_factory=dict)

    # -- units ---------------------------------------------------------------------------------
    def to_frames(self, amount: int) -> int:
        """An amount in the run's budget unit as emulator frames."""
        return budget_to_frames(amount, self.budget_unit, self.frames_per_step)

    def from_frames(self, frames: int) -> int:
        """Emulator frames in the run's budget unit (whole agent steps for timesteps)."""
        return frames_to_budget(frames, self.budget_unit, self.frames_per_step)

    @property
    def run_config(self) -> Any:
        """The run settings as a ``RunConfig`` (checked when the record was read; a setting an
        older benchgen did not record has its default)."""
        from benchgen.config import RunConfig, build_dataclass

        return build_dataclass(RunConfig, self.run, "saved run config")

    @property
    def seeds(self) -> list[int]:
        return list(self.run.get("seeds", []))

    # -- JSON ----------------------------------------------------------------------------------
    @classmethod
    def from_json(cls, data: Any, where: str | Path = RUN_FILE) -> RunRecord:
        """Read a record, migrating an older format; one-line ``UsageError`` naming ``where`` if
        an entry readers rely on is missing or damaged."""
        if not isinstance(data, dict):
            raise UsageError(f"{where} is not a run's metadata; restore it from a copy of the run")
        for key, kinds in REQUIRED.items():
            if key not in data or not isinstance(data[key], kinds) or isinstance(data[key], bool):
                what = "lacks its" if key not in data else "has a damaged"
                raise UsageError(f"{where} {what} '{key}' entry; restore it from a copy of the run")
        data = _migrate(dict(data), where)
        _check_entries(data, where)
        known = {f.name for f in dataclasses.fields(cls)} - {"extra"}
        return cls(
            **{k: v for k, v in data.items() if k in known}, extra={k: v for k, v in data.items() if k not in known}
        )

    def to_json(self) -> dict[str, Any]:
        """The record as ``run.json`` holds it (defaults an older reader does not know are left out)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "extra"}
        for optional in ("reevaluation", "forced_resumes", "settings_changes", "external_loop", "machines"):
            if not out[optional]:
                del out[optional]
        return {**out, **self.extra}

    @classmethod
    def read(cls, path: str | Path) -> RunRecord:
        """The record in the file ``path``."""
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, ValueError) as exc:
            raise UsageError(f"{path} cannot be read ({exc}); restore it from a copy of the run")
        return cls.from_json(data, path)

    def write(self, path: str | Path) -> None:
        """Write the record to ``path`` (the caller makes it atomic: ``RunDir``)."""
        Path(path).write_text(json.dumps(self.to_json(), indent=2, default=str))


def part_trained(reevaluation: Any) -> str:
    """The agents a re-evaluation run (``RunRecord.reevaluation``) evaluated before the end of
    their training budget, as a line ("train-pong-s0 at 3,815 of 8,000 timesteps"); empty
    when none was (or the run was made before this was recorded)."""
    trained = reevaluation.get("trained") if isinstance(reevaluation, dict) else None
    unit = reevaluation.get("budget_unit", "") if isinstance(trained, dict) else ""
    short = []
    for name, pair in trained.items() if isinstance(trained, dict) else ():
        if isinstance(pair, list) and len(pair) == 2 and all(type(v) is int for v in pair) and pair[0] < pair[1]:
            short.append(f"{name} at {pair[0]:,} of {pair[1]:,} {unit}")
    return ", ".join(short)


def resume_changes(record: RunRecord) -> list[str]:
    """What the run's resumes changed, a line each, oldest first ("2026-11-29 06:12 UTC, resume
    --set: torch_threads 0 -> 2"): the settings of ``resume --set`` and those benchgen added after
    the run started (``settings_changes``), and the protocol or software of ``resume --force``
    (``forced_resumes``). Entries not in the form benchgen writes are left out."""
    kinds = (
        ("resume --force", record.forced_resumes, "installed"),
        ("resume --set", record.settings_changes, "now"),
    )
    entries = []
    for command, recorded, after in kinds:
        for entry in recorded if isinstance(recorded, list) else ():
            at, changes = (entry.get("at"), entry.get("changes")) if isinstance(entry, dict) else (None, None)
            if not isinstance(at, int | float) or not isinstance(changes, dict):
                continue
            shown = [
                f"{name} {_before(change.get('recorded'))} -> {change.get(after)}"
                for name, change in changes.items()
                if isinstance(change, dict)
            ]
            when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(at))
            entries.append((at, f"{when}, {entry.get('source') or command}: {'; '.join(shown)}"))
    return [line for _, line in sorted(entries, key=lambda e: e[0])]


def machines_ran_on(record: RunRecord) -> list[str]:
    """The machines the run ran on, oldest first, as a report names them ("Intel(R) Xeon(R)
    Processor, 2 cores"); entries not in the form benchgen writes are left out."""
    return [
        f"{m.get('processor') or 'processor not named'}, {m['cpus']} core{'s' * (m['cpus'] != 1)}"
        for m in record.machines
        if isinstance(m, dict) and isinstance(m.get("cpus"), int) and isinstance(m.get("processor", ""), str)
    ]


def _before(value: Any) -> str:
    """A setting's recorded value as a resume line shows it: None, a setting the record lacked."""
    return "(not recorded)" if value is None else str(value)


def _migrate(data: dict[str, Any], where: str | Path = RUN_FILE) -> dict[str, Any]:
    """``data`` brought from its format up to :data:`RUN_FORMAT`."""
    version = data.get("format", 1)
    if not _whole(version, 1):  # ("2", 0, 1.5: not a format any benchgen wrote, newer or older)
        raise UsageError(f"{where} has a damaged 'format' entry ({version!r}); restore it from a copy of the run")
    if version > RUN_FORMAT:
        raise UsageError(
            f"{where} has format {version!r}, newer than this benchgen reads ({RUN_FORMAT}); upgrade benchgen"
        )
    if version < 2:
        # runs recorded before suites declared their time views: the ``score_*`` episode fields
        if data.get("score_views") is None:
            data["score_views"] = {f: f for f in data.get("episode_fields") or [] if f.startswith("score_")}
        data["format"] = 2
    return data


def _whole(value: Any, least: int) -> bool:
    """Whether ``value`` is a JSON integer (not a boolean) of at least ``least``."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


def _names(value: Any, empty: bool = True) -> bool:
    """Whether ``value`` is a list of non-empty strings (and not empty, unless ``empty``)."""
    return isinstance(value, list) and (empty or bool(value)) and all(isinstance(v, str) and v for v in value)


def _check_entries(data: dict[str, Any], where: str | Path) -> None:
    """Every entry readers use, checked to its elements and ranges (a hand edit or a damaged file is
    one line naming the entry, before a reader divides by a budget of 0 or looks up a key of an
    empty ``run``); the run settings are checked as ``RunConfig`` coerces them (readers take the
    default of one an older benchgen did not record: :attr:`RunRecord.run_config`)."""
    from benchgen.config import RunConfig, build_dataclass

    def damaged(key: str, why: str) -> UsageError:
        return UsageError(f"{where} has a damaged '{key}' entry ({why}); restore it from a copy of the run")

    if not _whole(data["budget"], 1):
        raise damaged("budget", f"{data['budget']!r} is not a positive whole number")
    if not _whole(data["frames_per_step"], 1):
        raise damaged("frames_per_step", f"{data['frames_per_step']!r} is not a positive whole number")
    if data["budget_unit"] not in ("frames", "timesteps"):
        raise damaged("budget_unit", f"{data['budget_unit']!r} is neither frames nor timesteps")
    if not all(_whole(c, 1) for c in data["checkpoints"]):
        raise damaged("checkpoints", "each must be a positive whole number")
    if not _names(data["tasks"], empty=False):
        raise damaged("tasks", "a list of task names")
    split = data["split"]
    if split is not None and not all(_names(split.get(part)) for part in ("train", "test")):
        raise damaged("split", "its train and test entries must be lists of task names")
    if not isinstance(data.get("score_views", {}), dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in data.get("score_views", {}).items()
    ):
        raise damaged("score_views", "a mapping of episode field to label")
    if not _names(data.get("episode_fields", [])):
        raise damaged("episode_fields", "a list of field names")
    for key in ("task_budgets", "task_num_envs"):
        values = data.get(key, {})
        if not isinstance(values, dict) or not all(_whole(v, 1) for v in values.values()):
            raise damaged(key, "a mapping of task to a positive whole number")
    if "seeds" not in data["run"]:  # (every benchgen wrote its seeds: a record without them lost them)
        raise damaged("run", "it lacks the run's seeds")
    run = build_dataclass(RunConfig, data["run"], f"'run' entry of {where}")  # (one line if a value is wrong)
    if not run.seeds or not all(_whole(s, 0) for s in run.seeds):
        raise damaged("run", "its seeds must be whole numbers from 0")
    if run.zeroshot_episodes < 1:
        raise damaged("run", "its zeroshot_episodes must be at least 1")
    data["run"] = dict(data["run"])  # (kept as written: a record reads back as it was made)


def check_units_against(record: RunRecord, units: list[Any], where: str | Path) -> None:
    """The record's budget against the units its run planned (the store's ``budget_frames``): a
    training unit plays the task's budget, a joint unit the run's. A record edited to another
    budget (``budget: 2000`` beside units of 8,000) would report a budget the agents did not
    have: one line naming the first unit that disagrees."""
    from benchgen.phases import JOINT, TRAIN

    for unit in units:
        if unit.phase == TRAIN:
            expected = record.to_frames(record.task_budgets.get(unit.tasks[0], record.budget))
        elif unit.phase == JOINT:
            expected = record.to_frames(record.budget)
        else:
            continue
        if unit.budget_frames != expected:
            raise UsageError(
                f"{where} says each {unit.phase} unit plays {expected:,} frames, but the run's store planned unit "
                f"{unit.unit_id} for {unit.budget_frames:,}: one of them was edited or damaged; restore the run "
                "from a copy"
            )
