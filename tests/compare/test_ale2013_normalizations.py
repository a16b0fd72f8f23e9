"""Bellemare et al. 2013's normalizations (section 4.1) in compare, on hand-computed cases:
baseline-set normalization (the per-task range of reference tables) and inter-algorithm
normalization (the range of the agents compared)."""

from __future__ import annotations

import pytest

from benchgen.errors import UsageError
from benchgen.results.compare import build_comparison
from tests.compare.helpers import A, B, make_run


@pytest.fixture
def two_agents(tmp_path):
    make_run(tmp_path / "a", "agent_a", A)
    make_run(tmp_path / "b", "agent_b", B)
    return tmp_path


def _normalized(result, task, label):
    return result["per_task"]["normalized"][task][label]["value"]


def test_inter_algorithm_normalization_puts_the_worst_agent_at_0_and_the_best_at_1(two_agents):
    result = build_comparison([two_agents], reps=50, curve_points=2, normalization="inter-algorithm")
    # per-task means: count-20 A 30, B 10; count-50 A 40, B 30; count-80 A inf (a seed played
    # forever), B 95: no finite range, so it is left out of the normalized aggregates
    assert result["aggregate_tasks"] == ["count-20", "count-50"]
    assert _normalized(result, "count-20", "agent_a") == pytest.approx(1.0)  # seeds 10, 30, 50 -> 0, 1, 2
    assert _normalized(result, "count-20", "agent_b") == pytest.approx(0.0)  # seeds 5, 15 -> -0.25, 0.25
    assert _normalized(result, "count-50", "agent_a") == pytest.approx(1.0)
    assert result["agents"]["agent_a"]["classes"] is None  # SABER's classes need a reference score
    assert result["normalization"] == "inter-algorithm"


def test_baseline_set_normalization_uses_the_range_of_the_named_tables(two_agents):
    result = build_comparison(
        [two_agents], reps=50, curve_points=2, normalization="baseline-set", baseline_set=("random", "toy_ref")
    )
    # ranges: random 0 and toy_ref 50 / 25 / 200
    assert _normalized(result, "count-20", "agent_a") == pytest.approx((10 / 50 + 30 / 50 + 50 / 50) / 3)
    assert _normalized(result, "count-50", "agent_b") == pytest.approx((25 / 25 + 35 / 25) / 2)
    assert result["baseline"] == "baseline set (random, toy_ref)"
    with pytest.raises(UsageError, match="no table 'const_best'"):
        build_comparison([two_agents], normalization="baseline-set", baseline_set=("random", "const_best"))
    with pytest.raises(UsageError, match="two tables at least"):
        build_comparison([two_agents], normalization="baseline-set", baseline_set=("random",))


def test_random_normalization_divides_by_the_random_scores_magnitude(tmp_path):
    """Section 4.1.1: r_min = 0 and r_max = |random|; the toy suite's random scores are 0, an empty
    range on every task, so nothing can be normalized, which is said in one line."""
    make_run(tmp_path / "a", "agent_a", A)
    with pytest.raises(UsageError, match="no task can be normalized"):
        build_comparison([tmp_path], reps=20, curve_points=2, normalization="random")


def test_random_normalization_on_atari_is_the_score_over_the_random_scores_magnitude(tmp_path):
    from benchgen_atari_saber.tables import games

    random = {g.game: g.random for g in games()}
    make_run(tmp_path / "a", "agent_a", {0: {"pong": [-10.0], "breakout": [30.0]}}, suite="atari_saber")
    result = build_comparison([tmp_path], reps=20, curve_points=2, normalization="random")
    assert _normalized(result, "pong", "agent_a") == pytest.approx(-10.0 / abs(random["pong"]))
    assert _normalized(result, "breakout", "agent_a") == pytest.approx(30.0 / abs(random["breakout"]))


def test_range_normalized_scores_carry_no_saber_classes(two_agents):
    """SABER's classes (e.g. superhuman at 100%) are defined on scores normalized by a reference
    (world record, human): under a baseline set or the agents' own range, 1.0 means "the top of the
    range", so neither the per-task cells nor the report label them with a class."""
    from benchgen.results.compare.render import normalized_rows

    for how, extra in (("baseline-set", {"baseline_set": ("random", "toy_ref")}), ("inter-algorithm", {})):
        result = build_comparison([two_agents], reps=20, curve_points=2, normalization=how, **extra)
        cells = [cell for row in result["per_task"]["normalized"].values() for cell in row.values()]
        assert cells and all(cell["class"] is None for cell in cells), how
        assert all(a["classes"] is None for a in result["agents"].values())
        _head, rows = normalized_rows(result)
        shown = " ".join(" ".join(row) for row in rows)
        assert "superhuman" not in shown and "(None)" not in shown and "%" in shown, shown


def test_ale2013_score_distribution_counts_scores_at_or_above_each_threshold(two_agents):
    """Bellemare et al. 2013, section 4.2.3: "the fraction of games on which an algorithm achieves a
    certain normalized score or better". The grid's first threshold is the lowest score of all (one
    below 0 here), which every score reaches: both distributions start at 1 (counting only scores
    above it, the agent that scored it would start lower)."""
    result = build_comparison([two_agents], reps=20, curve_points=2, normalization="inter-algorithm")
    profile = result["performance_profile"]
    assert profile["counts"] == "at or above tau"
    assert profile["tau"][0] < 0  # an agent's own score, not the grid's floor of 0
    assert [profile["agents"][a]["profile"][0] for a in ("agent_a", "agent_b")] == [1.0, 1.0]
    # rliable's profiles (reference normalization) keep counting scores above tau
    assert build_comparison([two_agents], reps=20, curve_points=2)["performance_profile"]["counts"] == "above tau"
