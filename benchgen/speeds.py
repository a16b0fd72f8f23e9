"""Measured speeds: how many emulator frames per second an agent's unit runs on a suite's tasks.

The planner states a run's wall time from them (:mod:`benchgen.run.planning.cost`). A speed is knowledge
about a suite's tasks as much as about the agent (the emulator, the protocol's frame skip and
observation size set most of it), so the suite owns its rows, as it owns its reference tables:
``data/speeds.csv`` next to the module that defines its class, read by
:meth:`benchgen.suite.Suite.measured_speeds`. Each row names the agent it measured (the
implementation, not only the algorithm: two implementations of one algorithm run at their own
speeds), its variant if the speed is that variant's, and says what was measured and when::

    agent,variant,frames_per_second,num_envs,device,measured
    myagent,,125,8,cpu,"task-a, 27K frames between checkpoints, 2026-11-25, beside other work"

An optional ``settings`` column names agent settings the speed depends on, as ``--set`` writes
them (``precision=bfloat16; torch_threads=1``): the planner takes a row whose settings the run
has over one whose settings it lacks, and says so when only the latter is there. An optional
``processor`` column names the CPU the row was measured on, as this machine's model name has it
or a distinctive part of it (``AMD EPYC``, ``Intel(R) Xeon(R)``: :mod:`benchgen.machine`): the
planner takes a row of this machine's processor over one that names none, and that over one of
another processor, and says which processor it planned from.

There is no calibration run: a row is a number someone measured with ``benchgen run`` itself,
past a learning agent's replay start (where a real run spends most of its time), on one of the
:data:`MACHINES`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from benchgen.errors import UsageError

#: the machines rows were measured on, by their ``device`` column: where the agent's torch ran
MACHINES = {"cpu": "2 CPU cores, no GPU", "cuda": "one NVIDIA H100 GPU with 16 CPU cores"}

#: the columns of a speeds file (and the optional ``settings`` and ``processor``)
COLUMNS = ("agent", "variant", "frames_per_second", "num_envs", "device", "measured")


@dataclass(frozen=True)
class Speed:
    """One measured speed of ``agent`` (its ``variant`` if not None) on a suite's tasks."""

    agent: str
    """The agent measured (``AgentSpec.name``)."""
    variant: str | None
    """The variant the speed is of (``AgentSpec.variants``); None: any variant of the agent."""
    frames_per_second: float
    """Emulator frames per second of one unit, its learner updates included."""
    num_envs: int
    """Sub-environments of the unit measured."""
    measured: str
    """What was measured, where and when, in words (shown in the plan)."""
    device: str = "cpu"
    """Where the agent's torch ran: a key of :data:`MACHINES`."""
    table: str = ""
    """The file the row comes from, as the plan names it (e.g. ``benchgen_mysuite/data/speeds.csv``)."""
    settings: tuple[tuple[str, str], ...] = ()
    """Agent settings the speed was measured with and depends on (``(name, value as --set writes
    it)`` pairs, the optional ``settings`` column); empty: none named."""
    processor: str = ""
    """The CPU it was measured on (the optional ``processor`` column: the model name or a
    distinctive part of it); empty: not named."""


def parse_settings(text: str) -> tuple[tuple[str, str], ...]:
    """A ``settings`` cell (``name=value; name=value``) as ``(name, value)`` pairs; ValueError
    for an item without a name or a ``=``."""
    pairs = []
    for item in filter(None, (part.strip() for part in text.split(";"))):
        name, sep, value = (x.strip() for x in item.partition("="))
        if not sep or not name.isidentifier() or not value:
            raise ValueError(f"settings item {item!r} is not NAME=VALUE")
        pairs.append((name, value))
    return tuple(pairs)


