"""Sonic scoring: mean of all episodes per level, mean over levels, the paper's aggregates."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import pytest

import benchgen
import benchgen_sonic
from benchgen.registry import Registry
from benchgen_sonic.scoring import AggregateReference, SonicScorer, reference_tables
from benchgen_sonic.suite import SonicSuite
from tests.conftest import assert_usage_error, run_cli
from tests.fixture_plugins.toy_suite import ToySuite

PAPER = {
    "rainbow": (2748.6, 102.2),
    "jerk": (1904.0, 21.9),
    "ppo": (1488.8, 42.8),
    "ppo_joint": (3127.9, 116.9),
    "rainbow_joint": (2969.2, 170.2),
    "human": (7438.2, 624.2),
}


def test_task_score_is_the_mean_of_all_episodes():
    scorer = SonicScorer()
    episodes = [0.0] * 150 + [1000.0] * 50
    assert scorer.task_score(episodes) == pytest.approx(250.0)  # not the last-100 mean (500)
    assert scorer.final_score(episodes) == pytest.approx(500.0)
    assert math.isnan(scorer.task_score([]))


def test_aggregate_is_the_mean_over_levels():
    result = SonicScorer().score({"a": 3000.0, "b": 2000.0, "c": 1000.0})
    assert (result["n_tasks"], result["mean"], result["median"]) == (3, 2000.0, 2000.0)
    assert result["baseline"] == "human"
    assert result["fraction_of_baseline"] == pytest.approx(2000.0 / 7438.2)
    assert result["per_task"] == {"a": 3000.0, "b": 2000.0, "c": 1000.0}
    assert "3 levels: 2000.0" in SonicScorer().format_table(result)


def test_reference_tables_are_the_papers_aggregates():
    tables = {t.name: t for t in reference_tables()}
    assert {n: (t.aggregate, t.aggregate_std) for n, t in tables.items()} == PAPER
    assert all(isinstance(t, AggregateReference) and t.scores == {} for t in tables.values())
    result = SonicScorer().score({"a": 1.0}, baseline="jerk")
    assert (result["baseline_mean"], result["baseline_std"]) == PAPER["jerk"]


def test_the_plugin_gives_data_only_to_its_own_suite():
    other = type("Other", (ToySuite,), {"name": "atari_saber"})()  # another plugin's suite

    @benchgen.hookimpl
    def benchgen_suites():
        return [other]

    registry = Registry(
        plugins=[("sonic", benchgen_sonic), ("other", SimpleNamespace(benchgen_suites=benchgen_suites))], autoload=False
    )
    assert registry.splits(other) == {}
    assert registry.declared_scorer(other) is None
    assert registry.reference_scores(other) == {}
    suite = registry.suite("sonic")
    assert isinstance(registry.scorer(suite), SonicScorer)
    assert set(PAPER) <= set(registry.reference_scores(suite))  # Table 1's names, with the per-level tables


def test_suite_declares_the_protocol():
    suite = SonicSuite()
    assert (suite.budget_unit, suite.frames_per_step, suite.default_budget) == ("timesteps", 4, 1_000_000)
    assert len(suite.tasks()) == 58 and suite.default_split == "test"
    protocol = suite.protocol()
    for key, value in {
        "frame_skip": 4,
        "sticky_prob": 0.25,
        "max_timesteps": 4500,
        "max_frames": 18000,
        "progress_reward": 9000.0,
        "completion_bonus": 1000.0,
    }.items():
        assert protocol[key] == value
    assert protocol["stable_retro_version"] and protocol["end_offsets_digest"]


def test_score_command_prints_json(tmp_path):
    csv = tmp_path / "scores.csv"
    csv.write_text("task,score\nsonic1-GreenHillZone.Act2,3000\nsonic2-HillTopZone.Act2,1000\n")
    result = run_cli("score", "sonic", csv, "--json", plugins=None)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert (out["n_tasks"], out["mean"]) == (2, 2000.0)


def test_score_refuses_inf_where_the_protocol_has_no_infinite_gameplay(tmp_path):
    """Sonic's episodes end at a level's timestep cap: no score is ever infinite (issue 27, item
    12). SABER's infinite-gameplay rule keeps ``inf`` valid for the Atari suite."""
    csv = tmp_path / "scores.csv"
    csv.write_text("task,score\nsonic1-GreenHillZone.Act2,inf\n")
    assert_usage_error(run_cli("score", "sonic", csv, plugins=None), "has no infinite gameplay")
    atari = tmp_path / "atari.csv"
    atari.write_text("task,score\npong,inf\nbreakout,30\n")
    result = run_cli("score", "atari_saber", atari, "--json", plugins=None)
    assert result.returncode == 0, result.stderr
