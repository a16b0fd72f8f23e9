"""``benchgen video`` writes into a run (issue 27): its episodes, recorded under the phase
``video``, leave ``report`` and ``resume`` working, and it holds the run's lock, so a run that
is training (or being filmed) is refused in one line instead of failing on the store."""

from __future__ import annotations

import json
import os

from benchgen.phases import VIDEO as VIDEO_PHASE
from benchgen.results.rundir import RunDir
from tests.conftest import cli_in_process


def test_report_and_resume_of_a_run_with_video_episodes(finished_run, tmp_path, capsys):
    """Issue 27 item 4: they crashed with "'video' is not in list"."""
    import shutil

    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    store = RunDir(run).store()
    try:
        (unit,) = store.units()
        filmed = {"task": "count-20", "env_index": 0, "frames_total": unit.frames_done, "length_frames": 80}
        episode = max(store.next_episode_numbers(unit.unit_id).values())
        record = {**filmed, "phase": VIDEO_PHASE, "episode": episode, "score": 7.0, "end_reason": "done"}
        store.record_episodes(unit, [{**record, "extras": {"video": "videos/count-20.mp4"}}], unit.frames_done)
    finally:
        store.close()
    before = json.loads((run / "report" / "report.json").read_text())["phases"]
    code, err = cli_in_process(capsys, "report", run)
    assert code == 0, err
    after = json.loads((run / "report" / "report.json").read_text())["phases"]
    assert VIDEO_PHASE not in after and after == before  # a filmed episode is not a result
    code, err = cli_in_process(capsys, "resume", run, "--no-progress")
    assert code == 0, err


def test_video_refuses_a_run_in_use(finished_run, capsys):
    """Issue 27 item 5: filmed while the run trained, it failed on the store (IntegrityError)."""
    with RunDir(finished_run).lock():
        code, err = cli_in_process(capsys, "video", finished_run, "--task", "count-20")
    assert code == 2 and len(err) == 1, err
    assert f"is in use by process {os.getpid()}" in err[0] and "then film it" in err[0], err[0]
