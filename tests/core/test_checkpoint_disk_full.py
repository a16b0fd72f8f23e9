"""A disk that fills while a checkpoint is written (issue 47, 6): one line saying so, no
half-written checkpoint folder left, and the run resumes once there is space (the checkpoint
before it is kept). The disk is filled by an agent whose ``save`` fails as torch's does on a full
disk: a ``RuntimeError`` raised while handling the ``OSError`` (ENOSPC)."""

from __future__ import annotations

import errno
import os

import pytest

from benchgen.errors import UsageError
from benchgen.registry import get_registry
from benchgen.results.rundir import RunDir
from benchgen.run.execution.checkpoints import write_checkpoint
from benchgen.run.planning.plan import resolve_from_meta
from tests.core.conftest import FINISHED_UNIT, unfinished_copy


class FillsTheDisk:
    """An agent whose checkpoint does not fit: it writes part of a file, then fails."""

    def save(self, directory):
        (directory / "model.pt").write_bytes(b"\0" * 1000)
        try:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        except OSError:
            raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 278592 vs 278544")


def test_a_full_disk_is_one_line_and_leaves_no_partial_checkpoint(finished_run, tmp_path):
    run, kept = unfinished_copy(finished_run, tmp_path)
    run_dir = RunDir(run)
    r = resolve_from_meta(get_registry(), run_dir.record())
    store = run_dir.store()
    try:
        unit = store.unit(FINISHED_UNIT)
        with pytest.raises(UsageError) as refused:
            write_checkpoint(FillsTheDisk(), r, store, unit, run_dir, 1500)
        assert store.unit(FINISHED_UNIT).last_checkpoint_frames == int(kept.name)  # the last good one
    finally:
        store.close()
    message = str(refused.value)
    assert "no space left" in message and "benchgen resume" in message and "\n" not in message
    assert sorted(p.name for p in kept.parent.iterdir()) == sorted(
        p.name for p in (finished_run / "units" / FINISHED_UNIT / "checkpoints").iterdir()
    )  # nothing added: no 000000001500.tmp


def test_other_failures_are_not_taken_for_a_full_disk(finished_run, tmp_path):
    class Broken:
        def save(self, directory):
            raise RuntimeError("an agent's bug")

    run, kept = unfinished_copy(finished_run, tmp_path)
    run_dir = RunDir(run)
    r = resolve_from_meta(get_registry(), run_dir.record())
    store = run_dir.store()
    try:
        with pytest.raises(RuntimeError, match="an agent's bug"):
            write_checkpoint(Broken(), r, store, store.unit(FINISHED_UNIT), run_dir, 1500)
    finally:
        store.close()
    assert not (kept.parent / "000000001500.tmp").exists()
