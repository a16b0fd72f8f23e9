"""``benchgen video`` on a real Atari game: an MP4 of the agent playing, read back, its episode
recorded like an evaluation episode; and the one-line refusals."""

from __future__ import annotations

import json
import sqlite3

import imageio.v3 as iio

from tests.conftest import assert_usage_error, run_cli


def test_a_video_is_the_full_screen_at_one_frame_per_agent_step_and_its_episode_is_recorded(tmp_path):
    run = tmp_path / "run"
    args = ("run", "atari_saber", "random", "--tasks", "pong", "--protocol", "machado2018", "--frames", "8k")
    assert run_cli(*args, "--num-envs", "2", "--out", run, "--no-progress").returncode == 0
    proc = run_cli("video", run, "--task", "pong")
    assert proc.returncode == 0, proc.stderr[-2000:]
    path = run / proc.stdout.strip().split("/run/", 1)[1]
    frames = iio.imread(path)
    with sqlite3.connect(run / "results.sqlite") as conn:
        rows = list(conn.execute("SELECT length_frames, score, extras FROM episodes WHERE phase = 'video'"))
    assert len(rows) == 1
    length, score, extras = rows[0]
    assert json.loads(extras)["video"] == f"videos/{path.name}"
    # one video frame per agent step (4 emulator frames); the 210x160 screen doubled, with a banner
    assert frames.shape[0] == length // 4
    assert frames.shape[1:] == (448, 320, 3)
    assert -21 <= score <= 21
    page = tmp_path / "cmp"
    assert run_cli("compare", run, "--out", page, "--reps", "20", "--no-plots").returncode == 0
    html = (page / "compare.html").read_text()
    assert "<h2>Videos</h2>" in html and 'src="data:video/mp4;base64,' in html  # the clip, embedded


def test_bad_video_requests_are_refused_in_one_line(tmp_path):
    run = tmp_path / "run"
    assert run_cli("run", "toy", "random", "--tasks", "count-20", "--frames", "2k", "--out", run).returncode == 0
    assert_usage_error(run_cli("video", run, "--task", "count-50"), "did not play 'count-50'")
    assert_usage_error(run_cli("video", run, "--task", "count-20"), "cannot show its screen")
    assert_usage_error(run_cli("video", run, "--task", "count-20", "--checkpoint", "999k"), "kept no checkpoint")
