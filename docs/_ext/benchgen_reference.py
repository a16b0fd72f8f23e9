"""The site's reference pages, generated from the code at every build (a Sphinx extension).

Nothing here is committed output: the pages are written into ``docs/reference/generated/``
(git-ignored) when the build starts, from what the installed benchgen reports about itself, so they cannot go
stale. Every page comes from the same objects as the command that prints it:

- ``commands.md``: the ``benchgen`` parser with every installed plugin's commands
  (``benchgen.cli.build_parser``), each command's ``--help``;
- ``protocols.md``: every suite's protocol presets side by side and each with its sources
  (``benchgen.protocols``, as ``benchgen protocols SUITE [NAME]``);
- ``settings.md``: the run's and every agent's settings with defaults and their docs
  (``benchgen.config.settings_table``, as ``benchgen settings AGENT``), and what each suite tunes;
- ``references/SUITE.md``: each suite's published reference tables with their sources and
  scores (as ``benchgen references SUITE [NAME]``);
- ``hooks.md``: the plugin hooks with their signatures (``benchgen.docs``, as in the guide);
- ``api.md``: every module of benchgen's top level but the command line's, from its docstrings
  (autodoc), so a docstring naming something the code no longer has fails the build.

Suites and agents are read from the plugin registry, never named here.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
from collections.abc import Iterator
from pathlib import Path

#: where the pages go, relative to the documentation's source folder
OUT = "reference/generated"
#: the terminal width the commands' help is formatted for
HELP_COLUMNS = "100"
#: benchgen's top-level modules that the API page leaves out: the command line and the generators,
#: which the commands page documents by what they do
NOT_API = {"cli", "docs", "newplugin", "__main__"}


def _cell(value: object) -> str:
    """A Markdown table cell: one line, pipes escaped."""
    return " ".join(str(value).split()).replace("|", "\\|")


def _table(header: list[str], rows: list[list[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _code(text: str) -> str:
    return f"```text\n{text.rstrip()}\n```"


# -- commands ----------------------------------------------------------------------------------
def _subcommands(parser: argparse.ArgumentParser, path: str) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """``(command line, parser)`` of ``parser`` and of every command below it, depth first; an
    alias that names a parser already listed is skipped."""
    yield path, parser
    seen: set[int] = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                if id(sub) not in seen:
                    seen.add(id(sub))
                    yield from _subcommands(sub, f"{path} {name}")


def commands_page(registry) -> str:
    from benchgen.cli import build_parser

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = HELP_COLUMNS
    try:
        parts = []
        for line, parser in _subcommands(build_parser(registry), "benchgen"):
            level = "#" * min(2 + line.count(" "), 4) if line != "benchgen" else "##"
            parts.append(f"{level} `{line}`\n\n{_code(parser.format_help())}")
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old
    return (
        "# Commands\n\nEvery command of `benchgen` with the plugins installed where the site was built, "
        "as its `--help` prints it.\n\n" + "\n\n".join(parts) + "\n"
    )


# -- protocols ---------------------------------------------------------------------------------
def protocols_page(registry) -> str:
    from benchgen import protocols

    parts = [
        "# Protocols\n\nEach suite's named protocols (`--protocol NAME`; `benchgen protocols SUITE` prints "
        "them side by side, `benchgen protocols SUITE NAME` one with its sources). A parameter whose "
        "values differ between presets is marked with `*`."
    ]
    for name, suite in sorted(registry.suites.items()):
        presets = suite.protocol_presets()
        parts.append(f"## {name}\n\n{suite.description}")
        if not presets:
            rows = [[key, value] for key, value in suite.protocol().items()]
            parts.append("A single protocol (`benchgen list " + name + "`):\n\n" + _table(["parameter", "value"], rows))
            continue
        names, rows = protocols.side_by_side(suite)
        parts.append(
            f"Default: `{suite.default_protocol}`.\n\n"
            + _table(["", "parameter", *names], [["*" if d else "", p, *v] for p, v, d in rows])
        )
        for preset in names:
            parts.append(
                f"### {name}: {preset}\n\n"
                + _table(["parameter", "value", "source"], [list(r) for r in protocols.notes(suite, preset)])
            )
    return "\n\n".join(parts) + "\n"


# -- settings ----------------------------------------------------------------------------------
def _tuned(registry, spec) -> list[str]:
    """One line per tuned-settings entry any suite has for ``spec``: where it applies, its values
    and its source."""
    lines = []
    for name, suite in sorted(registry.suites.items()):
        entries = {}
        for task in [None, *suite.tasks()]:
            for entry in suite.tuned_settings(spec.algorithm, task, joint=spec.joint and task is None):
                entries.setdefault(entry.label, entry)
        for label, entry in entries.items():
            where = "all tasks" if label == "*" else label
            values = ", ".join(f"`{k}={v}`" for k, v in entry.settings.items()) or "(no settings)"
            lines.append(f"- `{name}` ({where}): {values}. Source: {entry.source}")
    return lines


def settings_page(registry) -> str:
    from benchgen.config import RunConfig, settings_table

    parts = [
        "# Settings\n\nWhat `benchgen settings AGENT` prints: every setting `--set` and `--config` take, "
        "with its default and its documentation (which names its source). Suites tune some of them "
        "(`benchgen settings AGENT --suite SUITE`; a run's `--plan` shows every value it resolves "
        "with its source).",
        "## Run settings\n\n`--set run.KEY=VALUE`, or `KEY=VALUE` when unambiguous.\n\n"
        + _code(settings_table(RunConfig)),
    ]
    for name, spec in sorted(registry.agents.items()):
        kind = " Trained jointly on a split's train tasks." if spec.joint else ""
        text = f"## {name}\n\n{spec.description}.{kind}\n\n" + _code(settings_table(spec.config_class))
        tuned = _tuned(registry, spec)
        if tuned:
            text += "\n\nTuned by the suites:\n\n" + "\n".join(tuned)
        parts.append(text)
    return "\n\n".join(parts) + "\n"


# -- reference tables --------------------------------------------------------------------------
def references_pages(registry) -> dict[str, str]:
    from benchgen.commands.references import _checkpoint_summary, _fmt

    index = [
        "# Reference tables\n\nThe published scores each suite ships, with their sources (`benchgen "
        "references SUITE`); each suite's page lists every table's per-task scores (`benchgen "
        "references SUITE NAME`)."
    ]
    pages = {}
    for name, suite in sorted(registry.suites.items()):
        tables = registry.reference_scores(suite)
        if not tables:
            continue
        rows = []
        body = [f"# {name} reference tables\n\n{suite.description}"]
        for ref in tables.values():
            protocol = ", ".join(f"{k}={v}" for k, v in ref.protocol.items()) or "-"
            points = _checkpoint_summary(ref) if ref.interpolate else ", ".join(ref.by_checkpoint) or "-"
            rows.append([f"`{ref.name}`", ref.source or ref.description, ref.view, protocol, len(ref.scores), points])
            labels = list(ref.by_checkpoint) if ref.by_checkpoint and not ref.interpolate else ["score"]
            tasks = sorted(set(ref.scores) | {t for s in ref.by_checkpoint.values() for t in s})
            header = ["task", *labels] + (["std"] if ref.spread else [])
            cells = []
            for task in tasks:
                row = [
                    _fmt(ref.scores.get(task) if lb == "score" else ref.by_checkpoint[lb].get(task)) for lb in labels
                ]
                cells.append([task, *row] + ([_fmt(ref.spread.get(task))] if ref.spread else []))
            if ref.aggregate is not None:
                cells.append(["(aggregate)", _fmt(ref.aggregate), *[""] * (len(header) - 2)])
            caption = f"Source: {ref.source or '-'}. View: {ref.view}. Protocol: {protocol}."
            if ref.interpolate:
                caption += f" A dense curve: {_checkpoint_summary(ref)}; its scores at the protocol's budget below."
            body.append(f"## {ref.name}\n\n{ref.description}\n\n{caption}\n\n" + _table(header, cells))
        index.append(
            f"## {name}\n\n[Every table's scores](references/{name}.md)\n\n"
            + _table(["name", "source", "view", "protocol", "tasks", "checkpoints"], rows)
        )
        pages[f"references/{name}.md"] = "\n\n".join(body) + "\n"
    pages["references.md"] = "\n\n".join(index) + "\n"
    return pages


# -- hooks -------------------------------------------------------------------------------------
def hooks_page() -> str:
    from benchgen import docs

    return (
        "# Plugin hooks\n\nThe hooks a plugin implements (`benchgen/hookspecs.py`), with their signatures; "
        "the [plugin author guide](../../plugin_authors.md) says how to use them.\n\n"
        + docs._hooks().replace("\n### ", "\n## ").replace("### ", "## ", 1)
        + "\n"
    )


# -- Python API --------------------------------------------------------------------------------
def api_modules() -> list[str]:
    """benchgen's top-level modules, those of the command line aside."""
    import benchgen

    found = pkgutil.iter_modules(benchgen.__path__)
    return sorted(f"benchgen.{m.name}" for m in found if not m.ispkg and m.name not in NOT_API)


