"""Atari normalization: world record, human beginner, reference agent (SABER eq. 1 and 2)."""

from __future__ import annotations

import math

import pytest

from benchgen.errors import UsageError
from benchgen_atari_saber import tables
from benchgen_atari_saber.scoring import AtariScorer

SCORER = AtariScorer()
IQN = tables.rainbow_iqn_saber()


def test_world_record_normalization_arithmetic():
    # Breakout: random 1.5, world record 864
    out = SCORER.score({"breakout": 864.0, "pong": -20.34})
    assert out["baseline"] == "world_record"
    assert out["per_task"]["breakout"] == pytest.approx(1.0)
    assert out["per_task"]["pong"] == pytest.approx(0.0)
    half = SCORER.score({"breakout": 1.5 + (864 - 1.5) / 2})["per_task"]["breakout"]
    assert half == pytest.approx(0.5)
    # Skiing: lower is worse; world record -3,272 above random -16,267.91
    ski = SCORER.score({"skiing": -9_769.955})["per_task"]["skiing"]
    assert ski == pytest.approx(0.5)


def test_games_without_a_reference_are_reported_raw():
    out = SCORER.score({"tennis": -1.0, "double_dunk": 2.0, "pong": 21.0})
    assert set(out["unnormalized"]) == {"tennis", "double_dunk"} and out["n_tasks"] == 1
    human = SCORER.score({"air_raid": 5_000.0, "pong": 14.6}, baseline="human")
    assert "air_raid" in human["unnormalized"] and human["per_task"]["pong"] == pytest.approx(1.0)


def test_saber_table3_rainbow_iqn_world_record_median_and_superhuman_count():
    """SABER Table 3 (SABER column): Rainbow-IQN at 200M frames, world-record normalized over the
    58 games with a record: median 3.13%, 4 superhuman games."""
    out = SCORER.score(IQN["200M"])
    assert out["n_tasks"] == 58
    assert set(out["unnormalized"]) == {"double_dunk", "elevator_action", "tennis"}
    assert round(out["median"] * 100, 2) == 3.13
    assert out["classes"]["superhuman"] == 4
    superhuman = sorted(t for t, c in out["per_task_class"].items() if c == "superhuman")
    assert superhuman == ["asteroids", "atlantis", "defender", "up_n_down"]  # 3 infinite + Up'n Down
    # the capped mean counts the 3 infinite games as 200%
    finite = [v for v in out["per_task"].values() if math.isfinite(v)]
    assert out["mean"] == pytest.approx((sum(finite) + 3 * 2.0) / 58)


def test_reference_agent_normalization_is_saber_eq2():
    ref = IQN["200M"]
    out = SCORER.score({"pong": ref["pong"], "breakout": 1.5, "atlantis": 1e6}, baseline="rainbow_iqn_saber")
    assert out["per_task"]["pong"] == pytest.approx(1.0)  # the reference agent's own score: 100%
    assert out["per_task"]["breakout"] == pytest.approx(0.0)  # the random score: 0%
    assert "atlantis" in out["unnormalized"]  # the reference reached infinite gameplay: no yardstick
    at_10m = SCORER.score({"breakout": IQN["10M"]["breakout"]}, baseline="rainbow_iqn_saber@10M")
    assert at_10m["per_task"]["breakout"] == pytest.approx(1.0) and at_10m["baseline"] == "rainbow_iqn_saber@10M"
    assert "rainbow_iqn_saber@50M" in SCORER.baselines()
    with pytest.raises(UsageError, match="unknown baseline"):
        SCORER.reference("rainbow_iqn_saber@7M")


def test_infinite_agent_score_is_superhuman_and_capped_in_the_mean():
    out = SCORER.score({"atlantis": math.inf, "pong": -20.34})
    assert out["per_task"]["atlantis"] == math.inf and out["classes"]["superhuman"] == 1
    assert out["mean"] == pytest.approx((2.0 + 0.0) / 2)
    assert SCORER.task_score([1.0, math.inf]) == math.inf


def test_reference_tables_cover_the_csvs():
    assert set(IQN) == {"10M", "50M", "100M", "200M"}
    assert all(len(col) == 61 for col in IQN.values())
    assert IQN["200M"]["atlantis"] == math.inf and IQN["200M"]["space_invaders"] == 10110.4
    table = SCORER.references["rainbow_iqn_saber"]
    assert table.scores == IQN["200M"] and set(table.by_checkpoint) == set(IQN)
    assert len(SCORER.references["world_record"].scores) == 58
    no_human = set(tables.game_ids()) - set(SCORER.references["human"].scores)
    assert no_human == {"air_raid", "carnival", "elevator_action", "journey_escape", "pooyan"}
