"""Fixtures of the core tests."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import run_cli

#: the one unit of :func:`finished_run`
FINISHED_UNIT = "train-count-20-s0"


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    """A finished toy run (one unit, train-count-20-s0), made once per test module."""
    out = tmp_path_factory.mktemp("runs") / "run"
    proc = run_cli("run", "toy", "random", "--tasks", "count-20", "--frames", "2000", "--out", out, "--no-progress")
    assert proc.returncode == 0, proc.stderr[-2000:]
    return out


def unfinished_copy(finished_run: Path, where: Path) -> tuple[Path, Path]:
    """A copy of :func:`finished_run` with work left (its unit back at its first checkpoint, so a
    resume writes), and that checkpoint's folder."""
    run = where / "run"
    shutil.copytree(finished_run, run)
    checkpoints = run / "units" / FINISHED_UNIT / "checkpoints"
    first = min(int(p.name) for p in checkpoints.iterdir())
    with sqlite3.connect(run / "results.sqlite") as conn:
        conn.execute(
            "UPDATE units SET status = 'pending', frames_done = ?, last_checkpoint = ?, last_checkpoint_frames = ?",
            (first, f"units/{FINISHED_UNIT}/checkpoints/{first:012d}", first),
        )
    conn.close()
    return run, checkpoints / f"{first:012d}"
