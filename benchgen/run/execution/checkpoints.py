"""A unit's agent checkpoints: when they are written, how, and which are kept.

A unit saves a resumable checkpoint at least every ``checkpoint_every`` (default budget / 20)
and at its reporting checkpoints. The newest checkpoint is kept (to resume) and so is, for each
reporting checkpoint, the first one written at or past it (to study), and, under a protocol that
scores the best policy found, the one its best evaluation round played (to re-evaluate, see
``benchgen.run.evaluation.best_policy``); the rest are deleted once a newer one is safely on disk and in the
store.
"""

from __future__ import annotations

import errno
import json
import shutil
from collections.abc import Callable
from pathlib import Path

from benchgen.agent import Agent
from benchgen.config import to_dict
from benchgen.errors import UsageError
from benchgen.results.rundir import CHECKPOINT_FILE, RunDir
from benchgen.results.store import Unit, UnitStore
from benchgen.run.planning.resolved import ResolvedRun


def save_points(r: ResolvedRun, unit: Unit) -> list[int]:
    """Frame counts at which the unit saves a resumable checkpoint."""
    if not unit.learn:
        # An evaluation unit's agent never changes: its final save is enough (a resumed one
        # restarts from its init checkpoint), not a copy of the model every budget / 20.
        return []
    total = unit.budget_frames
    every = (
        r.suite.to_frames(r.run.checkpoint_every)
        if r.run.checkpoint_every
        else max(r.suite.frames_per_step, total // 20)
    )
    points = set(range(every, total, every)) | r.reporting_frames(unit)
    return sorted(p for p in points if 0 < p < total)


class Saver:
    """Writes the unit's checkpoints; keeps, for each reporting checkpoint, the first agent
    checkpoint written at or past it (save points are crossed at the first vector step past them)."""

    def __init__(
        self,
        agent: Agent,
        r: ResolvedRun,
        store: UnitStore,
        unit: Unit,
        run_dir: RunDir,
        recorder,
        also_keep: Callable[[], set[int]] = set,
    ):
        self.agent, self.r, self.store, self.unit, self.run_dir = agent, r, store, unit, run_dir
        self.recorder = recorder
        self.pending = sorted(r.reporting_frames(unit))
        ckpt_dir = run_dir.checkpoints_dir(unit.unit_id)
        existing = sorted(int(p.name) for p in ckpt_dir.glob("*") if p.name.isdigit()) if ckpt_dir.is_dir() else []
        self.kept: set[int] = set()
        #: more frame counts whose checkpoints are kept, asked at every save (the best round's)
        self.also_keep = also_keep
        for point in list(self.pending):  # a resumed unit keeps what it kept before
            at_or_past = [f for f in existing if f >= point]
            if at_or_past and at_or_past[0] <= recorder.frames_done:
                self.kept.add(at_or_past[0])
                self.pending.remove(point)

    def save_current(self) -> None:
        """Write the agent's checkpoint at the current frame counter unless the newest one is
        there already (the agent of an evaluation round is the one on disk)."""
        if self.store.unit(self.unit.unit_id).last_checkpoint_frames != self.recorder.frames_done:
            self()

    def __call__(self) -> Path:
        frames = self.recorder.frames_done
        if any(p <= frames for p in self.pending):
            self.pending = [p for p in self.pending if p > frames]
            self.kept.add(frames)
        return write_checkpoint(
            self.agent,
            self.r,
            self.store,
            self.unit,
            self.run_dir,
            frames,
            keep_frames=frozenset(self.kept | self.also_keep()),
        )


def write_checkpoint(
    agent: Agent,
    r: ResolvedRun,
    store: UnitStore,
    unit: Unit,
    run_dir: RunDir,
    frames: int,
    keep_frames: frozenset[int] = frozenset(),
) -> Path:
    """Save the agent and the configs next to it; record it in the store last (atomic enough:
    a checkpoint directory without its store row is ignored on resume)."""
    # removed (or moved) while the run was going: recreating parts of it here would leave a
    # directory that looks like a run and is not one
    run_dir.check_present()
    path = run_dir.checkpoint_dir(unit.unit_id, frames)  # (inside the run: links out of it are refused)
    tmp = path.with_name(path.name + ".tmp")
    try:
        _remove(tmp)
        tmp.mkdir(parents=True)
        agent.save(tmp)
        _write_info(tmp, r, unit, frames)
    except BaseException as exc:
        _remove(tmp, ignore_errors=True)  # (a half-written checkpoint is never left behind)
        run_dir.check_present(exc)
        full = _disk_full(exc)
        if full is not None:
            raise UsageError(
                f"no space left to write the checkpoint {path} ({full.strerror or full}); free space, then continue "
                f"with `benchgen resume {run_dir}` (every finished episode is kept)"
            ) from None
        raise
    try:
        _remove(path)
        tmp.rename(path)
        store.record_checkpoint(unit.unit_id, frames, run_dir.relative(path))
        # Retention: the newest checkpoint (to resume) and those at reporting checkpoints (to study);
        # intermediate ones are deleted once a newer one is safely on disk and in the store.
        for old in path.parent.iterdir():
            if old != path and old.name.isdigit() and int(old.name) not in keep_frames:
                _remove(old, ignore_errors=True)
    except OSError as exc:
        run_dir.check_present(exc)  # removed while this was written: one line saying so
        raise
    return path


#: the errors of a full disk or an exhausted quota
_FULL = (errno.ENOSPC, errno.EDQUOT)


def _disk_full(exc: BaseException) -> OSError | None:
    """The disk-full ``OSError`` behind ``exc``, if one is: raised itself, or what an agent's
    writer was handling when it failed in turn (torch's ``save`` raises a ``RuntimeError`` while
    handling the ``OSError``)."""
    seen = 0
    while exc is not None and seen < 16:
        if isinstance(exc, OSError) and exc.errno in _FULL:
            return exc
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return None


def _write_info(tmp: Path, r: ResolvedRun, unit: Unit, frames: int) -> None:
    """The checkpoint's ``checkpoint.json``: what it is a checkpoint of."""
    info = {
        "unit": unit.unit_id,
        "phase": unit.phase,
        "tasks": unit.tasks,
        "seed": unit.seed,
        "frames": frames,
        "suite": r.suite.name,
        "agent": r.spec.name,
        "agent_config": to_dict(r.config_for(unit.tasks)),
        "run": to_dict(r.run),
        "protocol": r.suite.protocol(),
        "init_checkpoint": unit.init_checkpoint,
    }
    (tmp / CHECKPOINT_FILE).write_text(json.dumps(info, indent=2, default=str))


def _remove(path: Path, ignore_errors: bool = False) -> None:
    """Delete a checkpoint folder; a link (or file) in its place is unlinked, never followed."""
    try:
        if path.is_symlink() or path.is_file():
            path.unlink()
        elif path.exists():
            shutil.rmtree(path)
    except OSError:
        if not ignore_errors:
            raise
