"""Every tutorial in ``docs/tutorials/`` runs as written, at a budget scaled down on the page itself.

One test per page listed in ``docs/tutorials/index.md``. The test takes from the page, in order:

- every line of a ```` ```console ```` block that starts with ``benchgen `` or ``python `` (a line
  ending in ``\\`` continues on the next; ``# ...`` after the command is a comment), and
- every ```` ```python ```` block, run as a script (``__name__ == "__main__"``),

and runs them one after the other in one temporary folder, the reader's working directory, so a
page that runs a benchmark and then reports its run directory works as the reader would type it.
The folder has links to the repository's ``docs``, ``examples`` and ``splits``, so paths a page
gives from the repository root resolve. ``benchgen`` commands run in this process
(:func:`tests.conftest.run_cli`), ``python FILE``/``python -m MODULE`` commands through
:mod:`runpy`, with the installed plugins only (not the tests' toy suite). A command that exits
non-zero, or a script that raises, fails the test with the page, the line and the output's end.

What differs from the reader's run is declared on the page, in HTML comments the reader does not
see, one directive each, applied to every command and script of the page:

- ``<!-- test: replace "OLD" -> "NEW" -->``: the scaled-down budget (``"--frames 200k" ->
  "--frames 2000"``), or a tiny protocol file beside the page. A directive that changes nothing
  fails the test, so a stale one cannot linger.
- ``<!-- test: skip "PREFIX" -->``: commands that start with ``PREFIX`` are not run (the page's
  comment says where they are tested instead, e.g. a generated package's own tests).
- ``<!-- test: install "pip install -e ./PKG" as MODULE from FOLDER -->``: the page's
  ``pip install`` line of a package it wrote is not run; from that line on, the package's plugin
  module ``MODULE`` is loaded by import name (``BENCHGEN_PLUGINS``) from ``FOLDER`` of the
  temporary one (put on ``sys.path`` and ``PYTHONPATH``), as the installed entry point would load
  it. A ``pip install`` line without such a directive fails the test.
- ``<!-- test: ray -->``: the page starts Ray. Its ``benchgen`` commands run in a new interpreter
  (a Ray instance must not outlive the command in the test process), and it is tested by
  :func:`test_tutorial_starting_ray_runs_as_written`, a name of its own so that the tests' Ray
  group (``tests/conftest.py``) can hold it: two Ray instances must not share the 2 cores.

Other lines of a ``console`` block (``ray start``, shell output) are never run; each page says what
they do.
"""

from __future__ import annotations

import os
import re
import runpy
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import REPO, run_cli, run_cli_subprocess

# what a command run in this process changes (environment, folder, argv, plugin registry, random
# generators, torch threads, signal handlers) is put back after each ``python`` line and script
from tests.inprocess import _process_state

TUTORIALS = REPO / "docs" / "tutorials"
#: repository folders a page may name by their path from the root
LINKED = ("docs", "examples", "splits")
DIRECTIVE = re.compile(r"<!--\s*test:\s*(\w+)\s*(.*?)\s*-->")
REPLACE = re.compile(r'"(.*?)"\s*->\s*"(.*?)"$')
FENCE = re.compile(r"^\s*(`{3,})(\w*)\s*$")
RUNNABLE = ("benchgen ", "python ")
INSTALL = "pip install"
INSTALLS = re.compile(r'"(.*?)"\s+as\s+([\w.]+)\s+from\s+(\S+)$')


@dataclass
class Step:
    """One command (a ``console`` line) or script (a ``python`` block) of a page."""

    line: int
    text: str
    script: bool = False


@dataclass
class Page:
    path: Path
    steps: list[Step] = field(default_factory=list)
    replace: list[tuple[str, str]] = field(default_factory=list)
    skip: list[str] = field(default_factory=list)
    #: ``pip install`` line -> (plugin module, folder it is imported from)
    installs: dict[str, tuple[str, str]] = field(default_factory=dict)
    ray: bool = False

    def where(self, step: Step) -> str:
        path = self.path.relative_to(REPO) if self.path.is_relative_to(REPO) else self.path
        return f"{path}:{step.line}"


