"""``run.json`` checked to its elements (issue 47, 8): a hand edit or damage anywhere in the
record is one line naming the entry, in every command that reads it, where it once crashed
(``budget: 0``: ZeroDivisionError, ``run: {}``: KeyError) or was taken silently (a negative
budget reported as written, ``format: "2"`` called newer); and the record's budget must be the
one the store's units were planned for."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.conftest import refused_in_process, run_cli

EDITS = {
    "checkpoints": (["a"], "'checkpoints'"),
    "frames_per_step": (0, "'frames_per_step'"),
    "budget": (0, "'budget'"),
    "run": ({}, "'run'"),
    "score_views": ("abc", "'score_views'"),
    "episode_fields": (5, "'episode_fields'"),
    "tasks": ([], "'tasks'"),
    "format": ("2", "'format'"),
    "budget_unit": ("parsecs", "'budget_unit'"),
    "task_budgets": ({"count-20": -1}, "'task_budgets'"),
}


@pytest.mark.parametrize("command", ["report", "export", "resume"])
@pytest.mark.parametrize("key", sorted(EDITS) + ["tasks=[5]", "budget=-5", "split", "seeds"])
def test_a_damaged_entry_is_one_line(finished_run, tmp_path, capsys, key, command):
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    record = json.loads((run / "run.json").read_text())
    if key == "tasks=[5]":
        record["tasks"], fragment = [5], "'tasks'"
    elif key == "budget=-5":
        record["budget"], fragment = -5, "'budget'"
    elif key == "split":
        record["split"], fragment = {"name": "s", "train": "count-20", "test": []}, "'split'"
    elif key == "seeds":
        record["run"]["seeds"], fragment = ["x"], "seeds"
    else:
        record[key], fragment = EDITS[key]
    (run / "run.json").write_text(json.dumps(record))
    refused_in_process(capsys, fragment, command, run, *(["--no-progress"] * (command == "resume")))


def test_a_budget_the_units_were_not_planned_for_is_refused(finished_run, tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    record = json.loads((run / "run.json").read_text())
    record["budget"] = record["budget"] // 2
    (run / "run.json").write_text(json.dumps(record))
    refused_in_process(capsys, "planned unit train-count-20-s0 for 2,000", "report", run)


def test_the_resumes_changes_are_told_oldest_first_and_a_damaged_entry_is_left_out(finished_run):
    """``report`` lists what ``resume --set`` and ``resume --force`` changed; entries a hand edit
    broke are skipped rather than crashing the report."""
    import dataclasses

    from benchgen.results.record import RunRecord, resume_changes

    record = RunRecord.read(finished_run / "run.json")
    record = dataclasses.replace(
        record,
        forced_resumes=[{"at": 200.0, "changes": {"version.gymnasium": {"recorded": "0.0.1", "installed": "1.2.0"}}}],
        settings_changes=[
            "damaged",
            {"at": "noon", "changes": {}},
            {"at": 100, "changes": {"torch_threads": {"recorded": 0, "now": 2}, "broken": 5}},
        ],
    )
    assert resume_changes(record) == [
        "1970-01-01 00:01 UTC, resume --set: torch_threads 0 -> 2",
        "1970-01-01 00:03 UTC, resume --force: version.gymnasium 0.0.1 -> 1.2.0",
    ]


def test_a_run_records_the_machines_it_ran_on(finished_run, tmp_path, monkeypatch):
    """run.json names the processor and cores of the machine that started a run, and of each
    other machine a resume continued it on (the planner's speeds are per processor: a run's wall
    time is read against the machine it ran on)."""
    from benchgen.machine import machine_facts
    from benchgen.results import rundir
    from benchgen.results.rundir import RunDir

    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    ((started,),) = [json.loads((run / "run.json").read_text())["machines"]]
    assert {k: started[k] for k in ("processor", "cpus")} == machine_facts() and started["at"] > 0
    RunDir(run).record_machine()  # the same machine: nothing new
    assert len(json.loads((run / "run.json").read_text())["machines"]) == 1
    monkeypatch.setattr(rundir, "machine_facts", lambda: {"processor": "AMD EPYC 7R13 Processor", "cpus": 2})
    RunDir(run).record_machine()
    RunDir(run).record_machine()
    machines = json.loads((run / "run.json").read_text())["machines"]
    assert [m["processor"] for m in machines] == [started["processor"], "AMD EPYC 7R13 Processor"]
    # the report names them
    from benchgen.results.record import RunRecord, machines_ran_on

    assert machines_ran_on(RunRecord.read(run / "run.json")) == [
        f"{started['processor'] or 'processor not named'}, {started['cpus']} core{'s' * (started['cpus'] != 1)}",
        "AMD EPYC 7R13 Processor, 2 cores",
    ]
    assert run_cli("report", run).returncode == 0
    assert "Ran on: " in (run / "report" / "report.md").read_text()
    assert "; then AMD EPYC 7R13 Processor, 2 cores." in (run / "report" / "report.md").read_text()
