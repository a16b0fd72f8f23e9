"""Generate the plugin author guide (``docs/plugin_authors.md``) from the code's docstrings.

    python -m benchgen.docs            # rewrite docs/plugin_authors.md
    python -m benchgen.docs --check    # exit 1 if the committed guide is stale

The prose lives in ``benchgen/templates/docs/plugin_authors.md.in``; every ``{{name}}`` in it is
replaced by a section generated here from the hookspec docstrings, the ``Suite``/``EpisodeEnd``/
``Split``/``Scorer`` definitions and the conformance kit, so the guide cannot drift from them.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import re
import sys
import textwrap
from collections.abc import Callable
from importlib import resources
from pathlib import Path

TEMPLATE = "templates/docs/plugin_authors.md.in"
DEFAULT_OUTPUT = Path(__file__).resolve().parents[1] / "docs" / "plugin_authors.md"


# -- docstring -> markdown ---------------------------------------------------------------------
_ROLE = re.compile(r":(?:class|meth|func|data|attr|mod|exc):`~?([^`]+)`")


def md(text: str | None) -> str:
    """A docstring as Markdown: dedented, ``literal`` -> `literal`, Sphinx roles -> code."""
    if not text:
        return ""
    text = inspect.cleandoc(text)
    text = _ROLE.sub(lambda m: f"`{m.group(1)}`", text)
    text = text.replace("``", "`")
    # reST literal blocks ("...::" + indented block) -> fenced code
    out: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.rstrip().endswith("::") and i + 1 < len(lines) and not lines[i + 1].strip():
            out.append(line.rstrip()[:-1].rstrip() + (":" if line.rstrip()[:-2].strip() else ""))
            j = i + 2
            block = []
            while j < len(lines) and (not lines[j].strip() or lines[j].startswith(" ")):
                block.append(lines[j])
                j += 1
            while block and not block[-1].strip():
                block.pop()
            out += ["", "```", *textwrap.dedent("\n".join(block)).splitlines(), "```", ""]
            i = j
            continue
        out.append(line)
        i += 1
    return "\n".join(out).strip()


def signature(func: Callable) -> str:
    """``(self, tasks: Sequence[str], seed: int, *, mode: str = 'train') -> SuiteVectorEnv``,
    with string annotations shown unquoted and defaults as Python literals."""
    sig = inspect.signature(func)

    def ann(a):
        return a if isinstance(a, str) else inspect.formatannotation(a)

    params = []
    star = False
    for p in sig.parameters.values():
        if p.kind is p.KEYWORD_ONLY and not star:
            params.append("*")
            star = True
        if p.kind is p.VAR_POSITIONAL:
            star = True
        text = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "") + p.name
        if p.annotation is not p.empty:
            text += f": {ann(p.annotation)}"
        if p.default is not p.empty:
            text += f" = {p.default!r}" if p.annotation is not p.empty else f"={p.default!r}"
        params.append(text)
    out = f"({', '.join(params)})"
    if sig.return_annotation is not sig.empty:
        out += f" -> {ann(sig.return_annotation)}"
    return out


# -- class attributes documented with "#:" comments -------------------------------------------
def attribute_docs(cls: type) -> list[tuple[str, str, str, str]]:
    """(name, annotation, default, doc) of each class attribute with a ``#:`` comment above it."""
    source = textwrap.dedent(inspect.getsource(cls))
    lines = source.splitlines()
    tree = ast.parse(source).body[0]
    out = []
    for node in tree.body:  # type: ignore[attr-defined]
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            name, annotation = node.target.id, ast.get_source_segment(source, node.annotation) or ""
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name, annotation = node.targets[0].id, ""
        else:
            continue
        comments = []
        k = node.lineno - 2
        while k >= 0 and lines[k].strip().startswith("#:"):
            comments.insert(0, lines[k].strip()[2:].strip())
            k -= 1
        if not comments:
            continue
        default = ast.get_source_segment(source, node.value) if node.value is not None else ""
        out.append((name, annotation, default or "", " ".join(comments)))
    return out


def _attributes_list(cls: type) -> str:
    rows = []
    for name, annotation, default, doc in attribute_docs(cls):
        typ = f": {annotation}" if annotation else ""
        rows.append(f"- `{name}{typ} = {default}`: {md(doc)}")
    return "\n".join(rows)


def _methods(cls: type, names: list[str]) -> str:
    out = []
    for name in names:
        func = cls.__dict__[name]
        abstract = " (abstract: implement it)" if getattr(func, "__isabstractmethod__", False) else ""
        out.append(f"- `{name}{signature(func)}`{abstract}: " + md(func.__doc__).replace("\n", "\n  "))
    return "\n".join(out)


def _fields(cls: type) -> str:
    from benchgen.config import field_docs

    docs = field_docs(cls)
    out = []
    for f in dataclasses.fields(cls):
        typ = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
        if f.default is not dataclasses.MISSING:
            default = f" = {f.default!r}"
        elif f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
            default = f" = {f.default_factory()!r}"  # type: ignore[misc]
        else:
            default = ""
        doc = md(docs.get(f.name, ""))
        out.append(f"- `{f.name}: {typ}{default}`" + (f": {doc}" if doc else ""))
    return "\n".join(out)