def pages() -> list[Path]:
    """The pages in the order of the index's links."""
    index = (TUTORIALS / "index.md").read_text()
    return [TUTORIALS / name for name in re.findall(r"\]\(([\w-]+\.md)\)", index)]


def parse(path: Path) -> Page:
    page = Page(path)
    fence: tuple[str, str, int] | None = None  # (backticks, language, first line)
    block: list[str] = []
    pending = ""
    for number, line in enumerate(path.read_text().splitlines(), 1):
        opening = FENCE.match(line)
        if fence is None:
            if opening:
                fence, block = (opening[1], opening[2], number), []
            for kind, argument in DIRECTIVE.findall(line):
                _directive(page, kind, argument, number)
            continue
        if line.strip() == fence[0]:
            if fence[1] == "python":
                page.steps.append(Step(fence[2] + 1, "\n".join(block), script=True))
            fence = None
            continue
        block.append(line)
        if fence[1] != "console":
            continue
        text = pending + line.strip()
        if text.endswith("\\"):
            pending = text[:-1].rstrip() + " "
            continue
        pending = ""
        if text.startswith((*RUNNABLE, INSTALL)):
            page.steps.append(Step(number, text))
    assert fence is None, f"{path.name}: a code block opened at line {fence[2]} is not closed"
    return page


def _directive(page: Page, kind: str, argument: str, number: int) -> None:
    where = f"{page.path.name}:{number}"
    if kind == "replace":
        match = REPLACE.match(argument)
        assert match, f'{where}: write `replace "OLD" -> "NEW"`'
        page.replace.append((match[1], match[2]))
    elif kind == "skip":
        match = re.match(r'"(.+?)"', argument)
        assert match, f'{where}: write `skip "PREFIX" (why)`'
        page.skip.append(match[1])
    elif kind == "install":
        match = INSTALLS.match(argument)
        assert match, f'{where}: write `install "pip install ..." as MODULE from FOLDER`'
        page.installs[match[1]] = (match[2], match[3])
    elif kind == "ray":
        page.ray = True
    else:
        raise AssertionError(f"{where}: unknown directive {kind!r}")


def test_the_index_lists_every_page():
    listed = {p.name for p in pages()}
    written = {p.name for p in TUTORIALS.glob("*.md")} - {"index.md"}
    assert listed == written, f"listed but missing: {listed - written}; not listed: {written - listed}"


def test_a_page_is_read_as_the_test_runs_it(tmp_path):
    """The reader of the pages finds commands, continued lines, scripts and directives."""
    page = tmp_path / "page.md"
    page.write_text(
        '<!-- test: replace "--frames 1M" -> "--frames 10" -->\n'
        '<!-- test: install "pip install -e ." as my_plugin from src -->\n'
        "```console\n"
        "benchgen run toy random \\\n"
        "    --frames 1M   # a comment\n"
        "pip install -e .\n"
        "```\n"
        "```python\n"
        "print('hi')\n"
        "```\n"
    )
    parsed = parse(page)
    assert [(s.line, s.text, s.script) for s in parsed.steps] == [
        (5, "benchgen run toy random --frames 1M   # a comment", False),
        (6, "pip install -e .", False),
        (9, "print('hi')", True),
    ]
    assert parsed.replace == [("--frames 1M", "--frames 10")]
    assert parsed.installs == {"pip install -e .": ("my_plugin", "src")}


def test_a_failing_command_or_stale_directive_fails_with_its_page_and_line(tmp_path, monkeypatch):
    page = tmp_path / "page.md"
    page.write_text("# A page\n\n```console\nbenchgen list\nbenchgen list no_such_suite\n```\n")
    with pytest.raises(AssertionError, match=r"page.md:5: `benchgen list no_such_suite` exited 2"):
        _run_page(parse(page), tmp_path, monkeypatch)
    page.write_text('<!-- test: replace "--frames 1M" -> "--frames 10" -->\n```console\nbenchgen list\n```\n')
    with pytest.raises(AssertionError, match="a stale directive"):
        _run_page(parse(page), tmp_path, monkeypatch)


