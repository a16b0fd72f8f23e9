"""The results store: one SQLite database (WAL mode) per run directory.

Every finished episode is committed as it finishes, in the same transaction as the unit's frame
counter, so a run killed at any moment (``kill -9`` included) keeps every recorded episode and
knows exactly how many frames it had used. Scores are stored raw; normalization is computed at
read time. The run's metadata lives in ``run.json`` beside the store (see
:mod:`benchgen.results.rundir`), not here.

:class:`UnitStore` is the part of the store a running unit writes through; besides
:class:`ResultsStore`, a remote worker's stand-in (``benchgen.run.execution.ray_cluster.StreamingStore``)
implements it.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
import urllib.parse
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from benchgen.errors import UsageError
from benchgen.phases import is_episode_phase, is_unit_phase

SCHEMA = """
CREATE TABLE IF NOT EXISTS units (
    unit_id TEXT PRIMARY KEY,
    ordinal INTEGER NOT NULL,
    phase TEXT NOT NULL,
    tasks TEXT NOT NULL,              -- JSON list: the tasks the unit's sub-environments play
    seed INTEGER NOT NULL,
    budget_frames INTEGER NOT NULL,
    init_checkpoint TEXT,             -- checkpoint the unit started from (fine-tuning provenance)
    learn INTEGER NOT NULL DEFAULT 1, -- 0 for zero-shot evaluation units
    status TEXT NOT NULL DEFAULT 'pending',   -- pending | running | done
    frames_done INTEGER NOT NULL DEFAULT 0,
    last_checkpoint TEXT,
    last_checkpoint_frames INTEGER,
    retries INTEGER NOT NULL DEFAULT 0,
    started_at REAL,
    finished_at REAL
);
CREATE TABLE IF NOT EXISTS episodes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    unit_id TEXT NOT NULL REFERENCES units(unit_id),
    phase TEXT NOT NULL,
    task TEXT NOT NULL,
    seed INTEGER NOT NULL,
    episode INTEGER NOT NULL,         -- 0, 1, 2, ... per (unit, task), contiguous
    env_index INTEGER NOT NULL,
    frames_total INTEGER NOT NULL,    -- the unit's frame counter when the episode ended
    length_frames INTEGER NOT NULL,
    score REAL NOT NULL,              -- raw game score; inf = infinite gameplay
    end_reason TEXT NOT NULL,
    extras TEXT NOT NULL DEFAULT '{}',
    events TEXT NOT NULL DEFAULT '[]',
    wall_time REAL NOT NULL,
    UNIQUE (unit_id, task, episode)
);
CREATE INDEX IF NOT EXISTS episodes_by_task ON episodes (task, seed, phase);
CREATE TABLE IF NOT EXISTS checkpoints (
    unit_id TEXT NOT NULL,
    frames INTEGER NOT NULL,
    path TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (unit_id, frames)
);
"""

DB_NAME = "results.sqlite"
#: how long a write waits for another connection's lock before failing (SQLite's busy timeout)
LOCK_TIMEOUT_SECONDS = 30.0


@dataclass
class Unit:
    """One (phase, tasks, seed) piece of work of a run."""

    unit_id: str
    ordinal: int
    phase: str
    tasks: list[str]
    seed: int
    budget_frames: int
    init_checkpoint: str | None = None
    learn: bool = True
    status: str = "pending"
    frames_done: int = 0
    last_checkpoint: str | None = None
    last_checkpoint_frames: int | None = None
    retries: int = 0

    @property
    def label(self) -> str:
        what = self.tasks[0] if len(set(self.tasks)) == 1 else f"{len(set(self.tasks))} tasks"
        return f"{self.phase} {what} seed {self.seed}"


@dataclass(frozen=True)
class EpisodeTally:
    """How many episodes (and emulator frames) a unit recorded in one phase, round and task."""

    phase: str
    round: int | None
    """the evaluation round (``extras["eval_round"]``); None for the unit's own episodes"""
    task: str
    episodes: int
    frames: int
    score: float = 0.0
    """the sum of their raw scores"""
    frames_total: int = 0
    """the unit's frame counter when the first of them was recorded (for an evaluation round,
    the counter it began at: its agent's checkpoint)"""