def _table_rows(path: Path, columns: tuple[str, ...]) -> Iterator[tuple[int, dict[str, str]]]:
    """``(line number, row)`` for each row of a measured-speeds CSV file, after its leading ``#``
    lines (how it was measured); a file without ``columns`` is one line naming what it lacks."""
    from benchgen.inputs import csv_reader

    with path.open(newline="", encoding="utf-8") as f:
        lines = f.read().splitlines(keepends=True)
    comments = next((i for i, line in enumerate(lines) if not line.startswith("#")), len(lines))
    reader = csv_reader(lines[comments:], str(path))
    missing = [c for c in columns if c not in (reader.fieldnames or [])]
    if missing:
        raise UsageError(f"{path}: needs the columns {','.join(columns)} (missing {','.join(missing)})")
    yield from enumerate(reader, start=comments + 2)


def read_speeds_csv(path: str | Path, shown_as: str = "") -> list[Speed]:
    """The rows of a speeds file (:data:`COLUMNS`; leading ``#`` lines describe how it was
    measured); a malformed row is one line naming the file and the line (a plugin author's
    mistake, found when a run is planned). ``shown_as``: the file's name in the plan (default:
    its path)."""
    path = Path(path)
    out = []
    for lineno, row in _table_rows(path, COLUMNS):
        try:
            speed = Speed(
                row["agent"].strip(),
                row["variant"].strip() or None,
                float(row["frames_per_second"]),
                int(row["num_envs"]),
                row["measured"].strip(),
                row["device"].strip(),
                shown_as or str(path),
                parse_settings(row.get("settings") or ""),
                (row.get("processor") or "").strip(),
            )
        except (TypeError, ValueError, AttributeError) as exc:
            raise UsageError(f"{path}:{lineno}: malformed speed row ({exc})") from None
        if not speed.agent or speed.frames_per_second <= 0 or speed.num_envs < 1:
            raise UsageError(f"{path}:{lineno}: a row needs an agent, frames_per_second > 0 and num_envs >= 1")
        if speed.device not in MACHINES:
            raise UsageError(f"{path}:{lineno}: device must be one of {', '.join(MACHINES)}, not {speed.device!r}")
        out.append(speed)
    return out


#: the columns of an evaluation file
EVALUATION_COLUMNS = ("agent", "variant", "task", "episode_frames", "frames_per_second", "measured")


@dataclass(frozen=True)
class EvaluationSpeed:
    """How one agent's (``variant``'s, if not None) evaluation episodes of one task ran: their mean
    length and the emulator frames per second while evaluating (no learner updates; a trained
    agent's episodes can run far longer than its training episodes)."""

    agent: str
    variant: str | None
    task: str
    episode_frames: float
    """Mean emulator frames of an evaluation episode."""
    frames_per_second: float
    """Emulator frames per second while evaluating."""
    measured: str
    """What was measured, in words."""
    table: str = ""
    """The file the row comes from, as the plan names it."""


def read_evaluation_csv(path: str | Path, shown_as: str = "") -> list[EvaluationSpeed]:
    """The rows of an evaluation file (:data:`EVALUATION_COLUMNS`; leading ``#`` lines describe how
    it was measured); a malformed row is one line naming the file and the line."""
    path = Path(path)
    out = []
    for lineno, row in _table_rows(path, EVALUATION_COLUMNS):
        try:
            entry = EvaluationSpeed(
                row["agent"].strip(),
                row["variant"].strip() or None,
                row["task"].strip(),
                float(row["episode_frames"]),
                float(row["frames_per_second"]),
                row["measured"].strip(),
                shown_as or str(path),
            )
        except (TypeError, ValueError, AttributeError) as exc:
            raise UsageError(f"{path}:{lineno}: malformed evaluation row ({exc})") from None
        if not entry.agent or not entry.task or entry.episode_frames <= 0 or entry.frames_per_second <= 0:
            raise UsageError(
                f"{path}:{lineno}: a row needs an agent, a task, episode_frames > 0 and frames_per_second > 0"
            )
        out.append(entry)
    return out
