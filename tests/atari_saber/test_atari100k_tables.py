"""Atari 100K (issue 26): the papers' random and human scores as the ``human_atari100k`` baseline,
SPR's Table 1 and BBF's per-game table as reference tables, their printed aggregates recomputed from
the shipped per-game scores, and the comparison of an ``atari100k`` run (default baseline, IQM and
optimality gap with intervals, games at or above human, the papers' rows beside the run)."""

from __future__ import annotations

import json

import pytest

from benchgen.cli import main
from benchgen.registry import _check_reference, get_registry
from benchgen.results.compare import build_comparison
from benchgen.results.report import build_report
from benchgen_atari_saber import published, scoring, tables
from benchgen_atari_saber.suite import AtariSaberSuite
from tests.compare.helpers import make_run

#: Kaiser et al. 2020's 26 games, as the suite's ROM ids (the ``atari100k`` split)
GAMES = [
    "alien", "amidar", "assault", "asterix", "bank_heist", "battle_zone", "boxing", "breakout", "chopper_command",
    "crazy_climber", "demon_attack", "freeway", "frostbite", "gopher", "hero", "jamesbond", "kangaroo", "krull",
    "kung_fu_master", "ms_pacman", "pong", "private_eye", "qbert", "road_runner", "seaquest", "up_n_down",
]  # fmt: skip
NAMES = ["atari100k_simple", "atari100k_der", "atari100k_otrainbow", "atari100k_curl", "atari100k_drq"]
NAMES += ["atari100k_spr", "atari100k_bbf", "atari100k_drq_eps", "atari100k_spr_runs", "atari100k_simple_runs"]
NAMES += ["atari100k_bbf_runs"]
TABLES = {t.name: t for t in published.atari100k_tables()}
AGGREGATES = published.atari100k_aggregates()


def test_random_and_human_scores_are_the_atari100k_papers_not_sabers():
    rh = tables.atari100k_random_human()
    assert list(rh) == GAMES
    assert rh["alien"] == (227.8, 7127.7) and rh["pong"] == (-20.7, 14.6) and rh["up_n_down"] == (533.4, 11693.2)
    assert rh["freeway"] == (0.0, 29.6) and rh["private_eye"] == (24.9, 69571.3)
    saber_random = scoring.random_scores()
    assert saber_random["alien"] == 211.9  # SABER's random agent: another number for the same game
    assert all(game in saber_random for game in GAMES)
    assert "Dopamine" in tables.source_note(tables.ATARI100K_RANDOM_HUMAN_CSV)


def test_human_atari100k_normalizes_with_its_own_random_scores():
    scorer = scoring.AtariScorer()
    assert scoring.HUMAN_ATARI100K in scorer.baselines()
    result = scorer.score({"alien": 227.8, "boxing": 12.1, "breakout": 16.1, "air_raid": 500.0}, "human_atari100k")
    assert result["per_task"]["alien"] == 0.0  # 227.8 is Atari 100K's random score (SABER's: 211.9)
    assert result["per_task"]["boxing"] == pytest.approx(1.0)
    assert result["per_task"]["breakout"] == pytest.approx((16.1 - 1.7) / (30.5 - 1.7))
    assert result["unnormalized"] == {"air_raid": 500.0}  # not one of the 26 games
    assert result["raw"]["alien"] == 227.8  # raw scores kept as they are
    # the human baseline of SABER (Mnih et al.'s human scores, SABER's random scores) differs
    assert scorer.score({"alien": 227.8}, "human")["per_task"]["alien"] == pytest.approx(
        (227.8 - 211.9) / (7127.7 - 211.9)
    )


def test_atari100k_runs_default_to_human_atari100k():
    scorer = scoring.AtariScorer()
    assert scorer.default_baseline_for({"protocol": "atari100k"}) == "human_atari100k"
    assert scorer.default_baseline_for({"protocol": "custom", "protocol_base": "atari100k"}) == "human_atari100k"
    for protocol in ({"protocol": "saber"}, {"protocol": "custom", "protocol_base": "saber"}, {}):
        assert scorer.default_baseline_for(protocol) == "world_record"


def test_tables_cover_the_26_games_with_source_protocol_and_view():
    suite = AtariSaberSuite()
    assert list(TABLES) == NAMES
    shipped = {t.name: t for t in published.paper_reference_tables()}
    for name, table in TABLES.items():
        _check_reference(suite, table)
        assert shipped[name] == table
        assert list(table.scores) == GAMES, name
        assert table.protocol == {"protocol": "atari100k"} and table.view == "score"
        assert table.source.startswith(
            ("SPR (Schwarzer et al. 2021), Table 1", "BBF (Schwarzer et al. 2023)", "Agarwal et al. 2021")
        )
        assert table.description.split(":")[0] in (published.SPR2021, published.BBF2023, published.AGARWAL2021)
    for column, _, paper in published.ATARI100K_SPR_COLUMNS:
        assert paper in TABLES[f"atari100k_{column}"].description


