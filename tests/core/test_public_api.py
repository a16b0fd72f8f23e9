"""benchgen from a training loop of one's own (``benchgen.api``), on a real SABER game: the
protocol's environment, a recording that survives ``kill -9`` and continues when the script runs
again, runs that report/export read, and the example script in ``examples/own_loop``."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from benchgen import api
from benchgen.errors import UsageError
from tests.conftest import REPO, assert_usage_error, cli_env, run_cli

LOOP = """
import sys
import numpy as np
from benchgen import api
with api.Recording(sys.argv[1], "atari_saber", "breakout", agent="scripted", budget=int(sys.argv[2]), num_envs=4,
                   config={"policy": "uniform"}) as rec:
    rng = np.random.default_rng(rec.frames_done)
    obs, _ = rec.env.reset(seed=rec.seed)
    while not rec.finished:
        obs, *_ = rec.env.step(rng.integers(rec.env.single_action_space.n, size=rec.env.num_envs))
"""


def _episodes(run: Path) -> list[tuple]:
    with sqlite3.connect(run / "results.sqlite", timeout=30) as conn:
        return list(conn.execute("SELECT episode, frames_total, score, length_frames FROM episodes ORDER BY id"))


def _loop(run: Path, budget: int) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", LOOP, str(run), str(budget)], env=cli_env(None), cwd=REPO,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def test_a_killed_loop_loses_no_episode_and_the_same_script_continues_the_run(tmp_path):
    # Breakout: uniform random play loses a game in about 500-1,200 frames (Pong: 3,000-5,000), so
    # the 4 sub-environments record 3 episodes by about 2,500 frames and the continued script more
    # well within the budget
    run, budget = tmp_path / "own", 16_000
    proc = _loop(run, budget)
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        time.sleep(0.1)
        try:
            if len(_episodes(run)) >= 3:
                break
        except sqlite3.Error:
            continue
    assert proc.poll() is None, "the loop finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    before = _episodes(run)
    again = _loop(run, budget)
    assert again.wait(timeout=300) == 0, again.stderr.read()
    after = _episodes(run)
    assert after[: len(before)] == before  # nothing recorded was lost or rewritten
    assert [e[0] for e in after] == list(range(len(after)))  # one contiguous numbering
    assert after[-1][1] <= budget + 4 * 4 and len(after) > len(before)
    with sqlite3.connect(run / "results.sqlite") as conn:
        status, frames = conn.execute("SELECT status, frames_done FROM units").fetchone()
    assert status == "done" and frames >= budget
    meta = json.loads((run / "run.json").read_text())
    assert meta["agent"] == "scripted" and meta["agent_config"] == {"policy": "uniform"}
    assert meta["protocol"]["sticky_action_probability"] == 0.25  # SABER, as the suite defines it
    assert run_cli("report", run).returncode == 0 and run_cli("export", run).returncode == 0
    assert_usage_error(run_cli("resume", run), "recorded by a training loop outside benchgen")


def test_the_loop_sees_what_the_protocol_lets_agents_see_and_another_run_is_refused(tmp_path):
    with api.Recording(tmp_path / "r", "atari_saber", "pong", budget=400, num_envs=2) as rec:
        rec.env.reset(seed=0)
        seen = set()
        while not rec.finished:
            *_, info = rec.env.step(np.zeros(2, dtype=np.int64))
            seen |= set(info)
        assert not seen & {"lives", "ram", "episode_frame_number"}  # SABER: no life information
        assert rec.frames_done == 400 and not hasattr(rec, "record_score")
    with pytest.raises(UsageError, match="holds another run"):
        api.Recording(tmp_path / "r", "atari_saber", "breakout", budget=400)
    with pytest.raises(UsageError, match="did you mean 'pong'"):
        api.Recording(tmp_path / "x", "atari_saber", "pongg")
    # issue 27 item 12: a continued run keeps the budget it was started with
    with pytest.raises(UsageError, match="a budget of 400 frames, not 800"):
        api.Recording(tmp_path / "r", "atari_saber", "pong", budget=800, num_envs=2)


def test_the_example_training_script_records_a_run_that_report_reads(tmp_path):
    out = tmp_path / "own-dqn"
    script = REPO / "examples" / "own_loop" / "dqn_atari.py"
    # a small memory and a late learning start: the script's whole loop runs (acting, learning,
    # recording, the report) in seconds, not its default budget's hours; Breakout, whose random
    # play ends a game in about 500-1,200 frames, records episodes within 6,000 frames (750 steps
    # of 2 sub-environments, the last 150 of them learning)
    args = ["--task", "breakout", "--frames", "6000", "--learning-starts", "1200", "--buffer", "1500"]
    args += ["--num-envs", "2"]
    args += ["--out", str(out), "--report"]
    proc = subprocess.run(
        [sys.executable, str(script), *args], env=cli_env(None), cwd=REPO, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (out / "report" / "report.md").is_file() and _episodes(out)
    assert json.loads((out / "run.json").read_text())["agent_config"]["lr"] == 1e-4
