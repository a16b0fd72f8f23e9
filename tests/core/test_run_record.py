"""``run.json`` has one reader and one writer (``benchgen.results.record.RunRecord``, issue 28
item 3): versioned, with runs written by older benchgen versions migrated as they are read."""

from __future__ import annotations

import json
import shutil

import pytest

from benchgen.errors import UsageError
from benchgen.results.record import RUN_FORMAT, RunRecord
from benchgen.results.rundir import RunDir
from tests.conftest import cli_in_process

#: a record as the first versions of benchgen wrote it: no format, no score views, no run id,
#: no protocol choice
OLD = {
    "run": {"suite": "atari", "agent": "random", "seeds": [0, 1]},
    "agent_config": {},
    "suite": "atari",
    "agent": "random",
    "joint": False,
    "tasks": ["pong"],
    "split": None,
    "budget": 4000,
    "budget_unit": "frames",
    "frames_per_step": 4,
    "checkpoints": [1000, 4000],
    "protocol": {"version": "1"},
    "episode_fields": ["score_5min", "lives"],
    "plugins": [],
    "versions": {},
    "created_at": 0.0,
    "command": [],
}


def test_an_old_record_is_migrated_as_it_is_read():
    record = RunRecord.from_json(dict(OLD))
    assert record.format == RUN_FORMAT
    # the time views of runs made before suites declared them: the score_* episode fields
    assert record.score_views == {"score_5min": "score_5min"}
    assert record.run_id is None and record.protocol_choice is None
    assert record.seeds == [0, 1]
    assert record.to_json()["format"] == RUN_FORMAT


def test_unknown_entries_are_kept_and_a_record_round_trips(tmp_path):
    record = RunRecord.from_json({**OLD, "note": {"by": "a later benchgen"}})
    assert record.extra == {"note": {"by": "a later benchgen"}}
    record.write(tmp_path / "run.json")
    assert json.loads((tmp_path / "run.json").read_text())["note"] == {"by": "a later benchgen"}
    assert RunRecord.read(tmp_path / "run.json") == record


def test_a_newer_format_is_refused_in_one_line():
    with pytest.raises(UsageError, match="newer than this benchgen reads"):
        RunRecord.from_json({**OLD, "format": RUN_FORMAT + 1})


def test_budget_units_convert_through_the_record():
    steps = RunRecord.from_json({**OLD, "budget_unit": "timesteps", "budget": 1000})
    assert steps.to_frames(250) == 1000 and steps.from_frames(1003) == 250
    frames = RunRecord.from_json(dict(OLD))
    assert frames.to_frames(250) == 250 and frames.from_frames(1003) == 1003


def test_a_run_written_in_the_old_format_still_reports_and_resumes(finished_run, tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    meta = json.loads((run / "run.json").read_text())
    for key in ("format", "score_views", "run_id", "protocol_choice"):
        meta.pop(key, None)
    (run / "run.json").write_text(json.dumps(meta))
    assert RunDir(run).record().format == RUN_FORMAT
    code, _ = cli_in_process(capsys, "report", str(run))
    assert code == 0
    code, _ = cli_in_process(capsys, "resume", str(run), "--no-progress")
    assert code == 0
