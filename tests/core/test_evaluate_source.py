"""``benchgen evaluate`` of a run that is not finished (issue 47, 3): a run being trained is
refused (its checkpoint retention would delete the checkpoint being read), training is refused
while an evaluation reads the run, and a run stopped part-way is evaluated as it is, saying how
far its agents trained, in the output and in the report."""

from __future__ import annotations

import re

from benchgen.results.rundir import RunDir
from tests.conftest import cli_in_process, refused_in_process
from tests.core.conftest import FINISHED_UNIT, unfinished_copy


def test_a_run_in_training_is_not_evaluated(finished_run, tmp_path, capsys):
    run, _ = unfinished_copy(finished_run, tmp_path)
    with RunDir(run).lock():  # as `benchgen resume` holds it while it trains
        refused_in_process(capsys, "is in use by process", "evaluate", run, "--episodes", "1", "--no-progress")
    assert not (tmp_path / "run-eval").exists()


def test_a_run_being_evaluated_is_not_trained(finished_run, tmp_path, capsys):
    run, _ = unfinished_copy(finished_run, tmp_path)
    with RunDir(run).reading(then="evaluate it"):
        refused_in_process(capsys, "benchgen evaluate", "resume", run, "--no-progress")
        with RunDir(run).reading(then="evaluate it"):  # readers share the run
            pass


def test_a_partly_trained_run_is_evaluated_and_says_so(finished_run, tmp_path, capsys):
    run, checkpoint = unfinished_copy(finished_run, tmp_path)
    code, err = cli_in_process(capsys, "evaluate", run, "--episodes", "1", "--no-progress")
    assert code == 0, err
    said = f"{FINISHED_UNIT} at {int(checkpoint.name):,} of 2,000 frames"
    assert any(line == f"not fully trained: {said}" for line in err), err
    report = (tmp_path / "run-eval" / "report" / "report.md").read_text()
    assert re.search(rf"Not fully trained.*{said}", report), report


def test_a_finished_run_says_nothing_of_the_kind(finished_run, tmp_path, capsys):
    code, err = cli_in_process(capsys, "evaluate", finished_run, "--episodes", "1", "--out", tmp_path / "e")
    assert code == 0, err
    assert not any("not fully trained" in line for line in err), err
    assert "Not fully trained" not in (tmp_path / "e" / "report" / "report.md").read_text()
