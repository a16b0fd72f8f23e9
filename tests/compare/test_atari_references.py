"""SABER eq. 2 against the Atari plugin's shipped Rainbow-IQN table (skips without the plugin)."""

from __future__ import annotations

import math

import pytest

from benchgen.registry import get_registry
from benchgen.results.compare import build_comparison
from tests.compare.helpers import make_run


@pytest.fixture
def atari(tmp_path):
    reg = get_registry()
    if "atari_saber" not in reg.suites:
        pytest.skip("the atari_saber plugin is not installed")
    suite = reg.suite("atari_saber")
    games = {"alien": [3000.0], "breakout": [100.0], "atlantis": [math.inf], "double_dunk": [5.0]}
    for agent, scale in (("dqn", 1.0), ("rainbow", 2.0)):
        make_run(
            tmp_path / agent,
            agent,
            {s: {g: [v * scale * (1 + 0.1 * s) for v in vs] for g, vs in games.items()} for s in (0, 1)},
            budget=suite.default_budget,
            protocol=suite.protocol(),
            suite="atari_saber",
        )
    return tmp_path, reg.scorer(suite)


def test_rainbow_iqn_reference_rows_and_eq2(atari):
    root, scorer = atari
    result = build_comparison([root], reps=20, curve_points=2, baseline="rainbow_iqn_saber@10M")
    iqn10 = scorer.references["rainbow_iqn_saber"].by_checkpoint["10M"]
    r = scorer.random_scores
    alien = result["per_task"]["normalized"]["alien"]["dqn"]["value"]
    assert alien == pytest.approx(
        (
            (3000.0 - r["alien"]) / abs(iqn10["alien"] - r["alien"])
            + (3300.0 - r["alien"]) / abs(iqn10["alien"] - r["alien"])
        )
        / 2
    )
    # Rainbow-IQN played atlantis forever at 10M: no finite yardstick, reported raw; double_dunk has
    # no world record but a Rainbow-IQN score, so it counts against this baseline
    assert result["aggregate_tasks"] == ["alien", "breakout", "double_dunk"]
    # the published table is a row at the runs' 200M frames, next to the agents
    row = result["references"]["rainbow_iqn_saber"]
    assert row["checkpoint"] == "200M" and row["raw"]["alien"] == scorer.references["rainbow_iqn_saber"].scores["alien"]
    assert "rainbow_iqn_saber (ref)" in result["per_task"]["views"]["score"]["alien"]
    # default: world-record normalization, SABER's infinite gameplay capped at 200% in the mean
    default = build_comparison([root], reps=20, curve_points=2)
    assert default["baseline"] == "world_record" and default["aggregate_tasks"] == ["alien", "atlantis", "breakout"]
    assert default["per_task"]["normalized"]["atlantis"]["dqn"]["value"] == math.inf
