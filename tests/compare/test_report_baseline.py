"""``benchgen report --baseline`` follows the rules of ``benchgen score --baseline`` (issue 47, 4):
an unknown name or a file that is not a task,score CSV is one line and no report, where it once
gave a raw-only report with exit 0; a CSV file normalizes the report and its figures, where the
figures once looked it up again by its stem and refused it."""

from __future__ import annotations

import json

import pytest

from tests.compare.helpers import PLUGINS
from tests.conftest import cli_in_process, refused_in_process, run_cli


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A finished toy run, made once."""
    out = tmp_path_factory.mktemp("runs") / "run"
    proc = run_cli(
        "run",
        "toy",
        "random",
        "--tasks",
        "count-20",
        "--frames",
        "2000",
        "--out",
        out,
        "--no-progress",
        plugins=PLUGINS,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return out


@pytest.fixture
def run(trained, tmp_path):
    import shutil

    shutil.copytree(trained, tmp_path / "run")
    shutil.rmtree(tmp_path / "run" / "report")
    return tmp_path / "run"


@pytest.mark.parametrize(
    "baseline, fragment", [("bogus", "unknown baseline 'bogus'"), ("/etc/passwd", "needs columns task,score")]
)
def test_a_baseline_that_is_not_one_is_refused(run, capsys, baseline, fragment):
    refused_in_process(capsys, fragment, "report", run, "--baseline", baseline)
    assert not (run / "report" / "report.json").exists()


def test_a_csv_baseline_normalizes_the_report_and_its_figures(run, tmp_path, capsys):
    csv = tmp_path / "mine.csv"
    csv.write_text("task,score\ncount-20,100\n")
    code, err = cli_in_process(capsys, "report", run, "--baseline", csv)
    assert code == 0, err
    report = json.loads((run / "report" / "report.json").read_text())
    assert report["phases"]["train"]["normalized"]["baseline"] == "mine"
    assert (run / "report" / "median_normalized_train.png").is_file()


def test_raw_reports_raw_scores(run, capsys):
    code, err = cli_in_process(capsys, "report", run, "--baseline", "raw")
    assert code == 0, err
    assert (
        json.loads((run / "report" / "report.json").read_text())["phases"]["train"]["normalized"]["baseline"] == "raw"
    )