def api_page() -> str:
    parts = [
        "# Python API\n\nbenchgen's contracts (suites, agents, scoring, protocols, the plugin registry) and "
        "the API for a training loop of your own, from the code's docstrings: every top-level module "
        "of `benchgen` but the command line's."
    ]
    for name in api_modules():
        parts.append(f"## `{name}`\n\n```{{eval-rst}}\n.. automodule:: {name}\n   :members:\n```")
    return "\n\n".join(parts) + "\n"


def _find(target: str) -> object | None:
    """The object a dotted ``benchgen....`` name names, or None when the code has no such name."""
    parts = target.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return None
            obj = getattr(obj, attr)
        return obj
    return None


def resolve_existing(app, env, node, contnode):
    """A docstring's reference to a benchgen name the site does not document on its own: a name
    a module imports from another (``benchgen.agent.AgentNeeds``) links to where it is defined;
    one the code has but the API page leaves out (a module of ``benchgen.run``) is shown as code
    without a link. A name the code does not have is left unresolved, and fails the build."""
    target = node.get("reftarget", "")
    if node.get("refdomain") != "py" or not target.startswith("benchgen."):
        return None
    obj = _find(target)
    if obj is None:
        return None
    home = f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', '')}"
    if home != target and home.startswith("benchgen."):
        found = env.get_domain("py").resolve_xref(
            env, node["refdoc"], app.builder, node["reftype"], home, node, contnode
        )
        if found is not None:
            return found
    return contnode


def pages() -> dict[str, str]:
    """Every reference page, by its path under ``reference/``."""
    from benchgen.registry import get_registry

    registry = get_registry()
    out = {
        "commands.md": commands_page(registry),
        "protocols.md": protocols_page(registry),
        "settings.md": settings_page(registry),
        "hooks.md": hooks_page(),
        "api.md": api_page(),
    }
    out.update(references_pages(registry))
    return out


def write(srcdir: Path) -> list[Path]:
    """Write the pages under ``srcdir/reference/generated``, and remove any other page there; an
    unchanged page is left alone (its time stamp too, so an incremental build does not read it
    again)."""
    root = Path(srcdir) / OUT
    written = []
    for rel, text in pages().items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.is_file() or path.read_text() != text:
            path.write_text(text)
        written.append(path)
    for stale in root.rglob("*.md"):
        if stale not in written:
            stale.unlink()
    return written


def _on_init(app) -> None:
    write(Path(app.srcdir))


def setup(app):
    app.connect("builder-inited", _on_init)
    app.connect("missing-reference", resolve_existing)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
