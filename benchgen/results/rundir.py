"""The run directory: the one place that knows its layout.

A run directory holds::

    run.json                              the resolved config, protocol, plugin and dependency versions
    results.sqlite (+ -wal, -shm)         the results store (units, episodes, checkpoints)
    units/<unit>/checkpoints/<frames>/    resumable agent checkpoints, each with a checkpoint.json
    units/<unit>/worker.pid               the process running the unit (parallel executors)
    tb/<unit>/                            TensorBoard logs
    report/                               what ``benchgen report`` writes

Every other module asks a :class:`RunDir` for these paths. Paths stored inside a run (checkpoint
locations) are relative to the run directory, so a run that was moved or copied still resumes.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any, Iterable

from benchgen.errors import UsageError
from benchgen.results.store import DB_NAME, ResultsStore, Unit

RUN_FILE = "run.json"
CHECKPOINT_FILE = "checkpoint.json"
PID_FILE = "worker.pid"


class RunDir:
    """A run directory on disk (see the module docstring for its layout)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"RunDir({str(self.path)!r})"

    def __str__(self) -> str:
        return str(self.path)

    # -- what makes a run ----------------------------------------------------------------------
    @property
    def meta_file(self) -> Path:
        return self.path / RUN_FILE

    @property
    def db_file(self) -> Path:
        return self.path / DB_NAME

    def is_run(self) -> bool:
        """Whether the directory holds a run (its metadata and its store)."""
        return self.meta_file.is_file() and self.db_file.is_file()

    def meta(self) -> dict[str, Any]:
        """The run's metadata (``run.json``); one-line error if this is not a run directory."""
        if not self.is_run():
            raise UsageError(f"{self.path} is not a benchgen run directory (no {RUN_FILE} / {DB_NAME})")
        try:
            meta = json.loads(self.meta_file.read_text())
        except (OSError, ValueError) as exc:
            raise UsageError(f"{self.meta_file} cannot be read ({exc}); restore it from a copy of the run")
        if not isinstance(meta, dict):
            raise UsageError(f"{self.meta_file} is not a run's metadata; restore it from a copy of the run")
        return meta

    def store(self, readonly: bool = False) -> ResultsStore:
        """The run's results store (open it, use it, close it)."""
        return ResultsStore(self.db_file, readonly=readonly)

    @classmethod
    def create(cls, path: str | Path, meta: dict[str, Any], units: Iterable[Unit]) -> "RunDir":
        """Write a new run: metadata and planned units. Refuses a directory that holds anything.

        The run is assembled under a temporary name beside ``path`` and renamed into place, so a
        process killed meanwhile leaves no half-made run behind."""
        target = Path(path)
        if cls(target).is_run() or (target / RUN_FILE).exists():
            raise UsageError(f"{target} already holds a run; continue it with `benchgen resume {target}` "
                             "or pick another --out")
        if target.exists() and (not target.is_dir() or any(target.iterdir())):
            raise UsageError(f"{target} is not an empty directory; pick an empty or new --out directory")
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.creating-{os.getpid()}")
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir()
        try:
            (tmp / RUN_FILE).write_text(json.dumps(meta, indent=2, default=str))
            store = ResultsStore(tmp / DB_NAME)
            try:
                store.add_units(units)
            finally:
                store.close()
            os.replace(tmp, target)  # an empty directory is replaced atomically too
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return cls(target)

    # -- units -----------------------------------------------------------------------------------
    def unit_dir(self, unit_id: str) -> Path:
        return self.path / "units" / unit_id

    def checkpoints_dir(self, unit_id: str) -> Path:
        return self.unit_dir(unit_id) / "checkpoints"

    def checkpoint_dir(self, unit_id: str, frames: int) -> Path:
        return self.checkpoints_dir(unit_id) / f"{frames:012d}"

    def pid_file(self, unit_id: str) -> Path:
        return self.unit_dir(unit_id) / PID_FILE

    def tensorboard_dir(self, unit_id: str) -> Path:
        return self.path / "tb" / unit_id

    def report_dir(self) -> Path:
        return self.path / "report"

    # -- paths kept in the store -------------------------------------------------------------------
    def relative(self, path: str | Path) -> str:
        """How the store keeps a path: relative to the run directory when inside it."""
        p = Path(path)
        try:
            return str(p.resolve().relative_to(self.path.resolve()))
        except ValueError:
            return str(p.resolve())

    def absolute(self, stored: str | None) -> Path | None:
        """A stored path as a usable one (relative paths are inside this run)."""
        if stored is None:
            return None
        p = Path(stored)
        return p if p.is_absolute() else self.path / p
