"""The Gotta Learn Fast paper's Tables 1-9 shipped with the Sonic plugin, and their self-check.

Numbers are checked three ways: hard-coded spot checks copied from the paper (always run), every
shipped number against the paper's text (run where the text is on disk), and every printed
aggregate against the mean of the shipped per-level numbers (the paper's own totals).
"""

from __future__ import annotations

import math
import os
import re
import statistics
from collections import defaultdict
from fractions import Fraction
from pathlib import Path

import pytest

import benchgen_sonic
from benchgen.registry import Registry
from benchgen_sonic import paper
from benchgen_sonic.levels import LEVELS_BY_TASK, split_tasks
from benchgen_sonic.scoring import (
    FINAL_EPISODES,
    KNOWN_DISCREPANCIES,
    PAPER_PROTOCOL,
    SonicScorer,
    paper_tables,
    published_aggregates,
)
from benchgen_sonic.suite import SonicSuite
from tests.conftest import run_cli
from tests.sonic import airstriker_plugin

#: the paper's text (Nichol et al. 2018, as extracted from its PDF); BENCHGEN_SONIC_PAPER overrides
PAPER_TEXT = Path(os.environ.get("BENCHGEN_SONIC_PAPER", "/work/shared/papers/gotta_learn_fast_2018_nichol.txt"))

#: (reference table, task) -> (value, ±), copied from the paper by hand
SPOT_CHECKS = {
    ("rainbow", "sonic3k-AngelIslandZone.Act2"): (3576.0, 89.2),  # Table 2, Score
    ("rainbow_final", "sonic3k-HydrocityZone.Act1"): (867.2, 0.0),  # Table 2, Final Score
    ("jerk_final", "sonic3k-HydrocityZone.Act1"): (3895.5, 50.0),  # Table 3, Final Score
    ("jerk", "sonic3k-LavaReefZone.Act1"): (267.1, 71.6),  # Table 3, Score
    ("ppo", "sonic2-CasinoNightZone.Act2"): (2517.8, 1033.0),  # Table 4, Score
    ("ppo_joint", "sonic1-GreenHillZone.Act2"): (8769.3, 308.8),  # Table 5, Score
    ("rainbow_joint_final", "sonic2-HillTopZone.Act2"): (3531.3, 4.9),  # Table 6, Final Score
    ("human", "sonic3k-HydrocityZone.Act1"): (7146.0, 1555.1),  # Table 7
    ("rainbow_joint_train", "sonic3k-HiddenPalaceZone"): (9308.9, 119.1),  # Table 8
    ("rainbow_joint_train", "sonic1-StarLightZone.Act2"): (7105.5, 404.2),  # Table 8
    ("ppo_joint_train", "sonic2-WingFortressZone"): (3109.2, 50.9),  # Table 9
    ("ppo_joint_train", "sonic3k-SandopolisZone.Act2"): (1087.5, 21.5),  # Table 9
}

#: reference table -> (printed aggregate, ±): Table 1, and the Aggregate rows of Tables 2-6, 8, 9
PRINTED_AGGREGATES = {
    "rainbow": (2748.6, 102.2),
    "jerk": (1904.0, 21.9),
    "ppo": (1488.8, 42.8),
    "ppo_joint": (3127.9, 116.9),
    "rainbow_joint": (2969.2, 170.2),
    "human": (7438.2, 624.2),
    "rainbow_final": (3706.3, 192.7),
    "jerk_final": (2306.8, 74.0),
    "ppo_final": (1755.1, 65.2),
    "ppo_joint_final": (3926.3, 78.1),
    "rainbow_joint_final": (3704.2, 151.1),
    "rainbow_joint_train": (3151.7, 218.2),
    "ppo_joint_train": (5083.6, 91.8),
}

#: how Table 1 spells each algorithm
TABLE1_LABELS = {
    "rainbow": "Rainbow",
    "jerk": "JERK",
    "ppo": "PPO",
    "ppo_joint": "PPO(joint)",
    "rainbow_joint": "Rainbow(joint)",
    "human": "Human",
}


def sonic_registry(*plugins) -> Registry:
    return Registry(plugins=plugins or [("sonic", benchgen_sonic)], autoload=False)


def tables() -> dict:
    return {table.name: table for table in paper_tables()}


def fmt(value: float) -> str:
    """A number as the paper prints it (one decimal)."""
    return f"{value:.1f}"


