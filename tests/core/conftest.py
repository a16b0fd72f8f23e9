"""Fixtures of the core tests."""

from __future__ import annotations

import pytest

from tests.conftest import run_cli


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    """A finished toy run (one unit, train-count-20-s0), made once per test module."""
    out = tmp_path_factory.mktemp("runs") / "run"
    proc = run_cli("run", "toy", "random", "--tasks", "count-20", "--frames", "2000", "--out", out, "--no-progress")
    assert proc.returncode == 0, proc.stderr[-2000:]
    return out
