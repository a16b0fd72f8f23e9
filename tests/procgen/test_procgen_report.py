"""A Procgen run's report sets each game's training-level and test-level scores side by side with
the generalization gap (``Suite.held_out_evaluation``); suites whose evaluation replays the
trained tasks show no such section."""

from __future__ import annotations

import math

from benchgen.results.generalization import gaps
from tests.conftest import run_cli


def test_gaps_pair_each_phase_with_its_evaluation_phase():
    def section(scores, normalized=None):
        return {"final": {"score": scores}, "normalized": {"classes": {"x": 1}, "per_task": normalized or {}}}

    phases = {
        "train": section({"a": 8.0, "b": 4.0}, {"a": 0.6, "b": 0.2}),
        "train_eval": section({"a": 6.0, "b": 4.0, "c": 1.0}, {"a": 0.2}),
        "zeroshot": section({"a": 1.0}),  # no evaluation phase of its own: no gap
    }
    result = gaps(phases)
    assert list(result) == ["train"] and result["train"]["held_out"] == "train_eval"
    assert result["train"]["tasks"]["a"] == {
        "train": 8.0, "test": 6.0, "gap": 2.0, "train_normalized": 0.6, "test_normalized": 0.2
    }  # fmt: skip
    assert math.isnan(result["train"]["tasks"]["b"]["test_normalized"])
    assert result["train"]["mean"]["gap"] == 1.0 and result["train"]["mean"]["test_normalized"] == 0.2


def test_a_procgen_report_shows_train_test_and_the_gap(tmp_path):
    quick = tmp_path / "quick.yaml"
    quick.write_text("base: easy200\nevaluation_episodes: 2\n")
    out = tmp_path / "r"
    args = ("--tasks", "maze", "--timesteps", "1024", "--num-envs", "8", "--protocol", quick, "--out", out)
    proc = run_cli("run", "procgen", "random", *args, "--no-progress", plugins=None)
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = (out / "report" / "report.md").read_text()
    assert "## Generalization: train against train_eval" in report
    assert "| maze |" in report.split("## Generalization")[1]