# -- the tables load, and their levels are the suite's ------------------------------------------
def test_every_table_parses_and_names_the_suites_tasks():
    registry = sonic_registry()
    suite = registry.suite("sonic")
    loaded = registry.reference_scores(suite)  # the registry checks every task name on load
    assert set(loaded) == set(PRINTED_AGGREGATES)
    test, train = set(split_tasks("test")), set(split_tasks("train"))
    assert (len(test), len(train)) == (11, 47)
    for name, table in loaded.items():
        assert table.source.startswith("Nichol et al. 2018, Table "), name
        assert table.view == "score"
        assert set(table.spread) == set(table.scores), name
        assert set(table.scores) == (train if name.endswith("_train") else test), name
        assert all(math.isfinite(v) and 0 <= v <= 10_000 for v in table.scores.values()), name
        assert (table.aggregate, table.aggregate_std) == PRINTED_AGGREGATES[name]


def test_each_row_names_its_level_twice_consistently():
    rows = paper.level_rows()
    keys = [(row.table, row.level, row.quantity) for row in rows]
    assert len(keys) == len(set(keys)) == 5 * 11 * 2 + 11 + 2 * 47
    for row in rows:
        assert paper.TASK_OF_LEVEL[row.level] == row.task
        assert LEVELS_BY_TASK[row.task].split == row.levels
        assert LEVELS_BY_TASK[row.task].state.replace(".", "") == row.level


def test_spot_checks_copied_from_the_paper():
    loaded = tables()
    for (name, task), (value, std) in SPOT_CHECKS.items():
        assert (loaded[name].scores[task], loaded[name].spread[task]) == (value, std), (name, task)
    for name, printed in PRINTED_AGGREGATES.items():
        assert (loaded[name].aggregate, loaded[name].aggregate_std) == printed


def test_table1_repeats_the_aggregate_rows_of_tables_2_to_7():
    printed = paper.printed_aggregates()
    table1 = {a.algorithm: (a.value, a.std) for a in printed if a.table == "Table 1"}
    rows = {a.algorithm: (a.value, a.std) for a in printed if a.table != "Table 1" and a.quantity == "score"}
    assert table1 == rows
    assert set(table1) == set(TABLE1_LABELS)
    assert all(a.precision == pytest.approx(0.1) for a in printed)


# -- every shipped number against the paper's text ----------------------------------------------
@pytest.fixture(scope="module")
def paper_text() -> str:
    if not PAPER_TEXT.is_file():
        pytest.skip(f"the paper's text is not at {PAPER_TEXT} (set BENCHGEN_SONIC_PAPER)")
    return PAPER_TEXT.read_text().replace("\n", "")


def section(text: str, table: str) -> str:
    """The text of one table, from its caption to the next table's caption."""
    number = table.split()[-1]
    start = text.rindex(f"Table{number}:")
    following = [m.start() for m in re.finditer(r"Table\d:", text) if m.start() > start]
    return text[start : min(following, default=len(text))]


def test_every_number_is_printed_in_the_paper(paper_text):
    rows = defaultdict(dict)  # (table, level) -> quantity -> (value, std)
    for row in paper.level_rows():
        rows[(row.table, row.level)][row.quantity] = (row.value, row.std)
    for (table, level), quantities in rows.items():
        text = section(paper_text, table)
        first = quantities.get("score") or quantities["final_performance"]
        printed = level + fmt(first[0]) + "±" + fmt(first[1])
        if "final_score" in quantities:  # Tables 2-6: Score and Final Score on one line
            printed += fmt(quantities["final_score"][0]) + "±" + fmt(quantities["final_score"][1])
        assert text.count(printed) == 1, (table, printed)
        assert len(re.findall(level + r"\d", text)) == 1, (table, level)  # no other level reads the same
    for agg in paper.printed_aggregates():
        text = section(paper_text, agg.table)
        label = TABLE1_LABELS[agg.algorithm] if agg.table == "Table 1" else "Aggregate"
        printed = label + fmt(agg.value) + "±" + fmt(agg.std)
        if agg.quantity == "final_score":
            score = next(a for a in paper.printed_aggregates() if (a.table, a.quantity) == (agg.table, "score"))
            printed = f"Aggregate{fmt(score.value)}±{fmt(score.std)}{fmt(agg.value)}±{fmt(agg.std)}"
        assert printed in text, (agg.table, printed)