def test_spot_checks_of_every_table():
    """Cells of each column, by hand from the printed tables."""
    t = {name: table.scores for name, table in TABLES.items()}
    assert (t["atari100k_simple"]["alien"], t["atari100k_simple"]["crazy_climber"]) == (616.9, 62583.6)
    assert (t["atari100k_der"]["alien"], t["atari100k_der"]["pong"]) == (739.9, -19.3)
    assert (t["atari100k_otrainbow"]["bank_heist"], t["atari100k_otrainbow"]["private_eye"]) == (182.1, 100.0)
    assert (t["atari100k_curl"]["alien"], t["atari100k_curl"]["jamesbond"]) == (558.2, 471.0)
    assert (t["atari100k_drq"]["private_eye"], t["atari100k_drq"]["road_runner"]) == (-13.6, 8895.1)
    assert (t["atari100k_spr"]["boxing"], t["atari100k_spr"]["up_n_down"]) == (35.8, 28138.5)
    assert (t["atari100k_bbf"]["alien"], t["atari100k_bbf"]["battle_zone"]) == (1173.2, 24459.8)
    # DrQ(epsilon): means of the 100 released runs (IRIS Table 1 prints them to 0.1: 865.2, 21539.0)
    assert (t["atari100k_drq_eps"]["alien"], t["atari100k_drq_eps"]["crazy_climber"]) == (865.16, 21539.0)


def test_drq_eps_freeway_is_a_mean_over_runs_of_which_a_quarter_never_score():
    """What the DrQ(epsilon) Freeway run (docs/measurements/atari100k.md) is read against: 27 of the 100 runs end at 0."""
    drq_eps = tables.atari100k_table("drq_eps2021")
    assert drq_eps["runs_at_zero"]["freeway"] == 27 and drq_eps["drq_eps"]["freeway"] == 20.26
    assert sum(drq_eps["runs_at_zero"].values()) == 27 + 2 + 34  # freeway, hero, private_eye


def _aggregate(subject: str, quantity: str):
    matches = [a for a in AGGREGATES if a.quantity.startswith(f"{subject}: {quantity}")]
    assert len(matches) == 1, (subject, quantity)
    return matches[0]


def test_printed_aggregates_come_out_of_the_printed_tables():
    """Each paper's printed mean, median and superhuman count, recomputed from its per-game table
    through AtariScorer against human_atari100k, to the printed precision."""
    der_mean, der_median = _aggregate("der", "mean"), _aggregate("der", "median")
    assert (der_mean.published, der_median.published) == (0.285, 0.161)
    assert der_mean.recomputed == pytest.approx(0.28544, abs=1e-5) and der_mean.matches
    assert der_median.recomputed == pytest.approx(0.16136, abs=1e-5) and der_median.matches
    printed = {
        "simple": (0.443, 0.144, 2),
        "der": (0.285, 0.161, 2),
        "otrainbow": (0.264, 0.204, 1),
        "curl": (0.381, 0.175, 2),
        "drq": (0.357, 0.268, 2),
        "spr": (0.704, 0.415, 7),
    }
    for subject, (mean, median, superhuman) in printed.items():
        assert _aggregate(subject, "mean").published == mean
        assert _aggregate(subject, "median").published == median and _aggregate(subject, "median").matches
        count = _aggregate(subject, "games at or above human")
        assert (count.published, count.recomputed) == (superhuman, superhuman)
        assert "SPR (Schwarzer et al. 2021), Table 1" == count.source
    assert len(AGGREGATES) == 6 * 3 + 2 + 2
    assert _aggregate("bbf", "median").matches and _aggregate("bbf", "median").published == 0.917
    for quantity, printed in (("mean", 0.465), ("median", 0.313)):  # IRIS Table 1, column DrQ (= DrQ(epsilon))
        a = _aggregate("drq_eps", quantity)
        assert a.published == printed and a.matches and a.source == "IRIS (Micheli et al. 2023), Table 1"


def test_only_the_documented_discrepancies_differ():
    differ = {a.quantity.split(",")[0]: a for a in AGGREGATES if not a.matches}
    assert set(differ) == {"spr: mean human-normalized score", "bbf: mean human-normalized score"}
    assert all(a.known_discrepancy for a in differ.values())
    assert differ["spr: mean human-normalized score"].recomputed == pytest.approx(0.70344, abs=1e-5)
    assert differ["bbf: mean human-normalized score"].recomputed == pytest.approx(2.24739, abs=1e-5)
    assert all(not a.known_discrepancy for a in AGGREGATES if a.matches)
    assert set(AGGREGATES) <= set(AtariSaberSuite().published_aggregates())