def check_unit_id(unit_id: Any) -> str:
    """A unit id names a folder of the run (``units/<id>``, ``tb/<id>``; a task id with a ``/``
    gives a nested one): one-line ``UsageError`` for one that could lead out of it (absolute, a
    ``..`` part), as a damaged or crafted store may hold."""
    parts = unit_id.split("/") if isinstance(unit_id, str) else []
    if not parts or unit_id.startswith("/") or "\0" in unit_id or any(p in ("", ".", "..") for p in parts):
        raise UsageError(
            f"unit id {unit_id!r} is not a plain name (it would lead out of the run's units folder); the run's "
            f"{DB_NAME} is damaged: restore it from a copy of the run"
        )
    return unit_id


def _check_unit_row(r: sqlite3.Row) -> None:
    """A unit row as benchgen writes it: a plain unit id (:func:`check_unit_id`), counts that are
    whole numbers from 0, tasks a JSON list of names, checkpoint paths text. A damaged or crafted
    store is one line naming the unit and the column, before a value reaches an env or a path."""
    unit_id = check_unit_id(r["unit_id"])

    def damaged(column: str) -> UsageError:
        return UsageError(
            f"unit {unit_id} has {column} {r[column]!r} in the run's {DB_NAME}, which benchgen never writes; "
            "the store is damaged: restore it from a copy of the run"
        )

    for column in ("ordinal", "budget_frames", "frames_done", "last_checkpoint_frames", "retries"):
        value = r[column]
        if value is None and column == "last_checkpoint_frames":
            continue
        if not isinstance(value, int) or value < 0:
            raise damaged(column)
    if not isinstance(r["seed"], int):
        raise damaged("seed")
    try:
        tasks = json.loads(r["tasks"])
    except (TypeError, ValueError):
        tasks = None
    if not isinstance(tasks, list) or not tasks or not all(isinstance(t, str) for t in tasks):
        raise damaged("tasks")
    for column in ("phase", "status", "last_checkpoint", "init_checkpoint"):
        if not isinstance(r[column], str) and not (r[column] is None and column.endswith("checkpoint")):
            raise damaged(column)
    if not is_unit_phase(r["phase"]):  # (phases name the report's files: only benchgen's own)
        raise damaged("phase")


def _episode(row: sqlite3.Row) -> dict[str, Any]:
    """An episode row as a dict (``extras`` and ``events`` decoded), checked to be as benchgen
    writes it: a bit flip inside a record, which SQLite's own checks let through, or a crafted
    store is one line naming the episode and the column."""
    d = dict(row)

    def damaged(column: str) -> UsageError:
        return UsageError(
            f"episode {d['id']} of unit {d['unit_id']!r} has {column} {row[column]!r} in the run's {DB_NAME}, "
            "which benchgen never writes; the store is damaged: restore it from a copy of the run"
        )

    for column in ("unit_id", "phase", "task", "end_reason"):
        if not isinstance(d[column], str):
            raise damaged(column)
    if not is_episode_phase(d["phase"]):  # (phases name the report's files: only benchgen's own)
        raise damaged("phase")
    for column in ("episode", "env_index", "frames_total", "length_frames"):
        if not isinstance(d[column], int) or d[column] < 0:
            raise damaged(column)
    if not isinstance(d["score"], (int, float)):
        raise damaged("score")
    for column, kind in (("extras", dict), ("events", list)):
        try:
            d[column] = json.loads(d[column])
        except (TypeError, ValueError):
            raise damaged(column) from None
        if not isinstance(d[column], kind):
            raise damaged(column)
    return d


def _encode_float(value: float) -> float:
    # SQLite stores IEEE infinities in REAL columns as they are; NaN would become NULL, so refuse it.
    if value != value:
        raise ValueError("NaN score")
    return float(value)


