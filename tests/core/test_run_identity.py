"""Runs carry an identity and their provenance (issue 18 items 9 and 10): a copied run directory
or a seed run twice counts once in a comparison, with a note; a run resumed under another
protocol or other software is refused unless forced, and a forced resume is recorded."""

from __future__ import annotations

import importlib.metadata
import json
import shutil

import pytest

from benchgen.registry import get_registry
from benchgen.results.compare import build_comparison
from tests.compare.helpers import PLUGINS, A, B, make_run
from tests.conftest import assert_usage_error, run_cli


@pytest.fixture
def compare_plugins(monkeypatch):
    from benchgen import registry

    monkeypatch.setenv("BENCHGEN_PLUGINS", PLUGINS)
    registry.reset_registry()
    return get_registry()


def _with_id(path, run_id):
    meta = json.loads((path / "run.json").read_text())
    meta["run_id"] = run_id
    (path / "run.json").write_text(json.dumps(meta))


def _toy_run(tmp_path):
    """A finished toy run's directory (random play, 400 frames)."""
    out = tmp_path / "run"
    proc = run_cli("run", "toy", "random", "--tasks", "count-20", "--frames", "400", "--out", out, "--no-progress")
    assert proc.returncode == 0, proc.stderr[-2000:]
    return out


def test_a_copied_run_counts_once(tmp_path, compare_plugins):
    make_run(tmp_path / "r" / "a", "agent_a", A)
    make_run(tmp_path / "r" / "b", "agent_b", B)
    _with_id(tmp_path / "r" / "a", "id-a")
    shutil.copytree(tmp_path / "r" / "a", tmp_path / "r" / "a-copy")
    result = build_comparison([tmp_path / "r"], compare_plugins, reps=50, curve_points=2)
    assert [r["name"] for r in result["runs"]] == ["a", "b"]
    assert any("a-copy is a copy of run a" in n for n in result["notes"])
    assert result["agents"]["agent_a"]["n_runs"] == len(A)


def test_a_seed_run_twice_counts_once(tmp_path, compare_plugins):
    make_run(tmp_path / "r" / "a1", "agent_a", A)
    make_run(tmp_path / "r" / "a2", "agent_a", {0: A[0]})  # seed 0 again, in another run
    make_run(tmp_path / "r" / "b", "agent_b", B)
    result = build_comparison([tmp_path / "r"], compare_plugins, reps=50, curve_points=2)
    assert result["agents"]["agent_a"]["n_runs"] == len(A)
    assert any("seed 0 of agent_a appears in runs a1 and a2: counted once" in n for n in result["notes"])


def test_new_runs_get_an_identity(tmp_path):
    out = _toy_run(tmp_path)
    assert len(json.loads((out / "run.json").read_text())["run_id"]) == 32


def test_resume_under_another_protocol_is_refused_unless_forced(tmp_path):
    out = _toy_run(tmp_path)
    meta = json.loads((out / "run.json").read_text())
    meta["protocol"]["max_steps"] = 12345
    meta["versions"]["gymnasium"] = "0.0.1"
    (out / "run.json").write_text(json.dumps(meta))
    proc = run_cli("resume", out, "--no-progress")
    assert_usage_error(proc, "protocol.max_steps (12345 -> ", "version.gymnasium (0.0.1 -> ")
    assert "forced_resumes" not in json.loads((out / "run.json").read_text())
    proc = run_cli("resume", out, "--no-progress", "--force")
    assert proc.returncode == 0, proc.stderr[-2000:]
    (forced,) = json.loads((out / "run.json").read_text())["forced_resumes"]
    assert forced["changes"]["protocol.max_steps"]["recorded"] == 12345
    assert forced["changes"]["version.gymnasium"]["recorded"] == "0.0.1"
    report = (out / "report" / "report.md").read_text()
    assert ", resume --force: protocol.max_steps 12345 -> " in report and "; version.gymnasium 0.0.1 -> " in report


def test_a_run_resumes_whatever_distributions_it_recorded(tmp_path):
    """A run recorded before its suite declared a library, or when benchgen recorded one it no
    longer does, resumes without --force: only versions it recorded are compared, each with the
    one installed."""
    out = _toy_run(tmp_path)
    meta = json.loads((out / "run.json").read_text())
    del meta["versions"]["pyyaml"]  # the toy suite's declared library, unknown to an older run
    meta["versions"]["pytest"] = importlib.metadata.version("pytest")  # one it recorded, declared by none now
    (out / "run.json").write_text(json.dumps(meta))
    proc = run_cli("resume", out, "--no-progress")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "forced_resumes" not in json.loads((out / "run.json").read_text())
