"""Procgen's shipped numbers: the two normalization sets, openai's released runs, and how a run is
set beside them at its own step count."""

from __future__ import annotations

import numpy as np
import pytest

from benchgen.results.compare.references import scores_at
from benchgen.scoring import ReferenceScores, resolve_baseline
from benchgen_procgen import scoring
from benchgen_procgen.games import GAMES
from benchgen_procgen.suite import ProcgenSuite
from tests.conftest import refused_in_process


def test_the_paper_and_train_procgen_differ_only_on_jumper_and_leaper_in_easy_mode():
    paper, code = scoring.constants("paper"), scoring.constants("train_procgen")
    assert set(paper) == set(code) == {(g, m) for g in GAMES for m in ("easy", "hard")}
    differ = {key: (paper[key], code[key]) for key in paper if paper[key] != code[key]}
    assert differ == {("jumper", "easy"): ((3.0, 10.0), (1.0, 10.0)), ("leaper", "easy"): ((3.0, 10.0), (1.5, 10.0))}
    # spot values of appendix C: coinrun easy (5, 10), starpilot easy (2.5, 64), bigfish hard (0, 40)
    assert paper["coinrun", "easy"] == (5.0, 10.0) and paper["starpilot", "easy"] == (2.5, 64.0)
    assert paper["bigfish", "hard"] == (0.0, 40.0)


def test_a_run_is_normalized_with_its_protocols_mode_and_constant_set():
    scorer = ProcgenSuite().scorer()
    assert scorer.default_baseline_for({"distribution_mode": "easy", "normalization": "paper"}) == "r_max_easy_paper"
    assert scorer.default_baseline_for({"distribution_mode": "hard", "normalization": "train_procgen"}) == (
        "r_max_hard_train_procgen"
    )
    # (R - R_min) / (R_max - R_min): jumper easy at 6.5 is 0.5 with the paper's (3, 10), 0.611 with the code's (1, 10)
    assert scorer.score({"jumper": 6.5}, "r_max_easy_paper")["per_task"]["jumper"] == pytest.approx(0.5)
    assert scorer.score({"jumper": 6.5}, "r_max_easy_train_procgen")["per_task"]["jumper"] == pytest.approx(5.5 / 9)
    assert scorer.score({"coinrun:test": 7.5}, "r_max_easy_paper")["per_task"]["coinrun:test"] == pytest.approx(0.5)
    # compare and score resolve the same tables, whose R_min they carry (the scorer has no random scores)
    assert not scorer.random_scores
    assert resolve_baseline(scorer, {}, None)[1] == "r_max_easy_paper"
    assert resolve_baseline(scorer, {}, "r_max_hard_train_procgen")[1] == "r_max_hard_train_procgen"


def test_the_released_runs_are_three_per_game_and_logged_every_16384_steps():
    runs = scoring.released_runs()
    assert set(runs) == set(GAMES)
    for data in runs.values():
        assert data["train"].shape == data["test"].shape == (3, len(data["timesteps"]))
        assert data["timesteps"][0] == 16_384 and data["timesteps"][-1] == 3051 * 16_384  # 49,987,584
        assert not (data["timesteps"] % 16_384).any()
    # coinrun learns: every run's training return at 25M is far above its first update's
    coinrun = runs["coinrun"]
    at_25m = int(np.searchsorted(coinrun["timesteps"], scoring.EASY_BUDGET))
    assert coinrun["timesteps"][at_25m] == 1526 * 16_384
    assert (coinrun["train"][:, at_25m] > coinrun["train"][:, 0] + 2).all()


def test_the_published_tables_hold_the_mean_of_the_three_runs_at_25m():
    tables = {t.name: t for t in scoring.released_tables()}
    runs = scoring.released_runs()
    for which in ("train", "test"):
        table = tables[f"openai_ppo_easy200_{which}"]
        for game, data in runs.items():
            at = int(np.searchsorted(data["timesteps"], scoring.EASY_BUDGET))
            assert table.scores[game] == pytest.approx(data[which][:, at].mean())
            assert table.scores[game + ":test"] == table.scores[game]


def test_a_run_between_two_logged_steps_is_compared_with_the_interpolation_at_its_own_step():
    table = {t.name: t for t in scoring.released_tables()}["openai_ppo_easy200_test"]
    scores, label = scores_at(table, 2_000_000, "timesteps")
    expected = scoring.released_at("coinrun", "test", 2_000_000).mean()
    assert scores["coinrun"] == pytest.approx(expected) and label.startswith("~2000000")
    exact, label = scores_at(table, 16_384 * 5, "timesteps")  # a logged step: its own value
    assert label == "timesteps_81920"
    # a table that is not a dense curve is never interpolated
    sparse = ReferenceScores(name="t", scores={"a": 9.0}, by_checkpoint={"10": {"a": 1.0}, "20": {"a": 3.0}})
    assert scores_at(sparse, 15, "timesteps") == ({"a": 9.0}, "final")


def test_protocols_and_references_print_and_a_bad_protocol_value_is_one_line(capsys, tmp_path, monkeypatch):
    from tests.conftest import cli_in_process

    monkeypatch.delenv("BENCHGEN_PLUGINS", raising=False)
    code, _ = cli_in_process(capsys, "protocols", "procgen")
    assert code == 0
    bad = tmp_path / "p.yaml"
    bad.write_text("base: easy200\ndistribution_mode: memory\n")
    refused_in_process(
        capsys,
        "coinrun has no memory mode",
        "run",
        "procgen",
        "random",
        "--tasks",
        "coinrun",
        "--protocol",
        bad,
        "--plan",
    )
    bad.write_text("base: easy200\nnum_levels: true\n")
    refused_in_process(
        capsys,
        "num_levels must be a whole number",
        "run",
        "procgen",
        "random",
        "--tasks",
        "coinrun",
        "--protocol",
        bad,
        "--plan",
    )