def test_the_paper_lists_the_suites_test_levels(paper_text):
    listed = paper_text[paper_text.index("Thetestlevelsarelisted") : paper_text.index("3.4FrameSkip")]
    for task in split_tasks("test"):
        zone, act = LEVELS_BY_TASK[task].state.split(".Act")
        assert f"{zone}{act}" in listed, task


# -- the paper's own totals ---------------------------------------------------------------------
def per_level(name: str) -> list[Fraction]:
    return [Fraction(str(v)) for v in tables()[name].scores.values()]


def test_per_level_means_equal_the_printed_aggregates():
    """Exact means of the printed per-level numbers, against each printed aggregate to its 0.1."""
    for name, (printed, _std) in PRINTED_AGGREGATES.items():
        values = per_level(name)
        mean = sum(values) / len(values)
        gap = abs(mean - Fraction(str(printed)))
        if name == "rainbow":  # the one documented case: 30235.2 / 11 = 2748.6545...
            assert sum(values) == Fraction("30235.2")
            assert Fraction(1, 20) < gap <= Fraction(1, 10)  # beyond half the precision, within both roundings
        else:
            assert gap <= Fraction(1, 20), (name, float(mean), printed)


def test_table1_means_through_the_scorer():
    scorer = SonicScorer(tables())
    for algorithm in TABLE1_LABELS:
        result = scorer.score(tables()[algorithm].scores, baseline=algorithm)
        assert result["n_tasks"] == 11
        assert abs(result["mean"] - PRINTED_AGGREGATES[algorithm][0]) <= (0.1 if algorithm == "rainbow" else 0.05)
        assert result["baseline_mean"] == PRINTED_AGGREGATES[algorithm][0]  # exactly its levels: the printed number


def test_printed_spread_is_not_over_levels():
    """The aggregate ± is not the spread of the per-level numbers across levels, and never exceeds
    the mean of the per-level ± (as a standard deviation over runs of a mean over levels cannot)."""
    loaded = tables()
    for name, (_mean, std) in PRINTED_AGGREGATES.items():
        table = loaded[name]
        for across_levels in (statistics.stdev(table.scores.values()), statistics.pstdev(table.scores.values())):
            assert abs(across_levels - std) > 100, name  # nowhere near the printed ±, whichever estimator
        assert std <= statistics.mean(table.spread.values()), name
    assert f"{statistics.stdev(loaded['rainbow'].scores.values()):.1f}" == "1899.2"  # quoted in the paper module
    assert "1899.2" in paper.__doc__


# -- selfcheck ------------------------------------------------------------------------------------
def test_published_aggregates_match_or_are_documented():
    aggregates = published_aggregates()
    assert len(aggregates) == 13  # Table 1 (6), the final-score rows of Tables 2-6 (5), Tables 8-9 (2)
    assert SonicSuite().published_aggregates() == aggregates
    differing = set()
    for agg in aggregates:
        assert agg.source.startswith("Nichol et al. 2018, Table ")
        assert agg.precision == pytest.approx(0.1)
        if agg.matches:
            assert not agg.known_discrepancy, agg
        else:
            assert agg.known_discrepancy and abs(agg.published - agg.recomputed) <= agg.precision, agg
            differing.add(agg.quantity)
    assert differing == {"rainbow: mean score over the 11 test levels"}
    assert set(KNOWN_DISCREPANCIES) == {("Table 1", "rainbow", "score")}  # no excuse left unused


def test_selfcheck_command_prints_every_aggregate():
    result = run_cli("selfcheck", "sonic", plugins=None)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "13 aggregates recomputed, 0 differ without a documented reason" in result.stdout
    assert len(re.findall(r"│ match\s+│", result.stdout)) == 12, result.stdout
    assert result.stdout.count("differs (known:") == 1
    assert "DIFFERS" not in result.stdout


def test_references_command_lists_the_tables():
    result = run_cli("references", "sonic", plugins=None)
    assert result.returncode == 0, result.stderr
    for name in PRINTED_AGGREGATES:
        assert f"│ {name} " in result.stdout, name
    one = run_cli("references", "sonic", "ppo_joint_train", plugins=None)
    assert one.returncode == 0, one.stderr
    assert "sonic3k-HiddenPalaceZone" in one.stdout and "Table 9" in one.stdout


