"""A damaged or tampered ``results.sqlite`` (issue 47, 9) is refused when it is opened, naming the
row that breaks what every store benchgen writes holds, where it was once counted silently
(missing or duplicated episodes) or believed (a unit's frame counter raised past what it played
made ``resume`` mark it done), and a page SQLite cannot read is one line, not a traceback."""

from __future__ import annotations

import shutil
import sqlite3

import pytest

from tests.conftest import refused_in_process
from tests.core.conftest import FINISHED_UNIT, unfinished_copy

TAMPERING = {
    "a missing episode": ("DELETE FROM episodes WHERE episode = 4", "episode 4 is missing"),
    "a renumbered episode": ("UPDATE episodes SET episode = 99 WHERE episode = 7", "episode 7 is missing"),
    "a raised frame counter": ("UPDATE units SET frames_done = 999999999", "counts 999,999,999 frames"),
    "an episode of no unit": (
        "INSERT INTO episodes (unit_id, phase, task, seed, episode, env_index, frames_total, length_frames, score, "
        "end_reason, wall_time) VALUES ('elsewhere', 'train', 'count-20', 0, 0, 0, 10, 10, 1.0, 'terminated', 0)",
        "belongs to unit 'elsewhere'",
    ),
}


@pytest.mark.parametrize("command", ["report", "resume", "export"])
@pytest.mark.parametrize("case", sorted(TAMPERING))
def test_a_tampered_store_is_refused(finished_run, tmp_path, capsys, case, command):
    run, _ = unfinished_copy(finished_run, tmp_path)
    sql, fragment = TAMPERING[case]
    with sqlite3.connect(run / "results.sqlite") as conn:
        if case == "a raised frame counter":
            conn.execute("UPDATE units SET status = 'running'")
        conn.execute(sql)
    conn.close()
    refused_in_process(capsys, fragment, command, run, *(["--no-progress"] * (command == "resume")))
    with sqlite3.connect(run / "results.sqlite") as conn:
        assert conn.execute("SELECT status FROM units WHERE unit_id = ?", (FINISHED_UNIT,)).fetchone()[0] != "done"
    conn.close()


@pytest.mark.parametrize("command", ["report", "resume"])
def test_an_unreadable_page_is_one_line(finished_run, tmp_path, capsys, command):
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    db = run / "results.sqlite"
    data = bytearray(db.read_bytes())
    page = 4096
    for start in range(page + 100, len(data), page):  # every page's cells but the schema's
        data[start : start + 3000] = b"\xde\xad" * 1500
    db.write_bytes(bytes(data))
    refused_in_process(capsys, "results.sqlite", command, run, *(["--no-progress"] * (command == "resume")))
