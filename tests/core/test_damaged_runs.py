"""A damaged run is one line, not a traceback (issue 27 item 13): a ``run.json`` that lacks an
entry every reader relies on (or holds it damaged), and a checkpoint the agent cannot load
(truncated, or another file in its place)."""

from __future__ import annotations

import json
import shutil
import sqlite3

import pytest

from tests.conftest import cli_in_process, refused_in_process
from tests.core.conftest import unfinished_copy

UNIT = "train-count-20-s0"


@pytest.mark.parametrize(
    "change, fragment",
    [
        (lambda meta: meta.pop("suite"), "lacks its 'suite' entry"),
        (lambda meta: meta.pop("run"), "lacks its 'run' entry"),
        (lambda meta: meta.update(budget="lots"), "has a damaged 'budget' entry"),
        (lambda meta: meta.update(tasks=None), "has a damaged 'tasks' entry"),
    ],
)
@pytest.mark.parametrize("command", ["report", "resume", "export"])
def test_a_run_json_without_what_readers_need_is_one_line(finished_run, tmp_path, capsys, change, fragment, command):
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    meta = json.loads((run / "run.json").read_text())
    change(meta)
    (run / "run.json").write_text(json.dumps(meta))
    refused_in_process(capsys, fragment, command, run, *(["--no-progress"] if command == "resume" else []))


@pytest.mark.parametrize(
    "damage",
    [
        lambda f: f.write_text(f.read_text()[: len(f.read_text()) // 2]),  # truncated
        lambda f: f.write_bytes(b"PK\x03\x04" + bytes(range(256))),  # a foreign (binary) file
        lambda f: f.write_text(json.dumps({"weights": [1, 2, 3]})),  # another agent's JSON
    ],
    ids=["truncated", "binary", "foreign"],
)
def test_a_checkpoint_the_agent_cannot_load_is_one_line(finished_run, tmp_path, capsys, damage):
    run, checkpoint = unfinished_copy(finished_run, tmp_path)
    damage(checkpoint / "random_agent.json")
    refused_in_process(capsys, "its last checkpoint", "resume", run, "--no-progress")


def test_resume_never_writes_into_another_programs_sqlite_file(finished_run, tmp_path, capsys):
    """Issue 27 item 12: resume added benchgen's tables (and a WAL journal) to an unrelated database."""
    run, _ = unfinished_copy(finished_run, tmp_path)
    foreign = run / "results.sqlite"
    foreign.unlink()
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
        conn.execute("INSERT INTO invoices (total) VALUES (12.5)")
    conn.close()
    before = foreign.read_bytes()
    code, err = cli_in_process(capsys, "resume", run, "--no-progress")
    assert code == 2 and len(err) == 1 and "results store" in err[0], err
    assert foreign.read_bytes() == before
    assert not (run / "results.sqlite-wal").exists()


@pytest.mark.parametrize(
    "column, value",
    [("frames_done", -5), ("budget_frames", "lots"), ("tasks", "not json"), ("last_checkpoint_frames", -1)],
)
@pytest.mark.parametrize("command", ["resume", "report"])
def test_a_unit_row_with_damaged_counts_is_one_line(finished_run, tmp_path, capsys, column, value, command):
    """A store whose unit row holds a negative count, text for a number or tasks that are not a
    list: one line naming the unit and the column (a negative frame count reached the env's seed
    as a numpy ValueError traceback)."""
    run, _ = unfinished_copy(finished_run, tmp_path)
    with sqlite3.connect(run / "results.sqlite") as conn:
        conn.execute(f"UPDATE units SET {column} = ?", (value,))
    conn.close()
    refused_in_process(capsys, f"{column} {value!r}", command, run, *(["--no-progress"] if command == "resume" else []))


@pytest.mark.parametrize(
    "column, value", [("score", "abc"), ("extras", "{{{"), ("frames_total", -3), ("length_frames", "long")]
)
@pytest.mark.parametrize("command", ["resume", "report", "export"])
def test_an_episode_row_with_a_damaged_value_is_one_line(finished_run, tmp_path, capsys, column, value, command):
    """A bit flip inside a record (or a crafted store) that SQLite's structure checks let through:
    one line naming the episode and the column, not a ValueError or JSONDecodeError traceback."""
    run, _ = unfinished_copy(finished_run, tmp_path)
    with sqlite3.connect(run / "results.sqlite") as conn:
        conn.execute(f"UPDATE episodes SET {column} = ? WHERE id = 1", (value,))
    conn.close()
    extra = {"resume": ["--no-progress"], "export": ["-o", tmp_path / "episodes.csv"]}.get(command, [])
    refused_in_process(capsys, f"has {column} {value!r}", command, run, *extra)
