"""The Atari 100K cost table reads each run against the plan for the processor it ran on: the lanes
note that processor beside the exported episodes (``benchmarks/record_run_machine.py``, run by
``benchmarks/run_or_resume.sh`` after each export), and every committed run's row is either
recorded or says what it was inferred from."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from benchgen.machine import processor_name
from tests.benchmark_scripts import load
from tests.conftest import run_cli

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results" / "atari100k"


def test_a_finished_run_notes_the_processors_it_ran_on_and_a_run_without_them_none(tmp_path):
    script = load("record_run_machine")
    run = tmp_path / "run"
    proc = run_cli("run", "toy", "random", "--tasks", "count-20", "--frames", "2000", "--out", run, "--no-progress")
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = tmp_path / "results"
    results.mkdir()
    assert script.main([str(run), str(results / "random-count-seed0.csv")]) == 0
    assert script.read_machines(results)["random-count-seed0"]["processor"] == processor_name()
    record = json.loads((run / "run.json").read_text())
    record["machines"].append({"at": 1.0, "processor": "AMD EPYC 7R13 Processor", "cpus": 2})  # resumed elsewhere
    (run / "run.json").write_text(json.dumps(record))
    assert script.main([str(run), str(results / "random-count-seed1.csv")]) == 0
    assert script.read_machines(results)["random-count-seed1"]["processor"] == (
        f"{processor_name()} then AMD EPYC 7R13 Processor"
    )
    del record["machines"]  # a run made before benchgen recorded machines
    (run / "run.json").write_text(json.dumps(record))
    assert script.main([str(run), str(results / "random-count-seed2.csv")]) == 0
    assert set(script.read_machines(results)) == {"random-count-seed0", "random-count-seed1"}


def test_every_committed_machine_row_names_an_exported_run_and_its_source():
    with (RESULTS / "machines.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows and len({r["run"] for r in rows}) == len(rows)
    for row in rows:
        assert (RESULTS / f"{row['run']}.csv").exists(), row
        assert row["processor"] and row["source"].startswith(("recorded", "inferred: started ")), row