class UnitStore(Protocol):
    """What executing a unit reads and writes: the unit's row, its episodes and checkpoints."""

    def unit(self, unit_id: str) -> Unit:
        """The unit as stored."""

    def update_unit(self, unit_id: str, **fields: Any) -> None:
        """Set columns of the unit's row (status, timestamps, retries)."""

    def next_episode_numbers(self, unit_id: str) -> dict[str, int]:
        """task -> the number the unit's next episode of that task gets."""

    def record_episodes(self, unit: Unit, records: list[dict[str, Any]], frames_done: int) -> None:
        """Commit finished episodes and the unit's frame counter together (a record's ``phase``,
        when it has one, is an evaluation phase of the unit; else the unit's phase)."""

    def episode_tally(self, unit_id: str) -> list[EpisodeTally]:
        """What the unit has recorded, per phase, evaluation round and task (resume reads it)."""

    def record_checkpoint(self, unit_id: str, frames: int, path: str) -> None:
        """Record a checkpoint (path relative to the run directory) as the unit's newest."""

    def close(self) -> None:
        """Make every write durable and release the store."""


def _read_only_connection(path: Path) -> sqlite3.Connection:
    """``path`` opened for reading only. In a folder nobody may write to (a read-only mount, an
    archived run), SQLite cannot make the ``-shm`` file a store in WAL mode needs even to read;
    there the store is read as immutable, which is exact once its write-ahead log is folded in
    (every run folds it when it stops), and refused in one line while the log holds episodes."""

    def connect(flags: str) -> sqlite3.Connection:
        # (quoted: a `#`, `?` or `%` in a folder name is part of the path, not of the URI)
        conn = sqlite3.connect(f"file:{urllib.parse.quote(str(path))}?{flags}", uri=True, timeout=LOCK_TIMEOUT_SECONDS)
        try:
            conn.execute("SELECT COUNT(*) FROM units").fetchone()
        except BaseException:
            conn.close()
            raise
        return conn

    try:
        return connect("mode=ro")
    except sqlite3.OperationalError as exc:
        if "unable to open" not in str(exc) or os.access(path.parent, os.W_OK) or not path.is_file():
            raise
    wal = path.with_name(path.name + "-wal")
    if wal.exists() and wal.stat().st_size > 0:
        raise UsageError(
            f"{path} cannot be read in a read-only folder: its write-ahead log {wal.name} holds episodes not "
            "yet folded into it; copy the run to a writable folder and read it there"
        )
    return connect("mode=ro&immutable=1")