@pytest.mark.parametrize("page", [p for p in map(parse, pages()) if not p.ray], ids=lambda p: p.path.stem)
def test_tutorial_runs_as_written(page, tmp_path, monkeypatch):
    _run_page(page, tmp_path, monkeypatch)


@pytest.mark.parametrize("page", [p for p in map(parse, pages()) if p.ray], ids=lambda p: p.path.stem)
def test_tutorial_starting_ray_runs_as_written(page, tmp_path, monkeypatch):
    _run_page(page, tmp_path, monkeypatch)


def _run_page(page: Page, tmp_path: Path, monkeypatch) -> None:
    assert page.steps, f"{page.path.name}: no command to run"
    steps = _scaled(page)
    for name in LINKED:
        (tmp_path / name).symlink_to(REPO / name)
    monkeypatch.delenv("BENCHGEN_PLUGINS", raising=False)
    monkeypatch.chdir(tmp_path)
    for step, text in steps:
        if any(text.startswith(prefix) for prefix in page.skip):
            continue
        if text.startswith(INSTALL):
            _install(page, step, text, tmp_path, monkeypatch)
        elif step.script:
            _run_script(page, step, text, tmp_path)
        else:
            _run_command(page, step, text, tmp_path)


def _scaled(page: Page) -> list[tuple[Step, str]]:
    """Each step's text with the page's replacements made; every replacement must change something."""
    texts = [step.text for step in page.steps]
    for old, new in page.replace:
        assert any(old in t for t in texts), f'{page.path.name}: "{old}" is in no command (a stale directive)'
        texts = [t.replace(old, new) for t in texts]
    return list(zip(page.steps, texts, strict=True))


def _install(page: Page, step: Step, text: str, cwd: Path, monkeypatch) -> None:
    """What the page's ``pip install`` of a package it wrote does for the commands after it."""
    assert text in page.installs, f"{page.where(step)}: `{text}` has no install directive"
    module, folder = page.installs[text]
    monkeypatch.syspath_prepend(str(cwd / folder))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(cwd / folder), os.environ.get("PYTHONPATH")])))
    plugins = os.environ.get("BENCHGEN_PLUGINS")
    monkeypatch.setenv("BENCHGEN_PLUGINS", ",".join(filter(None, [plugins, module])))


def _run_command(page: Page, step: Step, text: str, cwd: Path) -> None:
    argv = shlex.split(text, comments=True)
    if argv[0] == "benchgen":
        runner = run_cli_subprocess if page.ray else run_cli
        proc = runner(*argv[1:], plugins=os.environ.get("BENCHGEN_PLUGINS"), cwd=cwd, timeout=300)
        assert proc.returncode == 0, f"{page.where(step)}: `{text}` exited {proc.returncode}\n{proc.stderr[-3000:]}"
        return
    if page.ray:
        proc = subprocess.run([sys.executable, *argv[1:]], cwd=cwd, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, f"{page.where(step)}: `{text}` exited {proc.returncode}\n{proc.stderr[-3000:]}"
        return
    module = argv[1] == "-m"
    with _process_state(dict(os.environ), cwd, argv[2:] if module else argv[1:]):
        try:
            if module:
                runpy.run_module(argv[2], run_name="__main__", alter_sys=True)
            else:
                runpy.run_path(argv[1], run_name="__main__")
        except SystemExit as exc:
            assert exc.code in (None, 0), f"{page.where(step)}: `{text}` exited {exc.code}"
        except Exception as exc:
            raise AssertionError(f"{page.where(step)}: `{text}` raised {exc!r}") from exc


def _run_script(page: Page, step: Step, text: str, cwd: Path) -> None:
    with _process_state(dict(os.environ), cwd, [page.where(step)]):
        try:
            exec(compile(text, page.where(step), "exec"), {"__name__": "__main__"})
        except Exception as exc:
            raise AssertionError(f"{page.where(step)}: the script raised {exc!r}") from exc