# -- the scorer's baselines -----------------------------------------------------------------------
def test_score_compares_the_shared_levels_with_the_table():
    scorer = SonicScorer(tables())
    rainbow = tables()["rainbow"]
    some = {"sonic1-GreenHillZone.Act2": 3000.0, "sonic2-HillTopZone.Act2": 1000.0, "sonic1-GreenHillZone.Act1": 50.0}
    result = scorer.score(some, baseline="rainbow")
    shared = (rainbow.scores["sonic1-GreenHillZone.Act2"] + rainbow.scores["sonic2-HillTopZone.Act2"]) / 2
    assert result["baseline_mean"] == pytest.approx(shared) and math.isnan(result["baseline_std"])
    assert result["fraction_of_baseline"] == pytest.approx(2000.0 / shared)  # over the shared levels only
    assert result["mean"] == pytest.approx(4050.0 / 3)
    assert "2 levels it shares" in scorer.format_table(result)
    elsewhere = scorer.score({"sonic1-GreenHillZone.Act1": 50.0}, baseline="rainbow")
    assert (elsewhere["baseline_mean"], elsewhere["baseline_std"]) == PRINTED_AGGREGATES["rainbow"]
    text = scorer.format_table(elsewhere)
    assert "Table 1" in text and "ppo_joint 3127.9 ± 116.9" in text and "ppo_joint_train" not in text


def test_agent_tables_carry_the_papers_protocol():
    protocol = SonicSuite().protocol()
    assert all(protocol[key] == value for key, value in PAPER_PROTOCOL.items())
    for name, table in tables().items():
        assert table.protocol == ({} if name == "human" else PAPER_PROTOCOL), name


def test_a_suite_on_other_levels_keeps_only_the_aggregates():
    registry = sonic_registry(("airstriker", airstriker_plugin))
    suite = registry.suite("sonic_airstriker")
    loaded = registry.reference_scores(suite)
    assert set(loaded) == set(PRINTED_AGGREGATES)
    assert all(table.scores == {} and table.spread == {} for table in loaded.values())
    assert suite.published_aggregates() == []
    result = suite.scorer().score({airstriker_plugin.LEVELS[0].task: 10.0})
    assert result["baseline_mean"] == PRINTED_AGGREGATES["human"][0]


# -- the documentation says what the data holds ---------------------------------------------------
def test_the_paper_module_lists_the_tables_the_csv_holds():
    listed = {}
    for table, algorithm, count, levels, quantities in re.findall(
        r"^- (Table \d): (\w+), (\d+) (test|train) levels, ([\w ]+)$", paper.__doc__, re.MULTILINE
    ):
        listed[table] = (algorithm, int(count), levels, set(quantities.split(" and ")))
    shipped = defaultdict(lambda: [None, set(), None, set()])
    for row in paper.level_rows():
        entry = shipped[row.table]
        entry[0], entry[2] = row.algorithm, row.levels
        entry[1].add(row.task)
        entry[3].add(row.quantity)
    assert listed == {t: (a, len(tasks), lv, q) for t, (a, tasks, lv, q) in shipped.items()}
    assert len(listed) == 8
    table1 = [a for a in paper.printed_aggregates() if a.table == "Table 1"]
    doc = " ".join(paper.__doc__.split())
    assert "Table 1's six rows" in doc and len(table1) == 6
    assert f"last {FINAL_EPISODES} episodes" in doc


def test_the_readme_names_every_table_with_its_levels():
    readme = (Path(benchgen_sonic.__file__).parent / "README.md").read_text()
    named = {}
    for names, count, levels in re.findall(r"^\| ((?:`\w+`,? ?)+) \| (\d+) (test|train) \|", readme, re.MULTILINE):
        for name in re.findall(r"`(\w+)`", names):
            named[name] = (int(count), levels)
    loaded = tables()
    assert named == {name: (len(t.scores), t.levels) for name, t in loaded.items()}
    flat = " ".join(readme.split())
    labels = {"rainbow": "Rainbow", "jerk": "JERK", "ppo": "PPO", "ppo_joint": "joint PPO"}
    labels |= {"rainbow_joint": "joint Rainbow", "human": "humans"}
    for algorithm, label in labels.items():
        mean, std = PRINTED_AGGREGATES[algorithm]
        assert f"{label} {mean} ± {std}" in flat, algorithm
    assert "2748.65" in readme  # the documented discrepancy


def test_the_scoring_module_names_every_table():
    from benchgen_sonic import scoring

    documented = set(re.findall(r"``(\w+)``", scoring.__doc__))
    assert set(PRINTED_AGGREGATES) <= documented
    assert {name for name in documented if name.endswith(("_final", "_train"))} <= set(PRINTED_AGGREGATES)
