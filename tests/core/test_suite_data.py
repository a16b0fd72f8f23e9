"""A suite owns its data (files next to its module); other plugins add splits and reference
tables to any suite through hooks; a name given twice stops start-up."""

from __future__ import annotations

import importlib
import textwrap
from types import SimpleNamespace

import pytest

import benchgen
import benchgen_atari_saber
from benchgen.errors import PluginError
from benchgen.scoring import ReferenceScores, Scorer
from benchgen.suite import Split
from benchgen.testing import build_registry
from benchgen_atari_saber.scoring import AtariScorer

SUITE_MODULE = """
from tests.fixture_plugins.toy_suite import ToySuite


class FileSuite(ToySuite):
    name = "filesuite"
"""


@pytest.fixture
def file_suite(tmp_path, monkeypatch):
    """A suite class in a package of its own, with ``splits/`` and ``data/`` next to its module."""
    package = tmp_path / "benchgen_filesuite"
    (package / "splits").mkdir(parents=True)
    (package / "data").mkdir()
    (package / "__init__.py").write_text(SUITE_MODULE)
    (package / "splits" / "pair.yaml").write_text(
        textwrap.dedent("""\
        suite: filesuite
        description: two train tasks, one test task
        train: [count-20, count-50]
        test: [count-80]
    """)
    )
    (package / "data" / "random_scores.csv").write_text(
        "# uniform random actions\ntask,score\ncount-20,4\ncount-50,10\n"
    )
    (package / "data" / "world_record_scores.csv").write_text(
        "# the best scores ever played\n# (by hand)\ntask,score\ncount-20,20\ncount-50,50\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return importlib.import_module("benchgen_filesuite").FileSuite()


def _plugin(**hooks):
    """A plugin object implementing ``hooks`` (name -> function)."""
    return SimpleNamespace(**{name: benchgen.hookimpl(func) for name, func in hooks.items()})


def test_a_suite_reads_its_splits_and_scores_from_the_files_next_to_its_module(file_suite):
    (split,) = file_suite.splits()
    assert (split.name, split.suite, split.train, split.test) == (
        "pair",
        "filesuite",
        ("count-20", "count-50"),
        ("count-80",),
    )
    assert file_suite.random_scores() == {"count-20": 4.0, "count-50": 10.0}
    (table,) = file_suite.reference_scores()
    assert (table.name, table.description) == ("world_record", "the best scores ever played (by hand)")
    scorer = file_suite.scorer()
    assert scorer.score({"count-20": 12.0})["per_task"] == {"count-20": 0.5}  # (12 - 4) / (20 - 4)
    registry = build_registry(_plugin(benchgen_suites=lambda: [file_suite]), include_agents=False)
    assert set(registry.splits(file_suite)) == {"pair"}
    assert set(registry.reference_scores(file_suite)) == {"world_record"}


def test_a_suite_without_files_has_no_data_of_its_own():
    from tests.fixture_plugins.toy_suite import ToySuite

    suite = ToySuite()  # its splits come from its plugin's hook
    assert (suite.splits(), suite.random_scores(), suite.reference_scores(), suite.scorer()) == ([], {}, [], None)


def test_another_plugin_adds_splits_and_reference_tables_to_a_suite_through_hooks():
    ours = ReferenceScores("our_agent", {"pong": 3.0, "breakout": 20.0}, "our agent, 10M frames")

    def benchgen_splits(suite):
        return [Split(suite.name, "pong_to_breakout", ("pong",), ("breakout",))] if suite.name == "atari_saber" else []

    def benchgen_reference_scores(suite):
        return [ours] if suite.name == "atari_saber" else []

    addon = _plugin(benchgen_splits=benchgen_splits, benchgen_reference_scores=benchgen_reference_scores)
    registry = build_registry([benchgen_atari_saber, addon], include_agents=False)
    suite = registry.suite("atari_saber")
    splits = registry.splits(suite)
    own = {
        "all",
        "wr58",
        "ale_train5",
        "saber_tuning5",
        "saber_seeds14",
        "machado_flavors",
        "atari100k",
        "atari100k_proof8",
    }
    assert set(splits) == own | {"pong_to_breakout"}
    assert splits["pong_to_breakout"].test == ("breakout",)
    assert registry.split(suite, "pong_to_breakout") == splits["pong_to_breakout"]
    tables = registry.reference_scores(suite)
    assert {"world_record", "human", "rainbow_iqn_saber", "our_agent"} <= set(tables)
    assert tables["our_agent"] is ours
    assert isinstance(registry.scorer(suite), AtariScorer)  # the suite's own


@pytest.mark.parametrize(
    "hook, item, fragment",
    [
        (
            "benchgen_splits",
            Split("atari_saber", "all", ("pong",)),
            "split 'all' of suite 'atari_saber' is defined twice",
        ),
        (
            "benchgen_reference_scores",
            ReferenceScores("human", {"pong": 1.0}),
            "reference table 'human' of suite 'atari_saber' is defined twice",
        ),
    ],
)
def test_a_name_the_suite_already_has_stops_start_up(hook, item, fragment):
    addon = _plugin(**{hook: lambda suite: [item] if suite.name == "atari_saber" else []})
    registry = build_registry([benchgen_atari_saber, addon], include_agents=False)
    suite = registry.suite("atari_saber")
    with pytest.raises(PluginError, match=fragment):
        registry.splits(suite) if hook == "benchgen_splits" else registry.reference_scores(suite)


def test_a_plugin_scorer_serves_only_suites_without_their_own(file_suite):
    from tests.fixture_plugins.toy_suite import SUITE as TOY

    theirs = Scorer({"count-20": 0.0}, {})
    plugin = _plugin(benchgen_suites=lambda: [file_suite, TOY], benchgen_scorer=lambda suite: theirs)
    registry = build_registry(plugin, include_agents=False)
    assert registry.scorer(file_suite).random_scores == {"count-20": 4.0, "count-50": 10.0}  # its own
    assert registry.scorer(TOY) is theirs
