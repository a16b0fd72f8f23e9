"""File names made from stored data (issue 47, 1): a phase read from a run's store names the
report's plots, so a crafted or damaged one is refused when the store is read, and every such
name goes through one sanitizer and the run's containment check."""

from __future__ import annotations

import sqlite3

import pytest

from tests.conftest import refused_in_process
from tests.core.conftest import unfinished_copy


def _set_phase(run, phase: str) -> None:
    with sqlite3.connect(run / "results.sqlite") as conn:
        conn.execute("UPDATE episodes SET phase = ?", (phase,))
    conn.close()


@pytest.mark.parametrize("command", ["report", "resume"])
def test_a_crafted_phase_writes_nothing_outside_the_run(finished_run, tmp_path, capsys, command):
    """The reproduction of the issue: a phase leading out through a folder named like a plot."""
    run, _ = unfinished_copy(finished_run, tmp_path)
    _set_phase(run, "x/../../../escape")  # report/mean_score_x/../../../escape.png is tmp_path/escape.png
    for plot in ("mean_score_x", "classes_x", "median_normalized_x", "classes_by_checkpoint_x"):
        (run / "report" / plot).mkdir(parents=True)
    refused_in_process(capsys, "phase 'x/../../../escape'", command, run, *(["--no-progress"] * (command == "resume")))
    assert not list(tmp_path.glob("escape*"))


@pytest.mark.parametrize("phase", ["a/b", "", "train\nsecond line", "bogus_eval"])
def test_a_phase_benchgen_never_writes_is_refused_in_one_line(finished_run, tmp_path, capsys, phase):
    run, _ = unfinished_copy(finished_run, tmp_path)
    _set_phase(run, phase)
    refused_in_process(capsys, "the store is damaged", "report", run)


def test_a_crafted_unit_phase_is_refused(finished_run, tmp_path, capsys):
    run, _ = unfinished_copy(finished_run, tmp_path)
    with sqlite3.connect(run / "results.sqlite") as conn:
        conn.execute("UPDATE units SET phase = '../x'")
    conn.close()
    refused_in_process(capsys, "phase '../x'", "resume", run, "--no-progress")


@pytest.mark.parametrize("name", ["../x.png", "a/b.png", "..", ".", "", "/etc/passwd", "x\0y", "é" * 300 + ".png"])
def test_names_from_stored_data_stay_in_their_folder(tmp_path, name):
    from benchgen.results.rundir import RunDir, safe_file_name

    run = RunDir(tmp_path)
    folder = tmp_path / "report"
    cleaned = safe_file_name(name)
    assert "/" not in cleaned and "\0" not in cleaned and not cleaned.startswith(".")
    assert 0 < len(cleaned.encode()) <= 200
    assert run.output_file(folder, name).parent == folder


def test_long_names_stay_apart():
    from benchgen.results.rundir import safe_file_name

    assert safe_file_name("a" * 300 + "1.png") != safe_file_name("a" * 300 + "2.png")
    assert safe_file_name("a" * 300 + "1.png").endswith(".png")
