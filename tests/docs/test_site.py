"""The documentation site builds with warnings as errors, its generated reference covers what the
installed benchgen has, and the README stays a short entry point."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

DOCS = REPO / "docs"
#: what `docs/contributing.md` and the README tell a user to run
BUILD = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html"]


def _build(srcdir: Path, outdir: Path, *extra: str) -> subprocess.CompletedProcess:
    """The build as a user runs it: the installed plugins only (not the tests' toy suite)."""
    env = {k: v for k, v in os.environ.items() if k != "BENCHGEN_PLUGINS"}
    command = [*BUILD, *extra, str(srcdir), str(outdir)]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)


def test_the_site_builds_every_page_and_its_reference_covers_the_code(tmp_path, monkeypatch):
    """One test, so that the build runs once whichever test worker takes it."""
    site = tmp_path / "site"
    done = _build(DOCS, site)
    assert done.returncode == 0, f"the site does not build cleanly:\n{done.stdout}\n{done.stderr}"
    sources = [p.relative_to(DOCS).with_suffix(".html") for p in DOCS.rglob("*.md") if "_build" not in p.parts]
    missing = [str(p) for p in sources if not (site / p).is_file()]
    assert not missing, f"pages not in the site: {missing}"
    home = (site / "index.html").read_text()
    assert "A 30-second tour" in home and 'href="guide/commands.html"' in home
    for page in ("commands", "protocols", "settings", "references", "hooks", "api"):
        assert (site / "reference" / "generated" / f"{page}.html").is_file()
    monkeypatch.delenv("BENCHGEN_PLUGINS")
    _reference_covers_every_command_suite_and_agent(DOCS / "reference" / "generated")


def _reference_covers_every_command_suite_and_agent(reference: Path) -> None:
    from benchgen.cli import build_parser
    from benchgen.registry import get_registry, reset_registry

    reset_registry()
    registry = get_registry()
    commands = (reference / "commands.md").read_text()
    for action in build_parser(registry)._subparsers._group_actions:
        for name in action.choices:
            assert f"## `benchgen {name}`" in commands
    settings = (reference / "settings.md").read_text()
    for name in registry.agents:
        assert f"\n## {name}\n" in settings
    protocols = (reference / "protocols.md").read_text()
    tables = (reference / "references.md").read_text()
    for name, suite in registry.suites.items():
        assert f"\n## {name}\n" in protocols
        for preset in suite.protocol_presets():
            assert f"### {name}: {preset}\n" in protocols
        for ref in registry.reference_scores(suite).values():
            assert f"`{ref.name}`" in tables
            assert f"## {ref.name}\n" in (reference / "references" / f"{name}.md").read_text()


#: what a page may get wrong, and what the failed build names for each
BROKEN = {
    "[a page](missing.md)": "missing.md",
    "[a section](other.md#no-such-heading)": "no-such-heading",
    "{py:class}`benchgen.suite.NoSuchSuite`": "benchgen.suite.NoSuchSuite",
}


def test_a_broken_link_fails_the_build(tmp_path):
    """The site's own settings (docs/conf.py, its generator left out) turn a link to a missing
    page or heading, or a reference to a benchgen name the code does not have, into a failed
    build that names each."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "index.md").write_text("# Home\n\n" + "\n\n".join(BROKEN) + "\n\n```{toctree}\nother\n```\n")
    (src / "other.md").write_text("# Other\n\n## A heading\n")
    done = _build(src, tmp_path / "out", "-c", str(DOCS), "-D", "extensions=myst_parser,sphinx.ext.autodoc")
    assert done.returncode != 0
    for error in BROKEN.values():
        assert error in done.stderr


def test_references_to_names_the_code_has_are_kept_and_others_are_not():
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        from benchgen_reference import _find
    finally:
        sys.path.remove(str(DOCS / "_ext"))
    from benchgen.needs import AgentNeeds
    from benchgen.suite import Suite

    assert _find("benchgen.agent.AgentNeeds") is AgentNeeds  # re-exported: links to benchgen.needs
    assert _find("benchgen.suite.Suite.tasks") is Suite.tasks
    assert _find("benchgen.run") is not None  # a package the API page leaves out: shown unlinked
    for stale in ("benchgen.no_such_module", "benchgen.suite.NoSuchSuite", "benchgen.suite.Suite.no_method"):
        assert _find(stale) is None


def test_readme_is_short_and_links_into_the_docs():
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) <= 150, "the README is the entry point: move details into docs/"
    for page in ("docs/getting-started.md", "docs/guide/commands.md", "docs/reference/index.md"):
        assert f"]({page})" in readme
