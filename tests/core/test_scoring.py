"""Normalization and aggregation arithmetic against hand-computed cases."""

from __future__ import annotations

import math

import pytest

from benchgen.scoring import ReferenceScores, Scorer, aggregate, capped_mean, normalize, read_score_csv, score_class


def test_normalize_hand_cases():
    assert normalize(150, 100, 200) == pytest.approx(0.5)
    assert normalize(50, 100, 200) == pytest.approx(-0.5)
    # world record below random (other baselines): |w - r| keeps improvement positive
    assert normalize(-9000, -17000, -3000) == pytest.approx(8000 / 14000)
    assert normalize(math.inf, 0, 10) == math.inf
    with pytest.raises(ValueError):
        normalize(1, 5, 5)


@pytest.mark.parametrize(
    "value, cls",
    [
        (-0.5, "failing"),
        (0.0099, "failing"),
        (0.01, "poor"),
        (0.0999, "poor"),
        (0.1, "medium"),
        (0.4999, "medium"),
        (0.5, "fair"),
        (0.9999, "fair"),
        (1.0, "superhuman"),
        (math.inf, "superhuman"),
    ],
)
def test_saber_classes_boundaries(value, cls):
    assert score_class(value) == cls


def test_capped_mean_caps_infinite_gameplay_at_two():
    assert capped_mean([0.5, math.inf, 0.1]) == pytest.approx((0.5 + 2.0 + 0.1) / 3)
    # a finite score above 200% is not capped: only infinite gameplay is
    assert capped_mean([3.0, 1.0]) == pytest.approx(2.0)


def test_aggregate_median_and_classes():
    agg = aggregate({"a": 0.005, "b": 0.05, "c": 0.2, "d": 0.7, "e": math.inf})
    assert agg["n_tasks"] == 5
    assert agg["median"] == pytest.approx(0.2)
    assert agg["mean"] == pytest.approx((0.005 + 0.05 + 0.2 + 0.7 + 2.0) / 5)
    assert agg["classes"] == {"failing": 1, "poor": 1, "medium": 1, "fair": 1, "superhuman": 1}


def test_scorer_reports_tasks_without_reference_raw_and_leaves_them_out():
    scorer = Scorer(
        {"a": 0.0, "b": 10.0, "c": 1.0}, {"world_record": ReferenceScores("world_record", {"a": 100.0, "b": 20.0})}
    )
    result = scorer.score({"a": 50.0, "b": 15.0, "c": 7.0})
    assert result["per_task"] == {"a": pytest.approx(0.5), "b": pytest.approx(0.5)}
    assert result["unnormalized"] == {"c": 7.0}
    assert result["n_tasks"] == 2 and result["raw"]["c"] == 7.0


def test_reference_agent_normalization_from_csv(tmp_path):
    ref = tmp_path / "ref.csv"
    ref.write_text("task,score\na,40\n")
    scorer = Scorer({"a": 0.0}, {})
    assert scorer.score({"a": 20.0}, str(ref))["per_task"]["a"] == pytest.approx(0.5)


def test_score_csv_reads_inf_and_level_column(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("level,score\nx,inf\ny,-3.5\n")
    assert read_score_csv(path) == {"x": math.inf, "y": -3.5}


def test_task_score_is_mean_of_last_100():
    scores = list(range(150))
    assert Scorer({}, {}).task_score(scores) == pytest.approx(sum(range(50, 150)) / 100)
