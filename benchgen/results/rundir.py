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

Nothing under a run is followed out of it: every path a :class:`RunDir` hands out for writing is
checked to stay inside the run directory once symbolic links are resolved (:meth:`RunDir.inside`),
unit ids read from the store are plain names (:func:`~benchgen.results.store.check_unit_id`), the
files named after stored data (the report's plots per phase, the videos per task) are named through
:func:`safe_file_name` and :meth:`RunDir.output_file`, and
the small files benchgen writes in place (``run.lock``, ``worker.pid``) are opened without
following a link (``O_NOFOLLOW``); the others are written beside and renamed into place
(:func:`write_atomically`), which replaces a link rather than what it points to.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import re
import shutil
import stat
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from benchgen.errors import UsageError
from benchgen.machine import machine_facts
from benchgen.results.integrity import check_invariants
from benchgen.results.record import RUN_FILE, RunRecord, check_units_against
from benchgen.results.store import DB_NAME, ResultsStore, Unit, check_unit_id

CHECKPOINT_FILE = "checkpoint.json"
PID_FILE = "worker.pid"
LOCK_FILE = "run.lock"


def open_no_follow(path: Path, mode: str = "r+"):
    """``path`` opened for reading and writing (created if missing), never through a symbolic
    link: one-line ``UsageError`` if it is one (or is not a regular file)."""
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        if Path(path).is_symlink():
            raise UsageError(
                f"{path} is a symbolic link; benchgen does not write through links in a run directory: "
                "remove the link and try again"
            ) from None
        raise UsageError(f"cannot open {path} ({exc.strerror or exc}); give a writable run directory") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UsageError(f"{path} is not a regular file; remove it and try again")
    os.set_blocking(fd, True)
    return os.fdopen(fd, mode)


@contextlib.contextmanager
def _held(path: Path, busy: str):
    """An exclusive ``flock`` on ``path`` holding this process's pid, for the ``with`` block; a
    one-line ``UsageError`` (``busy`` with ``{holder}`` filled in) if another process holds it.
    Written by hand: ``fcntl.flock`` is the whole mechanism, and the lock-file libraries
    (filelock, portalocker) add nothing a run directory needs. A link at ``path`` is refused,
    not followed."""
    handle = open_no_follow(path)
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError(busy.format(holder=_holder(path, handle))) from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        yield
    finally:
        handle.close()


def _holder(path: Path, handle) -> str:
    """Who holds the lock file ``path`` (open as ``handle``): the process whose pid a writer wrote
    in it, or, when only readers hold it (a shared lock can still be taken: :meth:`RunDir.reading`, which
    writes nothing), that."""
    with open(path) as probe:
        try:
            fcntl.flock(probe, fcntl.LOCK_SH | fcntl.LOCK_NB)
            return "a `benchgen evaluate` reading it"
        except BlockingIOError:
            pass
    handle.seek(0)
    pid = handle.read().strip()
    return f"process {pid}" if pid else "another process"


@contextlib.contextmanager
def _shared(path: Path, busy: str):
    """A shared ``flock`` on ``path`` for the ``with`` block, taken without writing: readers share
    it, a writer's exclusive :func:`_held` excludes them (``busy``, with ``{holder}``, if one holds
    it). No lock file and none can be made (a read-only run): nothing can be writing there."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o644)
    except OSError:
        if Path(path).is_symlink():
            raise UsageError(
                f"{path} is a symbolic link; benchgen does not follow links in a run directory: remove the link "
                "and try again"
            ) from None
        yield  # (a read-only run: no writer can hold it)
        return
    with os.fdopen(fd) as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError(busy.format(holder=_holder(path, handle))) from None
        yield


def write_atomically(path: str | Path, write: Callable[[Path], None]) -> Path:
    """Have ``write(tmp)`` write a file next to ``path``, then rename it into place: readers see
    the old file or the new one, never half of one. One-line errors for unwritable places."""
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"{target} is a directory; give a file name")
    if not target.parent.is_dir():
        raise UsageError(f"{target.parent} does not exist; create it or give another file name")
    tmp = temporary_beside(target, "tmp")
    try:
        tmp.unlink(missing_ok=True)  # (a link left at the temporary name is not written through)
        write(tmp)
        os.replace(tmp, target)
    except OSError as exc:
        raise UsageError(f"cannot write {target} ({exc.strerror or exc}); give a writable place") from None
    finally:
        with contextlib.suppress(OSError):  # (where nothing could be written, nothing is left to remove)
            tmp.unlink(missing_ok=True)
    return target


#: what a file name made from stored data keeps; every other character becomes ``_``
_UNSAFE = re.compile(r"[^A-Za-z0-9._+=-]")
#: the longest such name, in bytes: file systems allow 255, and :func:`write_atomically` and the
#: video writer add a temporary prefix and suffix beside it
MAX_NAME_BYTES = 200


def safe_file_name(name: str) -> str:
    """``name``, made from stored data (a phase, a task id), as one plain file name: no folder
    separator, no leading dot (so never ``.`` or ``..``), nothing but letters, digits and ``._+=-``,
    at most :data:`MAX_NAME_BYTES` long (a long one keeps its start and extension, with a hash of
    the whole between, so two long names stay apart). Every file named after stored data is named
    through here, then checked by :meth:`RunDir.output_file`.

    >>> safe_file_name("mean_score_train_eval.png"), safe_file_name("x/../../escape.png")
    ('mean_score_train_eval.png', 'x_.._.._escape.png')
    >>> safe_file_name("Sonic:Zone.Act1-s0.mp4"), safe_file_name("../x")
    ('Sonic_Zone.Act1-s0.mp4', '_.._x')
    """
    cleaned = _UNSAFE.sub("_", name)
    if cleaned.startswith("."):
        cleaned = "_" + cleaned
    if len(cleaned) > MAX_NAME_BYTES:
        stem, dot, extension = cleaned.rpartition(".")
        extension = dot + extension if dot and len(extension) <= 8 else ""
        digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:12]
        cleaned = cleaned[: MAX_NAME_BYTES - len(extension) - len(digest) - 1] + "-" + digest + extension
    return cleaned or "_"


#: the longest name a file system allows in a path component (bytes; Linux, macOS, Windows)
NAME_MAX = 255


def temporary_beside(target: Path, tag: str) -> Path:
    """A hidden temporary name beside ``target`` (``.NAME.TAG-PID``) that fits where ``target``'s
    own name does: for a long name (a valid 245-byte one), its start and a hash of the whole, so
    the temporary name is no longer than the file system allows."""
    suffix = f".{tag}-{os.getpid()}"
    name = f".{target.name}{suffix}"
    if len(os.fsencode(name)) <= NAME_MAX:
        return target.with_name(name)
    digest = hashlib.sha256(os.fsencode(target.name)).hexdigest()[:12]
    room = NAME_MAX - len(suffix) - len(digest) - 2
    start = os.fsencode(target.name)[:room].decode("utf-8", "ignore")
    return target.with_name(f".{start}~{digest}{suffix}")


def _entries(folder: Path) -> list[Path]:
    """What a folder of the run holds (nothing if it is missing or not a folder)."""
    try:
        return sorted(folder.iterdir()) if folder.is_dir() else []
    except OSError:
        return []


class RunDir:
    """A run directory on disk (see the module docstring for its layout)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._store_checked = False  # (see :meth:`store`)

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

    def record(self) -> RunRecord:
        """The run's record (``run.json``, migrated from an older format); one-line error if this
        is not a run directory or the record is damaged."""
        if not self.is_run():
            raise UsageError(f"{self.path} is not a benchgen run directory (no {RUN_FILE} / {DB_NAME})")
        if self.db_file.stat().st_size == 0:
            raise UsageError(
                f"{self.db_file} is empty (0 bytes): the run's episodes are gone; restore the file "
                "from a copy of the run"
            )
        return RunRecord.read(self.meta_file)

    def meta(self) -> dict[str, Any]:
        """The run's record as plain JSON (for plugin commands that print or pass it on)."""
        return self.record().to_json()

    def check_present(self, error: BaseException | None = None) -> None:
        """One line if the directory was removed (or moved) while a run was going in it.

        ``error``, what a write inside the run just raised, counts too when a file or folder the
        run had written is gone from under it: a removal caught half-way (``rm -r`` deletes the
        unit folders before ``run.json``) is the same event, and the user is told the same."""
        if not self.meta_file.is_file():
            raise UsageError(
                f"the run directory {self.path} was removed or moved while the run was going; "
                "its episodes went with it: start the run again"
            )
        gone = _missing_path_inside(error, self.path)
        if gone is not None:
            raise UsageError(
                f"the run directory {self.path} was removed or moved while the run was going ({gone} vanished): "
                f"if it is still whole, `benchgen resume {self.path}` continues the run; otherwise start it again"
            )

    def store(self, readonly: bool = False) -> ResultsStore:
        """The run's results store (open it, use it, close it)."""
        for name in (DB_NAME, f"{DB_NAME}-wal", f"{DB_NAME}-shm"):
            self.inside(self.path / name)
        store = ResultsStore(self.db_file, readonly=readonly)
        if not self._store_checked:  # (once per RunDir: a run's loops open the store again and again)
            try:
                self._check_store(store)
            except BaseException:
                store.close()
                raise
            self._store_checked = True
        return store

    def _check_store(self, store: ResultsStore) -> None:
        """A store benchgen wrote, before any command acts on it: phases it writes only (they name
        the report's files), its invariants (:mod:`benchgen.results.integrity`), and the budget
        its units play the one the record says."""
        store.phases()
        units = store.units()  # (each row checked as it is read)
        record = self.record() if self.meta_file.is_file() else None
        check_invariants(store, exact_frames=not (record and record.external_loop))
        if record is not None:
            check_units_against(record, units, self.meta_file)

    def check_confined(self) -> None:
        """One line if any part of the run's layout (its files, ``units/*/checkpoints/*``, ``tb/*``,
        ``report``, ``videos``) leads out of the run: checked when a writer takes the run's lock,
        before it writes anything."""
        top = [RUN_FILE, DB_NAME, f"{DB_NAME}-wal", f"{DB_NAME}-shm", LOCK_FILE, "units", "tb", "report", "videos"]
        for name in top:
            self.inside(self.path / name)
        for unit in _entries(self.path / "units"):
            self.inside(unit)
            for part in (unit / "checkpoints", unit / PID_FILE):
                self.inside(part)
            for checkpoint in _entries(unit / "checkpoints"):
                self.inside(checkpoint)
        for log in _entries(self.path / "tb"):
            self.inside(log)

    def inside(self, path: str | Path) -> Path:
        """``path``, after checking that it stays inside the run directory once every symbolic
        link on the way is followed (it need not exist yet); a one-line ``UsageError`` if a link
        leads out of the run. Every path a run writes or deletes goes through here."""
        target = Path(path)
        try:
            root = self.path.resolve()
            resolved = target.resolve()
        except (OSError, RuntimeError) as exc:  # a link loop
            raise UsageError(f"{target} cannot be resolved ({exc}); remove the symbolic links in {self.path}") from None
        if resolved != root and root not in resolved.parents:
            raise UsageError(
                f"{target} leads out of the run directory {self.path} (a symbolic link to {resolved}); benchgen "
                "never follows links out of a run: put the folder or file itself there"
            )
        return target

    @contextlib.contextmanager
    def lock(self, then: str = "resume"):
        """Hold the run for this process: a second ``run``/``resume`` of the same directory gets
        one line naming the holder instead of writing beside it, and so does one started while a
        unit process of an earlier, killed ``--jobs N`` run is still finishing. The locks
        (``flock`` on ``run.lock`` and on each unit's ``worker.pid``) are released by the kernel
        when their holder dies, however it dies. ``then``: what the one line tells the user to do
        once the holder is gone (another writer than ``resume``: ``benchgen video``)."""
        self.check_confined()
        with _held(
            self.inside(self.path / LOCK_FILE),
            f"run {self.path} is in use by {{holder}}; wait for it to end or stop it, then {then}",
        ):
            for pid_file in sorted(self.path.glob(f"units/*/{PID_FILE}")):
                with _held(
                    self.inside(pid_file),
                    f"unit {pid_file.parent.name} of run {self.path} is still running in "
                    "{holder}; wait for it to end, then resume",
                ):
                    pass
            yield self

    @contextlib.contextmanager
    def reading(self, then: str):
        """Hold the run against writers while this process reads its checkpoints (``benchgen
        evaluate``): no ``run``/``resume`` can train it meanwhile (and its checkpoint retention
        delete the one being read), and a run being trained is refused in one line naming the
        holder (``then``: what the user does once it is gone). Readers share the lock, and write
        nothing into the run."""
        self.check_confined()
        with _shared(
            self.inside(self.path / LOCK_FILE),
            f"run {self.path} is in use by {{holder}}; wait for it to end or stop it, then {then}",
        ):
            for pid_file in sorted(self.path.glob(f"units/*/{PID_FILE}")):
                with _shared(
                    self.inside(pid_file),
                    f"unit {pid_file.parent.name} of run {self.path} is still running in {{holder}}; "
                    f"wait for it to end, then {then}",
                ):
                    pass
            yield self

    def unit_lock(self, unit_id: str):
        """Held by the process executing a unit for another process (``--jobs N``, Ray); see
        :meth:`lock`."""
        self.unit_dir(unit_id).mkdir(parents=True, exist_ok=True)
        return _held(self.pid_file(unit_id), f"unit {unit_id} of run {self.path} is already running in {{holder}}")

    @classmethod
    def create(cls, path: str | Path, record: RunRecord, units: Iterable[Unit]) -> RunDir:
        """Write a new run: its record and planned units. Refuses a directory that holds anything.

        The run is assembled under a temporary name beside ``path`` and renamed into place, so a
        process killed meanwhile leaves no half-made run behind."""
        target = Path(path)
        if cls(target).is_run() or (target / RUN_FILE).exists():
            raise UsageError(
                f"{target} already holds a run; continue it with `benchgen resume {target}` or pick another --out"
            )
        if target.exists() and (not target.is_dir() or any(target.iterdir())):
            raise UsageError(f"{target} is not an empty directory; pick an empty or new --out directory")
        tmp = temporary_beside(target, "creating")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            if tmp.exists():
                shutil.rmtree(tmp)
            tmp.mkdir()
        except OSError as exc:
            raise UsageError(f"cannot create the run directory {target} ({exc.strerror or exc}); pick another --out")
        try:
            try:
                record.write(tmp / RUN_FILE)
                store = ResultsStore(tmp / DB_NAME)
                try:
                    store.add_units(units)
                finally:
                    store.close()
                os.replace(tmp, target)  # an empty directory is replaced atomically too
            except OSError as exc:
                if exc.errno in (errno.ENOTEMPTY, errno.EEXIST) and cls(target).is_run():
                    # another `run --out` with the same folder made its run first: it is left whole
                    raise UsageError(
                        f"{target} was just made by another process running the same --out; continue it "
                        f"with `benchgen resume {target}` once that process ends, or pick another --out"
                    ) from None
                raise UsageError(
                    f"cannot create the run directory {target} ({exc.strerror or exc}); pick another --out"
                ) from None
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return cls(target)

    def record_forced_resume(self, changes: dict[str, Any]) -> None:
        """Note in ``run.json`` that the run was resumed (``resume --force``) under a protocol or
        software that differs from what it recorded: ``forced_resumes``, one entry per resume."""
        record = self.record()
        record.forced_resumes.append({"at": time.time(), "changes": changes})
        write_atomically(self.meta_file, record.write)

    def record_machine(self) -> None:
        """Note in ``run.json`` the machine resuming the run (``machines``) if it is not the one
        the run last ran on."""
        record, facts = self.record(), machine_facts()
        last = record.machines[-1] if record.machines and isinstance(record.machines[-1], dict) else {}
        if {k: last.get(k) for k in facts} != facts:
            record.machines.append({"at": time.time(), **facts})
            write_atomically(self.meta_file, record.write)

    def record_settings_change(self, changes: dict[str, Any], source: str = "resume --set") -> None:
        """Give the agent's config (and each task's own config) the new values of ``changes``
        (setting -> {"recorded": before, "now": after}; "recorded" None: a setting the record
        lacked), their ``source``, and note ``changes`` in ``settings_changes``, one entry per
        resume and source (``source`` kept with the entry unless it is "resume --set")."""
        values = {key: change["now"] for key, change in changes.items()}
        record = self.record()
        record.agent_config.update(values)
        record.agent_config_sources.update(dict.fromkeys(values, source))
        for task, config in record.task_agent_configs.items():
            config.update(values)
            record.task_agent_config_sources.setdefault(task, {}).update(dict.fromkeys(values, source))
        entry = {"at": time.time(), "changes": changes}
        if source != "resume --set":
            entry["source"] = source
        record.settings_changes.append(entry)
        write_atomically(self.meta_file, record.write)

    # -- units -----------------------------------------------------------------------------------
    # (each checked to stay inside the run: see :meth:`inside`)
    def unit_dir(self, unit_id: str) -> Path:
        return self.inside(self.path / "units" / check_unit_id(unit_id))

    def checkpoints_dir(self, unit_id: str) -> Path:
        return self.inside(self.unit_dir(unit_id) / "checkpoints")

    def checkpoint_dir(self, unit_id: str, frames: int) -> Path:
        return self.inside(self.checkpoints_dir(unit_id) / f"{frames:012d}")

    def pid_file(self, unit_id: str) -> Path:
        return self.inside(self.unit_dir(unit_id) / PID_FILE)

    def write_pid_file(self, unit_id: str) -> None:
        """Note this process as the unit's (a Ray worker's), without following a link."""
        self.unit_dir(unit_id).mkdir(parents=True, exist_ok=True)
        with open_no_follow(self.pid_file(unit_id)) as handle:
            handle.truncate()
            handle.write(str(os.getpid()))

    def tensorboard_dir(self, unit_id: str) -> Path:
        return self.inside(self.path / "tb" / check_unit_id(unit_id))

    def report_dir(self) -> Path:
        return self.inside(self.path / "report")

    def videos_dir(self) -> Path:
        return self.inside(self.path / "videos")

    def output_file(self, folder: Path, name: str) -> Path:
        """The file ``name`` (made from stored data: see :func:`safe_file_name`) in one of the run's
        output folders (:meth:`report_dir`, :meth:`videos_dir`), checked to stay in the run."""
        return self.inside(self.inside(folder) / safe_file_name(name))

    def owns(self, path: str | Path) -> bool:
        """Whether ``path`` is one of the files that make up the run (which no writer may replace):
        its metadata, its store and the store's journal files, its lock, its units and logs."""
        target = Path(path).resolve()
        root = self.path.resolve()
        if target.parent == root and target.name in (RUN_FILE, DB_NAME, f"{DB_NAME}-wal", f"{DB_NAME}-shm", LOCK_FILE):
            return True
        return any(target == root / d or root / d in target.parents for d in ("units", "tb"))

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


def _missing_path_inside(error: BaseException | None, root: Path) -> str | None:
    """The path (relative to ``root``) a ``FileNotFoundError`` behind ``error`` names inside
    ``root``, if there is one: raised itself, or what a writer was handling when it failed in turn."""
    seen, root = 0, Path(os.path.abspath(root))
    while error is not None and seen < 16:
        if isinstance(error, FileNotFoundError):
            for name in (error.filename, error.filename2):
                path = Path(os.path.abspath(os.fsdecode(name))) if isinstance(name, str | bytes) else None
                if path is not None and path.is_relative_to(root):
                    return str(path.relative_to(root))
        error, seen = error.__cause__ or error.__context__, seen + 1
    return None
