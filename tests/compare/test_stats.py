"""The comparison's statistics against hand-computed cases, rliable's own results and scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats
from rliable import library as rly
from rliable import metrics

from benchgen.results.compare import build_comparison, stats

# agent_a of tests/compare/helpers.py, normalized (world record 100, random 0); inf = infinite gameplay
A = np.array([[0.1, 0.2, 1.5], [0.3, 0.4, math.inf], [0.5, 0.6, 1.2]])
B = np.array([[0.05, 0.25, 1.0], [0.15, 0.35, 0.9]])


def test_aggregates_hand_computed():
    # task means with inf capped at 2.0: 0.3, 0.4, (1.5 + 2 + 1.2) / 3
    point = stats.aggregate_point(A)
    assert point["median"] == pytest.approx(0.4)
    assert point["mean"] == pytest.approx((0.3 + 0.4 + 4.7 / 3) / 3)
    # 9 scores, 25% trimmed: drop 2 lowest (0.1, 0.2) and 2 highest (1.5, 2.0) -> mean of 0.3 0.4 0.5 0.6 1.2
    assert point["iqm"] == pytest.approx(3.0 / 5)
    # 1 - mean(min(score, 1)) = 1 - 5.1 / 9
    assert point["optimality_gap"] == pytest.approx(1 - 5.1 / 9)


def test_aggregates_match_rliable_with_intervals():
    capped = np.where(np.isinf(A), 2.0, A)
    mine = stats.aggregates(A, reps=300, seed=7, key="A")
    func = lambda s: np.array(
        [
            metrics.aggregate_median(s),
            metrics.aggregate_iqm(s),
            metrics.aggregate_mean(s),
            metrics.aggregate_optimality_gap(s),
        ]
    )
    with stats.seeded(7, "aggregates:A"):
        points, intervals = rly.get_interval_estimates({"A": capped}, func, reps=300)
    for i, m in enumerate(stats.METRICS):
        assert mine[m].value == pytest.approx(points["A"][i])
        assert (mine[m].low, mine[m].high) == pytest.approx((intervals["A"][0, i], intervals["A"][1, i]))
        assert mine[m].low <= mine[m].value <= mine[m].high


def test_intervals_are_reproducible_and_seeded():
    first = stats.aggregates(A, reps=200, seed=1, key="A")
    again = stats.aggregates(A, reps=200, seed=1, key="A")
    other = stats.aggregates(A, reps=200, seed=2, key="A")
    assert {m: (e.low, e.high) for m, e in first.items()} == {m: (e.low, e.high) for m, e in again.items()}
    assert {m: (e.low, e.high) for m, e in first.items()} != {m: (e.low, e.high) for m, e in other.items()}
    state = np.random.get_state()[1].copy()
    stats.aggregates(A, reps=10, seed=3)
    assert (np.random.get_state()[1] == state).all(), "the global numpy generator must be restored"


def test_probability_of_improvement_hand_computed_and_rliable():
    capped = np.where(np.isinf(A), 2.0, A)
    # per task: 5/6, 4/6, 6/6
    assert stats.probability_of_improvement(capped, B) == pytest.approx((5 / 6 + 4 / 6 + 1) / 3)
    rng = np.random.default_rng(0)
    for n_x in (3, 4, 5):  # ties, and an identical column (rliable's array_equal case)
        x = rng.integers(0, 4, size=(n_x, 6)).astype(float)
        y = rng.integers(0, 4, size=(3, 6)).astype(float)
        if n_x == 3:
            y[:, 0] = x[:, 0]
        assert stats.probability_of_improvement(x, y) == pytest.approx(metrics.probability_of_improvement(x, y))
    same = rng.random((3, 4))
    assert (
        stats.probability_of_improvement(same, same)
        == pytest.approx(0.5)
        == metrics.probability_of_improvement(same, same)
    )
    est = stats.improvement(A, B, reps=200, seed=0, key="a>b")
    with stats.seeded(0, "poi:a>b"):
        _, iv = rly.get_interval_estimates({"k": [capped, B]}, metrics.probability_of_improvement, reps=200)
    assert (est.low, est.high) == pytest.approx(tuple(np.ravel(iv["k"])))


def test_performance_profile_matches_rliable():
    taus = np.linspace(0, 2, 21)
    mine = stats.performance_profile(B, taus, reps=100, seed=0, key="B")
    with stats.seeded(0, "profile:B"):
        profiles, cis = rly.create_performance_profile({"B": B}, taus, reps=100)
    np.testing.assert_allclose(mine["profile"], profiles["B"])
    np.testing.assert_allclose(mine["ci_low"], cis["B"][0])
    np.testing.assert_allclose(mine["ci_high"], cis["B"][1])
    # infinite gameplay lies above every threshold
    assert stats.score_distribution(np.array([[math.inf, 0.5]]), np.array([0.0, 1.0, 100.0])).tolist() == [
        1.0,
        0.5,
        0.5,
    ]


def test_welch_matches_scipy():
    x, y = [10.0, 30.0, 50.0], [5.0, 15.0]
    r = stats.welch(x, y)
    t, p = scipy.stats.ttest_ind(x, y, equal_var=False)
    assert (r["t"], r["p"]) == pytest.approx((t, p))
    assert r["result"] == "tie"  # p = 0.22
    clear = stats.welch([10.0, 11.0, 12.0], [1.0, 2.0, 1.5])
    assert clear["result"] == "win" and clear["p"] < 0.05
    assert stats.welch([1.0, 2.0, 1.5], [10.0, 11.0, 12.0])["result"] == "loss"
    assert stats.welch([1.0], [2.0, 3.0])["result"] == "n/a"
    assert stats.welch([1.0, math.inf], [2.0, 3.0])["why"] == "infinite gameplay"


def test_comparison_of_synthetic_runs(two_agents):
    """The whole pipeline on run directories reproduces the hand-computed numbers."""
    result = build_comparison([two_agents], reps=200)
    assert result["labels"] == ["agent_a", "agent_b"]
    assert result["tasks"] == ["count-20", "count-50", "count-80"]
    agg = result["agents"]["agent_a"]["aggregates"]
    assert agg["median"]["value"] == pytest.approx(0.4)
    assert agg["iqm"]["value"] == pytest.approx(0.6)
    assert agg["mean"]["value"] == pytest.approx((0.3 + 0.4 + 4.7 / 3) / 3)
    assert agg["optimality_gap"]["value"] == pytest.approx(1 - 5.1 / 9)
    assert result["agents"]["agent_a"]["n_runs"] == 3
    assert result["agents"]["agent_a"]["classes"] == {"failing": 0, "poor": 0, "medium": 2, "fair": 0, "superhuman": 1}
    poi = result["probability_of_improvement"][0]
    assert (poi["x"], poi["y"]) == ("agent_a", "agent_b")
    assert poi["value"] == pytest.approx((5 / 6 + 4 / 6 + 1) / 3)
    welch = result["welch"][0]
    _, p = scipy.stats.ttest_ind([10.0, 30.0, 50.0], [5.0, 15.0], equal_var=False)
    assert welch["tasks"]["count-20"]["p"] == pytest.approx(p)
    assert welch["tasks"]["count-80"]["result"] == "n/a"
    assert "not corrected for multiple comparisons" in welch["method"]
    # the three time views: score_half is recorded by the toy suite
    assert result["views"] == ["score_half", "score"]
    assert result["per_task"]["views"]["score_half"]["count-20"]["agent_a"]["mean"] == pytest.approx(15.0)
    # reference rows have no intervals
    ref = result["references"]["toy_ref"]
    assert ref["checkpoint"] == "4000" and ref["aggregates"]["median"] == pytest.approx(0.5)
    assert result["published"]["paper_agent"]["aggregate"] == 42.0
    # same seed, same intervals
    again = build_comparison([two_agents], reps=200)
    assert again["agents"] == result["agents"]
