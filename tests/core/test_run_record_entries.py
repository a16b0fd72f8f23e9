"""``run.json`` checked to its elements (issue 47, 8): a hand edit or damage anywhere in the
record is one line naming the entry, in every command that reads it, where it once crashed
(``budget: 0``: ZeroDivisionError, ``run: {}``: KeyError) or was taken silently (a negative
budget reported as written, ``format: "2"`` called newer); and the record's budget must be the
one the store's units were planned for."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.conftest import refused_in_process

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
