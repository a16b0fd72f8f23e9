"""Executors: N local processes and Ray; a killed worker is retried with nothing lost or doubled."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, cli_env, run_cli_subprocess, start_cli
from tests.core.test_run_resume import _check_log, _episodes


def _kill_one_worker_midway(out: Path, cmd: list[str]) -> subprocess.CompletedProcess:
    proc = subprocess.Popen(cmd, env=cli_env(), cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    killed = False
    while time.time() < deadline and not killed:
        time.sleep(0.2)
        pid_files = sorted(out.glob("units/*/worker.pid"))
        if not pid_files:
            continue
        try:
            n = len(_episodes(out))
        except sqlite3.Error:
            continue
        if n > 200:
            os.kill(int(pid_files[0].read_text()), signal.SIGKILL)
            killed = True
    assert killed, "no worker to kill"
    stdout, stderr = proc.communicate(timeout=300)
    return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)


def _units(out: Path):
    conn = sqlite3.connect(out / "results.sqlite")
    rows = conn.execute("SELECT unit_id, status, retries, frames_done, budget_frames FROM units").fetchall()
    conn.close()
    return rows


@pytest.mark.parametrize("executor", [["--jobs", "2"], ["--executor", "ray"]], ids=["local-jobs2", "ray"])
def test_killed_worker_is_retried_without_loss_or_duplicates(tmp_path, executor):
    out = tmp_path / "run"
    cmd = [
        sys.executable,
        "-m",
        "benchgen",
        "run",
        "toy",
        "random",
        "--tasks",
        "count-20,count-50",
        "--frames",
        "600000",
        "--out",
        str(out),
        "--no-progress",
        "--num-envs",
        "8",
        "--set",
        "checkpoint_every=50000",
        *executor,
    ]
    result = _kill_one_worker_midway(out, cmd)
    assert result.returncode == 0, result.stderr
    assert "1 unit retry" in result.stdout
    units = _units(out)
    assert all(status == "done" and frames == budget for _, status, _, frames, budget in units)
    assert sum(r for _, _, r, _, _ in units) == 1
    rows = _episodes(out)
    _check_log(rows)
    assert {r["unit_id"] for r in rows} == {u[0] for u in units}


def test_ray_errors_are_one_line_before_anything_is_written(tmp_path):
    out = tmp_path / "run"
    proc = run_cli_subprocess("run", "toy", "random", "--executor", "ray", "--address", "127.0.0.1:1", "--out", out)
    assert proc.returncode == 2 and "cannot reach a Ray cluster" in proc.stderr and "Traceback" not in proc.stderr
    proc = run_cli_subprocess("run", "toy", "random", "--executor", "ray", "--set", "cpus_per_unit=512", "--out", out)
    assert proc.returncode == 2 and "no Ray node can give a unit 512 CPU" in proc.stderr
    assert not out.exists()


def test_ray_not_installed_is_a_one_line_error(tmp_path):
    fake = tmp_path / "noray" / "ray"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('No module named ray')\n")
    env = cli_env()
    env["PYTHONPATH"] = os.pathsep.join([str(fake.parent), env["PYTHONPATH"]])
    proc = subprocess.run(
        [sys.executable, "-m", "benchgen", "run", "toy", "random", "--executor", "ray", "--out", str(tmp_path / "run")],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "pip install 'benchgen[ray]'" in proc.stderr
    assert not (tmp_path / "run").exists()


def test_nothing_else_imports_ray():
    for path in (REPO / "benchgen").rglob("*.py"):
        if path.name not in ("ray_cluster.py", "ray_connect.py"):
            assert "import ray" not in path.read_text(), path


def test_ray_without_address_starts_a_fresh_local_instance(tmp_path, monkeypatch):
    """No --address: a local instance of its own, whatever RAY_ADDRESS or `ray start` left behind
    (ray.init() alone would try to join those)."""
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:1")  # a cluster that does not exist
    out = tmp_path / "run"
    proc = run_cli_subprocess(
        "run",
        "toy",
        "random",
        "--tasks",
        "count-20",
        "--frames",
        "4000",
        "--executor",
        "ray",
        "--out",
        out,
        "--no-progress",
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert [u[1] for u in _units(out)] == ["done"]


def _stop_once_episodes_come(proc: subprocess.Popen, out: Path, signum: int, episodes: int) -> str:
    """Send ``signum`` to the running ``proc`` once ``out`` holds more than ``episodes`` episodes;
    its stderr, once it exited 130 with no traceback."""
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        try:
            if len(_episodes(out)) > episodes:  # the unit runs and streams its episodes to the driver
                break
        except sqlite3.Error:
            pass
        time.sleep(0.1)
    proc.send_signal(signum)
    _stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr[-3000:]
    assert "benchgen resume" in stderr and "Traceback" not in stderr, stderr[-3000:]
    return stderr


def test_ray_stops_on_sigint_like_a_local_run_and_resumes_whole(tmp_path):
    """Issue 27 item 6: SIGINT to an ``--executor ray`` run (ignored: the units ran on) stops its
    unit at its next step, which saves a checkpoint, and exits 130 like the local executor; a
    resume finishes the run with no episode lost or doubled. (SIGTERM sets the same flag; Ray's own
    SIGTERM handlers are undone when Ray starts, as test_data_parallel_runs.py's SIGTERM test shows.)"""
    out = tmp_path / "run"
    budget = 400_000  # a few seconds of the toy suite
    run = ("run", "toy", "random", "--tasks", "count-20", "--frames", budget, "--out", out, "--no-progress")
    proc = start_cli(*run, "--num-envs", "4", "--set", "checkpoint_every=20000", "--executor", "ray")
    _stop_once_episodes_come(proc, out, signal.SIGINT, 0)
    [(_, status, retries, stopped_at, _)] = _units(out)
    assert (status, retries) == ("running", 0) and 0 < stopped_at < budget  # stopped, not failed or done
    proc = run_cli_subprocess("resume", out, "--no-progress", timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    [(_, status, retries, frames, _)] = _units(out)
    assert (status, retries, frames) == ("done", 0, budget)
    _check_log(_episodes(out))
