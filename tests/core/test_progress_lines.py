"""Progress without a terminal (issue 29 item 3): a run whose output is captured writes plain,
parseable lines every ``--progress-every`` seconds (frames, frames/s, ETA, episodes, the recent
mean score) instead of a rich bar cut to a guessed width; a terminal still gets the bar."""

from __future__ import annotations

import io
import sqlite3

from benchgen.run.execution.progress import LINE, RunProgress
from tests.conftest import assert_usage_error, run_cli


def _lines(stderr: str) -> list[dict]:
    shown = [line for line in stderr.splitlines() if line.startswith("[progress]")]
    parsed = [LINE.match(line) for line in shown]
    assert all(parsed), [line for line, m in zip(shown, parsed) if not m]
    return [m.groupdict() for m in parsed]


def _last_scores(out, unit_label_task: str) -> list[float]:
    conn = sqlite3.connect(out / "results.sqlite")
    try:
        rows = conn.execute("SELECT score FROM episodes WHERE task = ? ORDER BY id", (unit_label_task,)).fetchall()
    finally:
        conn.close()
    return [r[0] for r in rows]


def _check_unit(lines: list[dict], total: int, scores: list[float]) -> None:
    frames = [int(x["frames"]) for x in lines]
    assert frames == sorted(frames), "frames went backwards"
    assert all(int(x["total"]) == total for x in lines)
    for x in lines:
        assert abs(float(x["pct"]) - 100 * int(x["frames"]) / total) < 0.06
    last = lines[-1]
    assert last["done"] and int(last["frames"]) == total and last["eta"] == "0:00:00"
    assert float(last["fps"]) > 0
    assert int(last["episodes"]) == len(scores)
    recent = scores[-100:]
    assert float(last["mean_score"]) == round(sum(recent) / len(recent), 2)
    moving = [x for x in lines if x["fps"] != "-" and not x["done"]]
    for x in moving:  # the ETA is the frames left at the rate shown
        h, m, s = map(int, x["eta"].split(":"))
        left = (total - int(x["frames"])) / float(x["fps"])
        assert abs(h * 3600 + m * 60 + s - left) <= 1 + 0.01 * left


def test_captured_run_writes_parseable_lines_every_n_seconds(tmp_path):
    out = tmp_path / "run"
    total = 60_000
    proc = run_cli(
        "run", "toy", "random", "--tasks", "count-80", "--frames", total, "--progress-every", "0.05", "--out", out
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "━" not in proc.stderr and "\r" not in proc.stderr  # no bar, no redraws
    lines = _lines(proc.stderr)
    assert len(lines) >= 3, proc.stderr  # a unit of about a second, a line every 0.05 s
    assert {x["label"] for x in lines} == {"train count-80 seed 0"}
    _check_unit(lines, total, _last_scores(out, "count-80"))
    assert not _lines(proc.stdout)  # stdout keeps the plan and the summary only


def test_parallel_units_each_get_lines_with_their_scores(tmp_path):
    out = tmp_path / "run"
    total = 8000
    proc = run_cli(
        "run", "toy", "random", "--split", "pair", "--frames", total, "--jobs", "2", "--progress-every", "0.2",
        "--out", out,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = _lines(proc.stderr)
    labels = {x["label"] for x in lines}
    assert labels == {"train count-20 seed 0", "train count-50 seed 0", "train count-80 seed 0"}
    for label in labels:
        task = label.split()[1]
        _check_unit([x for x in lines if x["label"] == label], total, _last_scores(out, task))


def test_no_progress_writes_no_lines(tmp_path):
    proc = run_cli(
        "run", "toy", "random", "--tasks", "count-20", "--frames", 2000, "--progress-every", "0", "--no-progress",
        "--out", tmp_path / "run",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "[progress]" not in proc.stderr + proc.stdout


def test_bad_interval_is_refused_in_one_line(tmp_path):
    proc = run_cli("run", "toy", "random", "--progress-every", "soon", "--out", tmp_path / "run")
    assert_usage_error(proc, "--progress-every", "soon")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class _Recorder:
    frames_done, episodes_recorded = 0, 0

    def recent_mean(self) -> float:
        return 3.0


def test_a_terminal_keeps_the_bar():
    stream = _Terminal()
    with RunProgress(every=0.0, stream=stream) as progress:
        assert not progress.plain
        progress.start_unit("u", "train pong seed 0", 1000, 0)
        recorder = _Recorder()
        for frames in (0, 500, 1000):
            recorder.frames_done = frames
            progress.tick(recorder, force=True)
        progress.finish_unit("u", done=True)
    text = stream.getvalue()
    assert "train pong seed 0" in text and "━" in text and "recent 3.0" in text  # the bar, redrawn
    assert "[progress]" not in text


def test_lines_without_a_terminal_even_at_every_tick():
    stream = io.StringIO()
    progress = RunProgress(every=0.0, stream=stream)
    assert progress.plain
    progress.start_unit("u", "train pong seed 0", 1000, 200)  # resumed at 200 frames
    recorder = _Recorder()
    for frames in (200, 600, 1000):
        recorder.frames_done = frames
        progress.tick(recorder, force=True)
    progress.finish_unit("u", done=True)
    lines = _lines(stream.getvalue())
    assert [x["frames"] for x in lines] == ["200", "600", "1000", "1000"]
    assert lines[0]["fps"] == "-" and lines[0]["eta"] == "-" and lines[0]["mean_score"] == "3.00"
    assert [x["done"] for x in lines] == [None] * 3 + [" done"]
    assert float(lines[2]["pct"]) == 100.0 and lines[2]["eta"] == "0:00:00"
