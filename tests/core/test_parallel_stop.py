"""``--jobs N`` stops as one process does (issue 18 item 6): SIGTERM saves every unit and exits
130; after a kill -9 of the parent its unit processes stop instead of writing on, and a resume
continues with nothing lost or doubled."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

from tests.conftest import run_cli, start_cli
from tests.core.test_run_resume import _check_log, _episodes

#: frames per unit: enough that the units are still playing when the test signals them (the toy
#: random agent plays about 50K frames a second over 2 unit processes here, so 10 s or more), few enough that the
#: resume finishes the run in seconds
BUDGET_FRAMES = 500_000


def _start_and_wait_for_workers(out: Path) -> tuple[subprocess.Popen, list[int]]:
    proc = start_cli(
        "run",
        "toy",
        "random",
        "--tasks",
        "count-20,count-50",
        "--frames",
        str(BUDGET_FRAMES),
        "--out",
        str(out),
        "--no-progress",
        "--num-envs",
        "4",
        "--jobs",
        "2",
        "--set",
        "checkpoint_every=100000",
    )
    deadline = time.time() + 120
    while time.time() < deadline:
        time.sleep(0.2)
        pids = [p.read_text().strip() for p in sorted(out.glob("units/*/worker.pid"))]
        try:
            if len(pids) == 2 and all(pids) and len(_episodes(out)) > 100:
                return proc, [int(p) for p in pids]
        except sqlite3.Error:
            continue
    proc.kill()
    raise AssertionError("the two unit processes did not start")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie has exited: reaped or not, it writes nothing
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(") ")[-1][0] != "Z"
    except OSError:
        return False


def _wait_gone(pids: list[int], seconds: float = 30) -> bool:
    deadline = time.time() + seconds
    while time.time() < deadline:
        if not any(_alive(p) for p in pids):
            return True
        time.sleep(0.2)
    return False


def _resume_finishes(out: Path) -> None:
    proc = run_cli("resume", out, "--no-progress", timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    conn = sqlite3.connect(out / "results.sqlite")
    units = conn.execute("SELECT status, frames_done, budget_frames FROM units").fetchall()
    conn.close()
    assert all(status == "done" and done == budget for status, done, budget in units)
    _check_log(_episodes(out))


def test_sigterm_stops_every_unit_resumably(tmp_path):
    out = tmp_path / "run"
    proc, workers = _start_and_wait_for_workers(out)
    proc.send_signal(signal.SIGTERM)
    _stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr[-3000:]
    assert "benchgen resume" in stderr and "Traceback" not in stderr
    assert _wait_gone(workers, 5)
    _resume_finishes(out)


def test_unit_processes_stop_with_a_killed_parent(tmp_path):
    out = tmp_path / "run"
    proc, workers = _start_and_wait_for_workers(out)
    proc.kill()
    proc.communicate(timeout=60)
    assert _wait_gone(workers), "unit processes kept running after their parent was killed"
    _resume_finishes(out)


def test_sigterm_right_after_the_run_directory_is_made_stops_cleanly(tmp_path):
    """Issue 18 item 18: no window in which SIGTERM kills a run with exit 143 and no message."""
    out = tmp_path / "run"
    proc = start_cli(
        "run", "toy", "random", "--tasks", "count-20", "--frames", "4000000", "--out", str(out), "--no-progress"
    )
    for line in proc.stderr:
        if line.startswith("run directory:"):
            proc.send_signal(signal.SIGTERM)
            break
    stderr = proc.stderr.read()
    proc.wait(timeout=120)
    assert proc.returncode == 130, stderr[-2000:]
    assert "benchgen resume" in stderr and "Traceback" not in stderr
    assert (out / "run.json").is_file() and (out / "results.sqlite").is_file()  # a run, ready to resume
