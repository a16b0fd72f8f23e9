"""Every ``--help`` renders (issue 27 item 14): ``compare --help`` crashed with a TypeError, a bare
``%`` in a help string that argparse formats with ``%``. Every command and subcommand is rendered,
the installed plugins' commands included."""

from __future__ import annotations

import argparse

import pytest

from benchgen.cli import build_parser
from benchgen.registry import get_registry


def _parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    yield path, parser
    for action in parser._actions:  # argparse offers no public walk over its subcommands
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, (*path, name))


def test_every_command_and_subcommand_renders_its_help(capsys):
    parsers = list(_parsers(build_parser(get_registry())))
    names = {path[0] for path, _ in parsers if path}
    assert {"run", "resume", "compare", "report", "evaluate", "sonic"} <= names  # plugins' commands too
    for path, parser in parsers:
        with pytest.raises(SystemExit) as exit_:
            parser.parse_args(["--help"])
        out = capsys.readouterr().out
        assert exit_.value.code == 0 and out.startswith("usage: "), path
    assert "99% confidence" in dict(parsers)[("compare",)].format_help()  # a docstring's % shown as written