# -- the sections ------------------------------------------------------------------------------
def _hooks() -> str:
    from benchgen import hookspecs

    out = []
    for name, func in inspect.getmembers(hookspecs, inspect.isfunction):
        opts = getattr(func, "benchgen_spec", None)
        if opts is None:
            continue
        line = func.__code__.co_firstlineno
        out.append((line, name, func, opts))
    parts = []
    for _line, name, func, opts in sorted(out):
        flags = []
        if opts.get("firstresult"):
            flags.append("first result wins: the first plugin returning something other than None decides")
        if opts.get("historic"):
            flags.append("historic: plugins registered later still receive earlier calls")
        head = f"### `{name}{signature(func)}`"
        body = md(func.__doc__)
        parts.append("\n\n".join([head] + ([f"*{'; '.join(flags)}.*"] if flags else []) + [body]))
    return "\n\n".join(parts)


def _registry() -> str:
    from benchgen import registry

    return md(registry.__doc__)


def _suite() -> str:
    from benchgen.suite import Suite

    methods = [
        "tasks",
        "protocol",
        "make_env",
        "check_task_available",
        "task_available",
        "agent_wrappers",
        "action_semantics",
        "splits",
        "random_scores",
        "reference_scores",
        "scorer",
        "package_files",
    ]
    return (
        f"{md(Suite.__doc__)}\n\nClass attributes:\n\n{_attributes_list(Suite)}\n\n"
        f"Methods:\n\n{_methods(Suite, methods)}"
    )


def _documented_fields(cls: type) -> str:
    """A dataclass's qualified name, docstring and documented fields."""
    return f"`{cls.__module__}.{cls.__qualname__}`: {md(cls.__doc__)}\n\n{_fields(cls)}"


def _agent_needs() -> str:
    from benchgen.agent import AgentNeeds

    return _documented_fields(AgentNeeds)


def _env_contract() -> str:
    from benchgen import suite

    doc = md(suite.__doc__)
    start = doc.find("The environment contract")
    return doc[start:] if start >= 0 else doc


def _vector_env() -> str:
    from benchgen.suite import SuiteVectorEnv

    return f"{_attributes_list(SuiteVectorEnv)}\n{_methods(SuiteVectorEnv, ['pop_episode_ends'])}"


def _episode_end() -> str:
    from benchgen.suite import EpisodeEnd

    return _documented_fields(EpisodeEnd)


def _split() -> str:
    from benchgen.suite import Split

    return _documented_fields(Split)


def _load_split_yaml() -> str:
    from benchgen.suite import load_split_yaml

    return f"`benchgen.suite.load_split_yaml{signature(load_split_yaml)}`: {md(load_split_yaml.__doc__)}"


def _scoring() -> str:
    from benchgen import scoring

    return md(scoring.__doc__)


def _scorer() -> str:
    from benchgen.scoring import Scorer

    methods = ["task_score", "baselines", "reference", "score"]
    return (
        f"`benchgen.scoring.Scorer(random_scores, references)`: {md(Scorer.__doc__)}\n\n"
        f"{_attributes_list(Scorer)}\n{_methods(Scorer, methods)}"
    )


def _reference_scores() -> str:
    from benchgen.scoring import ReferenceScores

    return _documented_fields(ReferenceScores)


def _remote_envs() -> str:
    from benchgen import remote
    from benchgen.agent import TrainingContext
    from benchgen.remote import EpisodeCollector, RemoteEnvFactory

    return (
        f"{md(remote.__doc__)}\n\nThe context's side (`benchgen.agent.TrainingContext`):\n\n"
        f"{_methods(TrainingContext, ['remote_envs', 'report_remote_episodes', 'ray'])}\n\n"
        f"`benchgen.remote.RemoteEnvFactory`: {md(RemoteEnvFactory.__doc__)}\n\n"
        f"`benchgen.remote.EpisodeCollector`: {md(EpisodeCollector.__doc__)}\n\n"
        f"{_methods(EpisodeCollector, ['report'])}"
    )


def _kit_settings() -> str:
    from benchgen.testing.conformance import SuiteConformance

    return _attributes_list(SuiteConformance)


def _kit_checks() -> str:
    from benchgen.testing.checks import CHECKS

    return "\n".join(f"- `{name}`: {md(text)}" for name, text in CHECKS)


SECTIONS: dict[str, Callable[[], str]] = {
    "registry": _registry,
    "hooks": _hooks,
    "suite": _suite,
    "agent_needs": _agent_needs,
    "env_contract": _env_contract,
    "vector_env": _vector_env,
    "episode_end": _episode_end,
    "split": _split,
    "load_split_yaml": _load_split_yaml,
    "scoring": _scoring,
    "scorer": _scorer,
    "reference_scores": _reference_scores,
    "remote_envs": _remote_envs,
    "kit_settings": _kit_settings,
    "kit_checks": _kit_checks,
}


def render() -> str:
    """The guide's full text."""
    text = resources.files("benchgen").joinpath(TEMPLATE).read_text()
    missing = set(re.findall(r"\{\{(\w+)\}\}", text)) - set(SECTIONS)
    if missing:
        raise KeyError(f"{TEMPLATE} names unknown sections {sorted(missing)}")
    for name, make in SECTIONS.items():
        text = text.replace("{{" + name + "}}", make())
    return text.rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchgen.docs", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the guide differs from the docstrings")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="file to write or check")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = args.output.read_text() if args.output.is_file() else ""
        if current != text:
            print(f"{args.output} is stale: run `python -m benchgen.docs`", file=sys.stderr)
            return 1
        return 0
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text)
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
