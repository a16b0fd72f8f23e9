"""Plugin discovery: strict loading through entry points, errors naming plugin and distribution."""

from __future__ import annotations

import importlib.metadata
import sys
import types

import pytest

import benchgen
from benchgen.errors import PluginError, UsageError
from benchgen.registry import Registry


class FakeEntryPoint:
    def __init__(self, name, value, loader):
        self.name, self.value, self.group, self._loader = name, value, "benchgen", loader

    def load(self):
        return self._loader()


class FakeDist:
    def __init__(self, name, version, eps):
        self.metadata = {"name": name}
        self.version = version
        self.entry_points = eps


def _install(monkeypatch, dists):
    monkeypatch.delenv("BENCHGEN_PLUGINS", raising=False)
    monkeypatch.delenv("BENCHGEN_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    monkeypatch.setattr(importlib.metadata, "distributions", lambda: dists)


def _good_plugin():
    mod = types.ModuleType("good_plugin")
    from tests.fixture_plugins import toy_suite

    mod.benchgen_suites = toy_suite.benchgen_suites
    mod.benchgen_splits = toy_suite.benchgen_splits
    return mod


def test_entry_point_plugin_is_discovered_with_distribution(monkeypatch):
    _install(monkeypatch, [FakeDist("toy-dist", "1.2.3", [FakeEntryPoint("toy", "good_plugin", _good_plugin)])])
    reg = Registry()
    assert "toy" in reg.suites
    info = reg.plugin_versions()[0]
    assert (info["name"], info["distribution"], info["version"], info["error"]) == ("toy", "toy-dist", "1.2.3", None)


def test_import_error_stops_startup_naming_plugin_and_distribution(monkeypatch):
    def broken():
        raise ImportError("No module named 'missing_dependency'")

    _install(monkeypatch, [FakeDist("broken-dist", "0.1", [FakeEntryPoint("broken", "broken_mod", broken)])])
    with pytest.raises(PluginError) as err:
        Registry()
    msg = str(err.value)
    assert "'broken'" in msg and "broken-dist 0.1" in msg and "missing_dependency" in msg


def test_unknown_hook_stops_startup(monkeypatch):
    def misspelled():
        mod = types.ModuleType("typo_plugin")

        @benchgen.hookimpl
        def benchgen_suitez():
            return []

        mod.benchgen_suitez = benchgen_suitez
        return mod

    _install(monkeypatch, [FakeDist("typo-dist", "2.0", [FakeEntryPoint("typo", "typo_plugin", misspelled)])])
    with pytest.raises(PluginError) as err:
        Registry()
    assert "'typo'" in str(err.value) and "typo-dist" in str(err.value) and "benchgen_suitez" in str(err.value)


def test_non_strict_inventory_lists_failures(monkeypatch):
    def broken():
        raise RuntimeError("boom")

    _install(
        monkeypatch,
        [
            FakeDist("toy-dist", "1.0", [FakeEntryPoint("toy", "good_plugin", _good_plugin)]),
            FakeDist("broken-dist", "0.1", [FakeEntryPoint("broken", "broken_mod", broken)]),
        ],
    )
    reg = Registry(strict=False)
    status = {p.name: p.error for p in reg.plugins}
    assert status["toy"] is None and "boom" in status["broken"]
    assert "toy" in reg.suites


def test_autoload_can_be_disabled(monkeypatch):
    _install(monkeypatch, [FakeDist("toy-dist", "1.0", [FakeEntryPoint("toy", "good_plugin", _good_plugin)])])
    monkeypatch.setenv("BENCHGEN_DISABLE_PLUGIN_AUTOLOAD", "1")
    assert Registry().suites == {}


def test_did_you_mean_for_every_name_kind(monkeypatch):
    monkeypatch.delenv("BENCHGEN_PLUGINS")
    reg = Registry(autoload=False, plugins=[("toy", sys.modules["tests.fixture_plugins.toy_suite"])])
    with pytest.raises(UsageError, match="did you mean 'toy'"):
        reg.suite("tyo")
    suite = reg.suite("toy")
    with pytest.raises(UsageError, match="did you mean 'pair'"):
        reg.split(suite, "pairr")
    with pytest.raises(UsageError, match="did you mean 'count-20'"):
        reg.check_tasks(suite, ["count-21"])


def test_core_names_no_suite_or_agent():
    """Core must not name a first-party suite or agent: they come in through entry points."""
    from pathlib import Path

    core = Path(benchgen.__file__).parent
    for path in core.glob("*.py"):
        text = path.read_text()
        for name in ("atari_saber", "benchgen_sonic", "rainbow_iqn", "ppo_joint", "jerk", "benchgen_agents."):
            assert name not in text, f"{path.name} names {name}"


def test_a_reference_table_must_name_the_suites_tasks_and_views(monkeypatch):
    from benchgen.scoring import ReferenceScores
    from tests.fixture_plugins.toy_suite import ToySuite

    monkeypatch.delenv("BENCHGEN_PLUGINS")
    reg = Registry(autoload=False, plugins=[("toy", sys.modules["tests.fixture_plugins.toy_suite"])])
    suite = reg.suite("toy")
    good = ReferenceScores("paper", {"count-20": 3.0}, source="a paper, Table 1")
    monkeypatch.setattr(ToySuite, "reference_scores", lambda self: [good])
    assert reg.reference_scores(suite)["paper"].source == "a paper, Table 1"
    typo = ReferenceScores("paper", {"count-21": 3.0})
    monkeypatch.setattr(ToySuite, "reference_scores", lambda self: [typo])
    with pytest.raises(PluginError, match=r"names unknown tasks \['count-21'\]"):
        reg.reference_scores(suite)
    undeclared = ReferenceScores("paper", {"count-20": 3.0}, view="score_5min")
    monkeypatch.setattr(ToySuite, "reference_scores", lambda self: [undeclared])
    with pytest.raises(PluginError, match="view 'score_5min', which the suite does not declare"):
        reg.reference_scores(suite)