# --- benchgen compare / report / references on an atari100k run ---------------------------------------


def _atari100k_runs(root, protocol=None):
    reg = get_registry()
    if "atari_saber" not in reg.suites:
        pytest.skip("the atari_saber plugin is not installed")
    protocol = protocol or {"suite": "atari_saber", "protocol": "atari100k", "sticky_action_probability": 0.0}
    games = {"alien": 2000.0, "boxing": 30.0, "breakout": 10.0, "pong": -10.0, "freeway": 20.0}
    for agent, scale in (("dqn", 1.0), ("rainbow", 1.5)):
        make_run(
            root / agent,
            agent,
            {s: {g: [v * scale * (1 + 0.1 * s)] for g, v in games.items()} for s in (0, 1, 2)},
            budget=400_000,
            protocol=protocol,
            suite="atari_saber",
            protocol_choice={"preset": "atari100k", "changes": {}},
        )
    return games


def test_compare_of_atari100k_runs_reports_the_fields_aggregates(tmp_path):
    games = _atari100k_runs(tmp_path)
    result = build_comparison([tmp_path], reps=50, curve_points=2)
    assert result["baseline"] == "human_atari100k"
    # 400K frames is the whole of Atari 100K's budget, not a scaled-down SABER run (200M frames)
    assert result["protocol_length"] and result["protocol_budget"] == 400_000
    assert result["metrics"] == ["median", "iqm", "mean", "optimality_gap"]
    rh = tables.atari100k_random_human()
    dqn = result["agents"]["dqn"]
    for metric in result["metrics"]:  # three seeds: stratified-bootstrap intervals
        estimate = dqn["aggregates"][metric]
        assert estimate["ci_low"] <= estimate["value"] <= estimate["ci_high"]
    boxing = [(30.0 * (1 + 0.1 * s) - 0.1) / (12.1 - 0.1) for s in (0, 1, 2)]
    assert result["per_task"]["normalized"]["boxing"]["dqn"]["value"] == pytest.approx(sum(boxing) / 3)
    # boxing (2.5-2.75 x human) is the one game at or above human
    assert dqn["at_or_above_baseline"] == 1
    # the papers' tables are rows beside the runs, normalized with the same yardstick
    spr = result["references"]["atari100k_spr"]
    assert sorted(spr["covered"]) == sorted(games)
    alien = (801.5 - rh["alien"][0]) / (rh["alien"][1] - rh["alien"][0])
    assert spr["normalized"]["alien"] == pytest.approx(alien)
    assert set(spr["aggregates"]) == {"median", "iqm", "mean", "optimality_gap"}
    assert result["per_task"]["views"]["score"]["alien"]["atari100k_der (ref)"]["mean"] == 739.9
    # world records still apply when asked for
    assert build_comparison([tmp_path], reps=20, curve_points=2, baseline="world_record")["baseline"] == "world_record"


def test_cli_compare_report_and_references_show_the_atari100k_tables(tmp_path, capsys):
    _atari100k_runs(tmp_path / "runs")
    out = tmp_path / "out"
    args = ["--reps", "20", "--curve-points", "2", "--no-html", "--no-plots", "--no-references"]
    assert main(["compare", str(tmp_path / "runs"), "--out", str(out), "--reference", "atari100k_bbf", *args]) == 0
    assert "tasks >= human_atari100k" in capsys.readouterr().out
    md = (out / "compare.md").read_text()
    assert "| >= human_atari100k |" in md and "atari100k_bbf (reference" in md and "atari100k_spr" not in md
    saved = json.loads((out / "compare.json").read_text())
    assert list(saved["references"]) == ["atari100k_bbf"]
    # benchgen report on one run of the protocol normalizes against the same baseline
    run = tmp_path / "runs" / "dqn"
    report = build_report(run)
    assert report["phases"]["train"]["normalized"]["baseline"] == "human_atari100k"
    assert report["protocol_length"] and report["protocol_budget"] == 400_000
    assert "protocol-length" not in md.lower()
    # benchgen references lists the tables with their sources
    assert main(["references", "atari_saber"]) == 0
    listing = capsys.readouterr().out
    for name in [*NAMES, "human_atari100k"]:
        assert name in listing
    assert main(["references", "atari_saber", "atari100k_der"]) == 0
    assert "739.9" in capsys.readouterr().out
