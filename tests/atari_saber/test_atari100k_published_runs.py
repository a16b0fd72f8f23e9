"""Issue 45: Agarwal et al. 2021's released Atari 100K runs (DrQ(epsilon) and SPR, 100 a game;
SimPLe, 5) as reference tables with their runs one by one, checked against the sources' own totals;
``benchgen compare`` placing each run among them; and ``benchmarks/atari100k_aggregates.py``'s
exported score arrays read back to the same aggregates."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import scipy.stats

from benchgen.registry import _check_reference, get_registry
from benchgen.results.compare import build_comparison
from benchgen.results.compare.html import to_html
from benchgen.results.compare.render import to_markdown
from benchgen_atari_saber import published, tables
from benchgen_atari_saber.suite import AtariSaberSuite
from tests.benchmark_scripts import load
from tests.compare.helpers import make_run

ROOT = Path(__file__).resolve().parents[2]
RUNS = tables.atari100k_runs()
REFS = {t.name: t for t in published.atari100k_tables()}


def _normalized(runs: dict[str, tuple[float, ...]]) -> np.ndarray:
    rh = tables.atari100k_random_human()
    return np.stack([(np.asarray(runs[g]) - rh[g][0]) / (rh[g][1] - rh[g][0]) for g in rh], axis=1)


# --- the data against its sources -------------------------------------------------------------------


def test_the_released_runs_are_the_sources_numbers():
    rh = tables.atari100k_random_human()
    assert {a: (len(g), {len(v) for v in g.values()}) for a, g in RUNS.items() if a != "bbf"} == {
        "drq_eps": (26, {100}),
        "spr": (26, {100}),
        "simple": (26, {5}),
    }
    assert all(set(g) == set(rh) for g in RUNS.values())
    # the totals of the three JSON files (eloialonso/iris 24326aaa, results/data), summed there
    totals = {"drq_eps": 7852068.9, "spr": 11200239.62, "simple": 517120.571875}
    for agent, total in totals.items():
        assert math.fsum(math.fsum(v) for v in RUNS[agent].values()) == pytest.approx(total, abs=1e-4)
    assert RUNS["drq_eps"]["alien"][:3] == (765.0, 866.6, 822.5)
    assert RUNS["spr"]["alien"][:2] == (714.3, 860.3)


def test_drq_eps_runs_give_the_published_means_and_iris_table_1s_aggregates():
    means = tables.atari100k_table("drq_eps2021")["drq_eps"]
    for game, runs in RUNS["drq_eps"].items():  # the table's per-game means, to their 0.01
        assert sum(runs) / len(runs) == pytest.approx(means[game], abs=0.005)
    printed = {(a.subject, a.quantity): a.value for a in tables.atari100k_printed_aggregates()}
    matrix = _normalized(RUNS["drq_eps"])
    assert matrix.mean() == pytest.approx(printed[("drq_eps", "mean")], abs=0.0005)  # IRIS Table 1: 0.465
    assert np.median(matrix.mean(axis=0)) == pytest.approx(printed[("drq_eps", "median")], abs=0.0005)  # 0.313
    zero = tables.atari100k_table("drq_eps2021")["runs_at_zero"]  # the runs scoring 0, counted in the same file
    assert {g: sum(s == 0 for s in RUNS["drq_eps"][g]) for g in zero} == {g: int(n) for g, n in zero.items()}


def test_bbf_runs_are_the_released_files_and_near_the_papers_table():
    bbf = RUNS["bbf"]
    # RR8_BBF.csv (google-research 5e786838): 20 runs a game, then 40 with some games' rows absent
    short = {"alien": 56, "assault": 56, "asterix": 56, "bank_heist": 52, "breakout": 56, "demon_attack": 56}
    short |= {"frostbite": 56, "hero": 52, "kangaroo": 56, "krull": 56, "pong": 56}
    assert {g: len(v) for g, v in bbf.items()} == {g: short.get(g, 60) for g in tables.atari100k_random_human()}
    assert bbf["alien"][:2] == (1032.5, 1428.1) and bbf["up_n_down"][-1] == 8606.7  # the file's first and last
    assert math.fsum(math.fsum(v) for v in bbf.values()) == pytest.approx(12411565.03, abs=0.005)  # as transcribed
    table = tables.atari100k_table("bbf2023")["bbf"]
    for game, runs in bbf.items():  # the paper's table averages other runs: within 14% a game
        assert sum(runs) / len(runs) == pytest.approx(table[game], rel=0.14)
    rh = tables.atari100k_random_human()
    norm = [(sum(v) / len(v) - rh[g][0]) / (rh[g][1] - rh[g][0]) for g, v in bbf.items()]
    assert np.mean(norm) == pytest.approx(2.2380, abs=1e-4) and np.median(norm) == pytest.approx(0.8799, abs=1e-4)


def test_simple_runs_are_spr_table_1s_simple_where_spr_prints_them():
    spr = tables.atari100k_table("spr2021")["simple"]
    same = [g for g, v in RUNS["simple"].items() if abs(sum(v) / 5 - spr[g]) <= 0.05]
    assert len(same) == 14 and {"alien", "crazy_climber", "road_runner"} <= set(same)


def test_tables_carry_their_runs():
    drq = REFS["atari100k_drq_eps"]
    assert drq.runs["alien"] == list(RUNS["drq_eps"]["alien"])
    for agent in ("spr", "simple"):
        table = REFS[f"atari100k_{agent}_runs"]
        assert table.scores["alien"] == pytest.approx(sum(RUNS[agent]["alien"]) / len(RUNS[agent]["alien"]))
        assert "Agarwal et al. 2021" in table.source and table.protocol == {"protocol": "atari100k"}
        _check_reference(AtariSaberSuite(), table)
    assert not REFS["atari100k_der"].runs  # means only
    names = {"atari100k_spr_runs", "atari100k_simple_runs", "atari100k_bbf_runs"}
    assert names <= set(get_registry().reference_scores(AtariSaberSuite()))
    _check_reference(AtariSaberSuite(), REFS["atari100k_bbf_runs"])


# --- benchgen compare: each run among the published runs ---------------------------------------------


def _atari100k_run(root: Path) -> dict[str, list[float]]:
    reg = get_registry()
    if "atari_saber" not in reg.suites:
        pytest.skip("the atari_saber plugin is not installed")
    games = {"alien": [700.0, 1200.0], "freeway": [20.3, 0.0], "hero": [3135.0, 9000.0]}
    make_run(
        root / "dqn",
        "dqn",
        {s: {g: [v[s]] for g, v in games.items()} for s in (0, 1)},
        budget=400_000,
        protocol={"suite": "atari_saber", "protocol": "atari100k", "sticky_action_probability": 0.0},
        suite="atari_saber",
        protocol_choice={"preset": "atari100k", "changes": {}},
    )
    return games


def test_compare_places_each_run_among_the_published_runs(tmp_path):
    games = _atari100k_run(tmp_path)
    result = build_comparison([tmp_path], reps=50, curve_points=2)
    section = result["published_runs"]
    assert {"atari100k_drq_eps", "atari100k_spr_runs", "atari100k_simple_runs", "atari100k_bbf_runs"} <= set(section)
    assert "atari100k_der" not in section  # means only
    drq = section["atari100k_drq_eps"]
    assert drq["runs_per_task"] == {g: 100 for g in games} and drq["matrix_runs"] == 100
    for game, scores in games.items():
        expected = [scipy.stats.percentileofscore(RUNS["drq_eps"][game], x, kind="mean") for x in scores]
        assert drq["percentiles"]["dqn"][game] == pytest.approx(expected)
    # Freeway: 0 is below every run but the published runs at exactly 0, which count one half
    zeros = sum(s == 0 for s in RUNS["drq_eps"]["freeway"])
    assert drq["percentiles"]["dqn"]["freeway"][1] == pytest.approx(50 * zeros / 100)
    # the published runs' aggregates on the compared games, with stratified-bootstrap intervals
    iqm = drq["aggregates"]["iqm"]
    assert iqm["ci_low"] <= iqm["value"] <= iqm["ci_high"]
    rh = tables.atari100k_random_human()
    matrix = np.stack([(np.asarray(RUNS["drq_eps"][g]) - rh[g][0]) / (rh[g][1] - rh[g][0]) for g in games], axis=1)
    assert iqm["value"] == pytest.approx(scipy.stats.trim_mean(matrix.ravel(), 0.25))
    poi = drq["improvement"]["dqn"]
    assert 0 <= poi["ci_low"] <= poi["value"] <= poi["ci_high"] <= 1
    assert len(drq["profile"]["profile"]) == len(result["performance_profile"]["tau"])
    assert result["performance_profile"]["published_runs"]["atari100k_drq_eps"] == drq["profile"]
    md = to_markdown(result)
    assert "## Published runs: atari100k_drq_eps" in md and "percentile of each run" in md
    page = to_html(result)
    assert "<h2>Published runs: atari100k_drq_eps</h2>" in page and 'id="published-runs-0-2"' in page


def test_runs_of_another_protocol_are_not_placed_among_them(tmp_path):
    reg = get_registry()
    if "atari_saber" not in reg.suites:
        pytest.skip("the atari_saber plugin is not installed")
    make_run(
        tmp_path / "dqn",
        "dqn",
        {s: {"alien": [700.0 + s]} for s in (0, 1)},
        budget=400_000,
        protocol={"suite": "atari_saber", "protocol": "saber", "sticky_action_probability": 0.25},
        suite="atari_saber",
    )
    result = build_comparison([tmp_path], reps=20, curve_points=2)
    assert result["published_runs"] == {}
    assert any("published runs not placed" in n and "atari100k_drq_eps" in n for n in result["notes"])


def test_compare_without_references_has_no_published_runs(tmp_path):
    _atari100k_run(tmp_path)
    result = build_comparison([tmp_path], reps=20, curve_points=2, show_references=False)
    assert result["published_runs"] == {}
    named = build_comparison(
        [tmp_path], reps=20, curve_points=2, show_references=False, references=["atari100k_spr_runs"]
    )
    assert list(named["published_runs"]) == ["atari100k_spr_runs"]


# --- the exported score arrays read back -------------------------------------------------------------


def test_game_names_round_trip_through_the_notebooks_spelling():
    script = load("atari100k_aggregates")
    names = [script.notebook_name(g) for g in tables.atari100k_random_human()]
    assert {"BankHeist", "MsPacman", "UpNDown", "KungFuMaster", "Hero", "Jamesbond", "Qbert"} <= set(names)
    assert [script.benchgen_name(n) for n in names] == list(tables.atari100k_random_human())


def test_exported_scores_read_back_give_the_same_aggregates(tmp_path):
    script = load("atari100k_aggregates")
    yardstick, _ = script.normalizer()
    episodes = script.load_episodes(ROOT / "benchmarks" / "results" / "atari100k")
    for variant in ("der", "drq_eps"):
        scores = script.score_lists(script.run_scores(episodes[variant]))
        games = [g for g in yardstick if g in scores]
        matrix = script.normalized_matrix(scores, games, yardstick)
        back = script.read_score_json(script.write_score_json(tmp_path / f"{variant}.json", scores))
        assert back == scores
        again = script.normalized_matrix(back, games, yardstick)
        np.testing.assert_array_equal(again, matrix)
        assert script.intervals(again, reps=200) == script.intervals(matrix, reps=200)
        assert script.intervals(again, reps=200, task_bootstrap=True) == script.intervals(
            matrix, reps=200, task_bootstrap=True
        )
        matrices, names = script.read_score_npz(
            script.write_score_npz(tmp_path / "s.npz", {variant: matrix}, {variant: games})
        )
        np.testing.assert_array_equal(matrices[variant], matrix)
        assert names[variant] == games
        assert script.intervals(matrices[variant], reps=200) == script.intervals(matrix, reps=200)
    # a run's task score is the mean of its evaluation episodes, as the table script has it
    alien = [float(r["score"]) for r in episodes["der"]["alien"][0] if r["phase"] == "train_eval"]
    assert len(alien) == 100 and script.run_scores(episodes["der"])["alien"][0] == pytest.approx(sum(alien) / 100)


def test_published_runs_aggregates_over_all_games():
    script = load("atari100k_aggregates")
    yardstick, refs = script.normalizer()
    games = list(yardstick)
    drq = script.intervals(script.normalized_matrix(refs["atari100k_drq_eps"].runs, games, yardstick), reps=200)
    assert drq["mean"][0] == pytest.approx(0.4647, abs=1e-4) and drq["median"][0] == pytest.approx(0.3129, abs=1e-4)
    assert drq["iqm"][1] < drq["iqm"][0] < drq["iqm"][2]


# --- the results page and the cost -------------------------------------------------------------------


def test_wall_times_count_pauses_apart():
    """A stretch between two episode ends far longer than its frames at the run's own speed is a
    pause (a restart, the lanes stopped for CI), counted by its excess; a long episode is not."""
    script = load("atari100k_cost")

    def episode(phase, end, frames=600):
        return {"phase": phase, "wall_time": str(end), "length_frames": str(frames)}

    rows = [episode("train", t) for t in (0, 60, 120, 180)]  # 10 frames a second
    rows += [episode("train", 180 + 1800 + 60)]  # stopped for 30 minutes during an episode
    rows += [episode("train", 2040 + 600, frames=6000)]  # a long episode at the same speed
    rows += [episode("train_eval", 2640 + 30, frames=600), episode("train_eval", 2640 + 60, frames=600)]
    w = script.wall_times(rows)
    assert w == {
        "train": pytest.approx(44.0),
        "whole": pytest.approx(45.0),
        "pauses": pytest.approx(30.0),
        "train_pauses": pytest.approx(30.0),
    }
    # without episode lengths every stretch past PAUSE_S counts whole
    bare = [{"phase": "train", "wall_time": str(t)} for t in (0, 60, 120, 120 + 3600)]
    assert script.wall_times(bare)["pauses"] == pytest.approx(60.0)


def test_results_page_prints_from_the_committed_episodes(capsys):
    load("atari100k_aggregates").main(["--print", "--reps", "20", "--draws", "20"])
    page = capsys.readouterr().out
    for heading in ("## benchgen DER:", "## benchgen DrQ(eps):", "## Cost: measured wall time", "## Files"):
        assert heading in page
    assert "BBF, 52-60 runs" in page and "DER (SPR Table 1), same games, means only" in page
    assert "percentile among DrQ(eps)" in page and "training less pauses / planned" in page
