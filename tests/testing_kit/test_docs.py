"""The plugin author guide is generated from the docstrings and must not be stale."""

from __future__ import annotations

from benchgen import docs, hookspecs
from benchgen.testing.checks import CHECKS
from tests.conftest import REPO


def test_committed_guide_is_up_to_date():
    committed = (REPO / "docs" / "plugin_authors.md").read_text()
    assert committed == docs.render(), "docs/plugin_authors.md is stale: run `python -m benchgen.docs`"


def test_guide_quotes_every_hook_docstring_and_every_check():
    text = docs.render()
    for name in dir(hookspecs):
        func = getattr(hookspecs, name)
        if getattr(func, "benchgen_spec", None) is not None:
            assert f"### `{name}(" in text
            assert docs.md(func.__doc__) in text
    for name, _ in CHECKS:
        assert f"`{name}`" in text
    for topic in ("entry-points.benchgen", "## Naming protocol parameters", "## Splits", "EpisodeEnd"):
        assert topic in text


def test_check_mode_reports_staleness(tmp_path):
    stale = tmp_path / "guide.md"
    stale.write_text("old\n")
    assert docs.main(["--check", "--output", str(stale)]) == 1
    assert docs.main(["--output", str(stale)]) == 0
    assert docs.main(["--check", "--output", str(stale)]) == 0


def test_rst_literal_blocks_and_roles_become_markdown():
    text = docs.md("""Use :class:`~benchgen.suite.Suite` and ``x``::

        code here

    after.""")
    assert "`benchgen.suite.Suite`" in text and "`x`" in text and "```\ncode here\n```" in text
