"""Plugins that misbehave (issue 47, 10): a hook that returns junk or raises, a plugin adding a
command benchgen has, and one that calls ``sys.exit`` when imported each stop start-up with one
line naming the plugin, where they gave tracebacks that did not name it (or, for ``sys.exit``,
ended every command silently with the plugin's exit status)."""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import refused_in_process

PLUGINS = {
    "a list of junk": ("def benchgen_suites():\n    return [42]", "returned [42], not a list of Suite"),
    "a string": ("def benchgen_agents():\n    return 'abc'", "returned 'abc', not a list of AgentSpec"),
    "an exception": ("def benchgen_suites():\n    raise ValueError('boom')", "(ValueError: boom)"),
    "an exit": ("def benchgen_agents():\n    raise SystemExit(3)", "(SystemExit: 3)"),
    "a second run command": (
        "def benchgen_add_commands(subparsers):\n    subparsers.add_parser('run')",
        "conflicting subparser: run",
    ),
    "a junk scorer": ("def benchgen_scorer(suite):\n    return 'abc'", "not a Scorer or None"),
}


@pytest.mark.parametrize("case", sorted(PLUGINS))
def test_a_misbehaving_hook_is_one_line_naming_the_plugin(tmp_path, monkeypatch, capsys, case):
    from benchgen import registry

    body, fragment = PLUGINS[case]
    name = f"misbehaving_{sorted(PLUGINS).index(case)}"  # (a module of its own: imports are cached)
    (tmp_path / f"{name}.py").write_text(f"import benchgen\n\n\n@benchgen.hookimpl\n{body}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("BENCHGEN_PLUGINS", f"tests.fixture_plugins.toy_suite,{name}")
    registry.reset_registry()
    args = ("score", "toy", tmp_path / "s.csv") if "scorer" in case else ("list",)
    (tmp_path / "s.csv").write_text("task,score\ncount-20,1\n")
    refused_in_process(capsys, f"plugin '{name}'", *args)
    refused_in_process(capsys, fragment, *args)


def test_a_plugin_exiting_at_import_is_named(tmp_path, monkeypatch, capsys):
    from benchgen import registry

    (tmp_path / "exits.py").write_text(textwrap.dedent("import sys\n\nsys.exit(3)\n"))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("BENCHGEN_PLUGINS", "exits")
    registry.reset_registry()
    refused_in_process(capsys, "error importing plugin 'exits'", "list")