class ResultsStore:
    """Thin, explicit wrapper over the run's SQLite database; implements :class:`UnitStore`."""

    def __init__(self, path: str | Path, readonly: bool = False):
        self.path = Path(path)
        if self.path.is_dir():
            self.path = self.path / DB_NAME
        try:
            if readonly:
                self.conn = _read_only_connection(self.path)
            else:
                self.conn = sqlite3.connect(self.path, timeout=LOCK_TIMEOUT_SECONDS)
                self._refuse_a_foreign_database()  # before anything below changes the file
                self.conn.execute("PRAGMA journal_mode=WAL")
                # NORMAL in WAL mode: a committed episode survives a killed process (kill -9); only an
                # OS crash or power loss can drop the last commits. FULL would fsync every episode.
                self.conn.execute("PRAGMA synchronous=NORMAL")
                self.conn.executescript(SCHEMA)
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc):
                raise  # held by another program: the CLI says so in one line
            raise UsageError(f"{self.path} is not a readable results store ({exc}); restore it from a copy of the run")
        except sqlite3.Error as exc:
            raise UsageError(f"{self.path} is not a readable results store ({exc}); restore it from a copy of the run")
        self.conn.row_factory = sqlite3.Row

    def _refuse_a_foreign_database(self) -> None:
        """A database that has tables but not benchgen's is another program's: never add benchgen's
        tables to it, nor switch its journal (issue 27: resume wrote into an unrelated file)."""
        tables = {row[0] for row in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if tables and not {"units", "episodes"} <= tables:
            self.conn.close()
            shown = ", ".join(sorted(tables)[:4]) + (", ..." if len(tables) > 4 else "")
            raise UsageError(
                f"{self.path} is another program's SQLite database (tables {shown}), not a benchgen results "
                "store; give the run directory a benchgen run wrote"
            )

    def close(self) -> None:
        self.conn.close()

    def checkpoint_wal(self) -> None:
        """Fold the write-ahead log into ``results.sqlite``: committed episodes live in the
        ``-wal`` file until then, so a copy of ``results.sqlite`` alone would miss them. Called at
        every unit's end and when a run stops."""
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    # -- units ---------------------------------------------------------------------------
    def add_units(self, units: Iterable[Unit]) -> None:
        with self.conn:
            for u in units:
                self.conn.execute(
                    "INSERT OR IGNORE INTO units (unit_id, ordinal, phase, tasks, seed, budget_frames, "
                    "init_checkpoint, learn) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        u.unit_id,
                        u.ordinal,
                        u.phase,
                        json.dumps(u.tasks),
                        u.seed,
                        u.budget_frames,
                        u.init_checkpoint,
                        int(u.learn),
                    ),
                )

    def units(self) -> list[Unit]:
        rows = self.conn.execute("SELECT * FROM units ORDER BY ordinal").fetchall()
        return [self._unit(r) for r in rows]

    def unit(self, unit_id: str) -> Unit:
        row = self.conn.execute("SELECT * FROM units WHERE unit_id = ?", (unit_id,)).fetchone()
        if row is None:
            raise KeyError(unit_id)
        return self._unit(row)

    @staticmethod
    def _unit(r: sqlite3.Row) -> Unit:
        _check_unit_row(r)
        return Unit(
            unit_id=r["unit_id"],
            ordinal=r["ordinal"],
            phase=r["phase"],
            tasks=json.loads(r["tasks"]),
            seed=r["seed"],
            budget_frames=r["budget_frames"],
            init_checkpoint=r["init_checkpoint"],
            learn=bool(r["learn"]),
            status=r["status"],
            frames_done=r["frames_done"],
            last_checkpoint=r["last_checkpoint"],
            last_checkpoint_frames=r["last_checkpoint_frames"],
            retries=r["retries"],
        )

    def update_unit(self, unit_id: str, **fields: Any) -> None:
        if not fields:
            return
        cols = ", ".join(f"{k} = ?" for k in fields)
        with self.conn:
            self.conn.execute(f"UPDATE units SET {cols} WHERE unit_id = ?", (*fields.values(), unit_id))

    def set_init_checkpoint(self, unit_ids: Iterable[str], path: str) -> None:
        with self.conn:
            for uid in unit_ids:
                self.conn.execute("UPDATE units SET init_checkpoint = ? WHERE unit_id = ?", (path, uid))

    # -- episodes ------------------------------------------------------------------------
    def next_episode_numbers(self, unit_id: str) -> dict[str, int]:
        rows = self.conn.execute(
            "SELECT task, MAX(episode) AS m FROM episodes WHERE unit_id = ? GROUP BY task", (unit_id,)
        ).fetchall()
        return {r["task"]: r["m"] + 1 for r in rows}

    def record_episodes(self, unit: Unit, records: list[dict[str, Any]], frames_done: int) -> None:
        """Commit finished episodes and the unit's frame counter in one transaction."""
        now = time.time()
        with self.conn:
            self.conn.executemany(
                "INSERT INTO episodes (unit_id, phase, task, seed, episode, env_index, frames_total, "
                "length_frames, score, end_reason, extras, events, wall_time) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        unit.unit_id,
                        r.get("phase", unit.phase),
                        r["task"],
                        unit.seed,
                        r["episode"],
                        r["env_index"],
                        r["frames_total"],
                        r["length_frames"],
                        _encode_float(r["score"]),
                        r["end_reason"],
                        json.dumps(r.get("extras", {})),
                        json.dumps(r.get("events", [])),
                        now,
                    )
                    for r in records
                ],
            )
            self.conn.execute("UPDATE units SET frames_done = ? WHERE unit_id = ?", (frames_done, unit.unit_id))

    def episode_tally(self, unit_id: str) -> list[EpisodeTally]:
        for row in self.conn.execute("SELECT * FROM episodes WHERE unit_id = ? ORDER BY id", (unit_id,)):
            _episode(row)  # each row as benchgen wrote it, before SQLite's json_extract reads extras below
        rows = self.conn.execute(
            "SELECT phase, json_extract(extras, '$.eval_round') AS round, task, COUNT(*) AS n, "
            "SUM(length_frames) AS frames, SUM(score) AS score, MIN(frames_total) AS began FROM episodes "
            "WHERE unit_id = ? "
            "GROUP BY phase, round, task",
            (unit_id,),
        ).fetchall()
        return [
            EpisodeTally(r["phase"], r["round"], r["task"], r["n"], r["frames"], r["score"], r["began"]) for r in rows
        ]

    def record_checkpoint(self, unit_id: str, frames: int, path: str) -> None:
        with self.conn:
            self.conn.execute(
                "INSERT OR REPLACE INTO checkpoints VALUES (?, ?, ?, ?)", (unit_id, frames, path, time.time())
            )
            self.conn.execute(
                "UPDATE units SET last_checkpoint = ?, last_checkpoint_frames = ?, "
                "frames_done = MAX(frames_done, ?) WHERE unit_id = ?",
                (path, frames, frames, unit_id),
            )

    def checkpoints(self, unit_id: str | None = None) -> list[sqlite3.Row]:
        if unit_id is None:
            return self.conn.execute("SELECT * FROM checkpoints ORDER BY unit_id, frames").fetchall()
        return self.conn.execute("SELECT * FROM checkpoints WHERE unit_id = ? ORDER BY frames", (unit_id,)).fetchall()

    def episodes(self, phase: str | None = None, task: str | None = None) -> Iterator[dict[str, Any]]:
        """Episodes in recording order, extras flattened into the dict."""
        sql, args = "SELECT * FROM episodes", []
        where = []
        if phase is not None:
            where.append("phase = ?")
            args.append(phase)
        if task is not None:
            where.append("task = ?")
            args.append(task)
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY id"
        for row in self.conn.execute(sql, args):
            yield _episode(row)

    def count_episodes(self, unit_id: str | None = None) -> int:
        """Episodes recorded, in all or in one unit."""
        if unit_id is None:
            return self.conn.execute("SELECT COUNT(*) FROM episodes").fetchone()[0]
        return self.conn.execute("SELECT COUNT(*) FROM episodes WHERE unit_id = ?", (unit_id,)).fetchone()[0]

    def recent_mean(self, unit_id: str, n: int = 100) -> float:
        """Mean score of the unit's last ``n`` finite episodes in its own phase (NaN before any),
        as a unit's recorder keeps it, for progress shown from another process."""
        row = self.conn.execute(
            "SELECT AVG(score) FROM (SELECT e.score FROM episodes e JOIN units u ON u.unit_id = e.unit_id "
            "WHERE e.unit_id = ? AND e.phase = u.phase AND abs(e.score) < 1e308 ORDER BY e.id DESC LIMIT ?)",
            (unit_id, n),
        ).fetchone()
        return float("nan") if row[0] is None else float(row[0])

    def phases(self) -> set[str]:
        """The phases that recorded at least one episode (each one benchgen writes: one line if not)."""
        try:
            found = {r[0] for r in self.conn.execute("SELECT DISTINCT phase FROM episodes")}
        except sqlite3.OperationalError:
            raise  # (held by another program: the CLI says so in one line)
        except sqlite3.DatabaseError as exc:
            raise UsageError(f"{self.path} is damaged ({exc}); restore it from a copy of the run") from None
        for phase in found:
            if not is_episode_phase(phase):
                raise UsageError(
                    f"the run's {DB_NAME} holds episodes of phase {phase!r}, which benchgen never writes; the store "
                    "is damaged: restore it from a copy of the run"
                )
        return found
