"""Core names no suite and no agent (issue 46, 1): whatever core needs to know of one, it asks
through a declared trait or a hook, never by name.

The names are those of every suite and agent the installed plugins register (the registry as
``benchgen list`` sees it); the files are every file under ``benchgen/``: code, the templates of
``benchgen new-plugin``/``new-agent`` and data files, byte code aside.

Two rules, by the kind of name:

1. A distinctive name (``atari_saber``, ``procgen``, ``ppo``, ``rainbow_iqn``, ...) must not occur
   at all as a whole token, in code, comments, docstrings or data. A token is bounded by
   characters that are not letters, digits or ``_``, so ``benchgen_procgen`` or ``ppo_joint`` is
   another token (``ppo_joint`` is checked as a name of its own).
2. A generic name, one a suite or agent shares with an English word or a library (:data:`GENERIC`:
   "random" play, ``import gymnasium``), is matched only where it is used as a name: a string
   literal whose whole value is the name (Python's tokenizer reads ``.py`` files; quotes in other
   text), a CSV cell, or a YAML scalar. Prose and identifiers (``np.random``, "uniformly random
   actions", ``gymnasium.vector``) pass. :data:`HOMONYMS` names the few modules where such a
   literal means the other thing, each with that meaning.

The plugin author guide's template (``benchgen/templates/docs/``) is left out: its prose points
authors at the first-party plugins as worked examples by their paths, which is documentation
rendered into ``docs/``, not knowledge core acts on.
"""

from __future__ import annotations

import ast
import csv
import io
import re
import tokenize
from pathlib import Path

import pytest
import yaml

from benchgen.registry import get_registry
from benchgen.run.planning.plan import CORE_SOFTWARE

REPO = Path(__file__).resolve().parents[2]
CORE = REPO / "benchgen"

#: names that are also English words or a library's name (rule 2)
GENERIC = {"random", "const", "brute", "jerk", "perturb", "gymnasium"}

#: (generic name, file under benchgen/) -> what the literal means there instead of the suite or agent
HOMONYMS = {
    ("random", "benchgen/results/compare/build.py"): "the random-play normalization (Bellemare et al. 2013, 4.1.1)",
    ("random", "benchgen/commands/results.py"): "--normalization random, the same normalization",
    ("gymnasium", "benchgen/run/planning/plan.py"): "the gymnasium library's distribution, whose version a run records",
}

#: folders left out (module docstring)
LEFT_OUT = (CORE / "templates" / "docs",)


def registered_names() -> set[str]:
    registry = get_registry()
    return set(registry.suites) | set(registry.agents)


def core_files() -> list[Path]:
    return sorted(
        p
        for p in CORE.rglob("*")
        if p.is_file()
        and "__pycache__" not in p.parts
        and p.suffix != ".pyc"
        and not any(p.is_relative_to(folder) for folder in LEFT_OUT)
    )


def _token(name: str) -> re.Pattern:
    return re.compile(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])")


def _python_literals(text: str) -> list[tuple[int, str]]:
    """(line, value) of every plain string literal of Python source (f-strings: their text)."""
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type != tokenize.STRING:
            continue
        try:
            value = ast.literal_eval(tok.string)
        except (ValueError, SyntaxError):  # an f-string: its text without the quotes
            value = tok.string.lstrip("rRbBfFuU").strip("\"'")
        if isinstance(value, str):
            out.append((tok.start[0], value))
    return out


def _yaml_scalars(node) -> list[str]:
    if isinstance(node, dict):
        return [s for k, v in node.items() for s in (*_yaml_scalars(k), *_yaml_scalars(v))]
    if isinstance(node, list):
        return [s for item in node for s in _yaml_scalars(item)]
    return [node] if isinstance(node, str) else []


def name_uses(path: Path, text: str, name: str) -> list[str]:
    """Where ``text`` (the file ``path``) uses ``name`` as a name, by the module docstring's
    rules; each as ``line N: ...``."""
    if name not in GENERIC:
        return [
            f"line {n}: {line.strip()[:100]}"
            for n, line in enumerate(text.splitlines(), 1)
            if _token(name).search(line)
        ]
    found = []
    if path.suffix == ".py":
        found += [f"line {n}: {value!r}" for n, value in _python_literals(text) if value == name]
    else:
        quoted = re.compile(rf"([\"']){re.escape(name)}\1")
        found += [
            f"line {n}: {line.strip()[:100]}" for n, line in enumerate(text.splitlines(), 1) if quoted.search(line)
        ]
    if path.suffix == ".csv":
        rows = csv.reader(line for line in text.splitlines() if not line.startswith("#"))
        found += [f"row {n}: {row}" for n, row in enumerate(rows, 1) if any(cell.strip() == name for cell in row)]
    if path.suffix in (".yaml", ".yml"):
        found += [f"YAML value {name!r}" for s in _yaml_scalars(yaml.safe_load(text)) if s.strip() == name]
    return found


def test_the_rules_catch_a_name_and_let_the_homonyms_pass(tmp_path):
    """The rules themselves, on text written here: a distinctive name anywhere, a generic one only
    as a name."""
    py = tmp_path / "m.py"
    text = '"""Uniformly random actions."""\nimport numpy as np\nx = np.random.default_rng()\nAGENT = "random"\n'
    assert name_uses(py, text, "random") == ["line 4: 'random'"]
    assert name_uses(py, "# as ppo does\n", "ppo") == ["line 1: # as ppo does"]
    assert name_uses(py, "import benchgen_procgen\nname = 'ppo_joint'\n", "procgen") == []
    assert name_uses(tmp_path / "t.csv", "agent,fps\nrandom,3\n", "random") == ["row 2: ['random', '3']"]
    assert name_uses(tmp_path / "t.yaml", "smoke:\n  agent: random\n", "random") == ["YAML value 'random'"]


def test_core_records_no_plugins_library():
    """Core records its own distributions' versions in every run; a suite's or an agent's library
    is that plugin's to declare (``Suite.software``, ``AgentSpec.software``), never core's."""
    registry = get_registry()
    declared = {d for suite in registry.suites.values() for d in suite.software}
    declared |= {d for spec in registry.agents.values() for d in spec.software}
    assert declared and not declared & set(CORE_SOFTWARE), sorted(declared & set(CORE_SOFTWARE))


def test_the_names_are_known():
    """The registry holds first-party suites and agents: the check below checks something."""
    names = registered_names()
    assert len(names) >= 10 and GENERIC & names, sorted(names)


@pytest.mark.parametrize("path", core_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_core_names_no_suite_or_agent(path):
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return  # not text
    rel = str(path.relative_to(REPO))
    found = {
        name: uses
        for name in sorted(registered_names())
        if (name, rel) not in HOMONYMS and (uses := name_uses(path, text, name))
    }
    assert not found, (
        f"{rel} names suites or agents {found}: core asks a declared trait or a hook instead "
        "(benchgen.hookspecs, AgentSpec, Suite), or a template uses a placeholder"
    )
