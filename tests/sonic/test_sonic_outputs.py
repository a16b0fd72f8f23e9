"""What Sonic runs produce beyond scores, through the Sonic suite's code on the bundled Airstriker
ROM: ``benchgen video`` (the emulator's full 224x320 screen, one frame per agent step) and the
paper's Final Score in ``benchgen compare``."""

from __future__ import annotations

import json

import imageio.v3 as iio

from tests.conftest import run_cli

PLUGIN = "tests.sonic.airstriker_plugin"


def test_a_sonic_video_shows_the_full_genesis_screen(tmp_path):
    run = tmp_path / "run"
    args = ("run", "sonic_airstriker", "random", "--tasks", "airstriker-Level1", "--timesteps", "200", "--out", run)
    proc = run_cli(*args, "--no-progress", plugins=PLUGIN)
    assert proc.returncode == 0, proc.stderr[-2000:]
    proc = run_cli("video", run, "--task", "airstriker-Level1", plugins=PLUGIN)
    assert proc.returncode == 0, proc.stderr[-2000:]
    frames = iio.imread(proc.stdout.strip())
    assert frames.shape[1:] == (448 + 32, 640, 3)  # 224x320 doubled, a 28-pixel banner, padded to 16
    assert frames.shape[0] >= 2


def test_compare_shows_the_papers_final_score_beside_the_score(tmp_path):
    run = tmp_path / "runs" / "a"
    args = ("run", "sonic_airstriker", "random", "--tasks", "airstriker-Level1", "--timesteps", "300", "--out", run)
    assert run_cli(*args, "--seeds", "0,1", "--no-progress", plugins=PLUGIN).returncode == 0
    out = tmp_path / "cmp"
    proc = run_cli("compare", tmp_path / "runs", "--out", out, "--reps", "20", "--no-plots", plugins=PLUGIN)
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads((out / "compare.json").read_text())
    cell = data["per_task"]["final_score"]["airstriker-Level1"]["random"]
    assert cell["n"] == 2 and cell["mean"] >= 0  # Sonic's score: progress, never negative
    assert "Final score" in (out / "compare.md").read_text()
    assert "per-task-final-score" in (out / "compare.html").read_text()
