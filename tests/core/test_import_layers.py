"""The layering rule of docs/ARCHITECTURE.md, checked on every import statement of the code.

Layers, lowest first; a module may import its own layer and those below it, never above:

1. ground: ``benchgen`` itself and its contracts (errors, inputs, config, suite, protocols, agent, remote,
   scoring, hookspecs, registry, cpu_affinity, tuned, speeds, machine);
2. ``benchgen.results``: the run directory, the store and everything that reads them;
3. ``benchgen.run``: the run engine, which writes what results/ reads;
4. the commands: ``benchgen.cli``, ``benchgen.commands``, ``benchgen.newplugin``, ``benchgen.__main__``,
   and the public API for loops outside benchgen, ``benchgen.api``;
5. ``benchgen.testing``: the plugin conformance kit, which checks the product as a user drives it;
6. ``benchgen.docs``: the author guide's generator, which reads every layer's docstrings.

Plugins and agents (first- and third-party alike) import the ground layer and the reading side
of results (a plugin command may read a run directory), never the run engine: they meet core
through contracts, not through its machinery.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import tomllib

REPO = Path(__file__).resolve().parents[2]

GROUND = {
    "benchgen",
    "benchgen.errors",
    "benchgen.phases",
    "benchgen.needs",
    "benchgen.episodes",
    "benchgen.inputs",
    "benchgen.config",
    "benchgen.suite",
    "benchgen.protocols",
    "benchgen.agent",
    "benchgen.remote",
    "benchgen.joint_env",
    "benchgen.scoring",
    "benchgen.hookspecs",
    "benchgen.registry",
    "benchgen.cpu_affinity",
    "benchgen.capabilities",
    "benchgen.tuned",
    "benchgen.speeds",
    "benchgen.machine",
}
LAYERS = ["ground", "results", "run", "commands", "testing", "docs"]


COMMANDS = {"benchgen.cli", "benchgen.commands", "benchgen.api", "benchgen.newplugin", "benchgen.__main__"}


def layer_of(name: str) -> str | None:
    """The core layer of a module, or of a name imported from one (None: not core)."""
    if name == "benchgen":
        return "ground"
    for prefix, layer in [
        *((g, "ground") for g in GROUND - {"benchgen"}),
        *((c, "commands") for c in COMMANDS),
        *((f"benchgen.{n}", n) for n in ("results", "run", "testing", "docs")),
    ]:
        if name == prefix or name.startswith(prefix + "."):
            return layer
    return None


def _imports(nodes, package: str) -> list[tuple[int, str]]:
    """(line, module) of every import statement among ``nodes`` and inside them."""
    found = []
    for node in (n for top in nodes for n in ast.walk(top)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the file's package
                parts = package.split(".")
                module = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.append((node.lineno, module))
            # ``from benchgen.run import unit`` imports a module, not only an attribute
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return found


def imported_modules(path: Path, package: str) -> list[tuple[int, str]]:
    """Every import in a file, module-level and inside functions alike."""
    return _imports([ast.parse(path.read_text(), filename=str(path))], package)


def _core_files():
    for path in sorted((REPO / "benchgen").rglob("*.py")):
        rel = path.relative_to(REPO).with_suffix("")
        parts = list(rel.parts)
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        package = module if parts[-1] == "__init__" else ".".join(parts[:-1])
        yield path, module, package


def test_core_imports_only_its_own_layer_and_below():
    broken = []
    for path, module, package in _core_files():
        own = LAYERS.index(layer_of(module))
        for line, target in imported_modules(path, package):
            target_layer = layer_of(target)
            if target_layer is not None and LAYERS.index(target_layer) > own:
                broken.append(f"{path.relative_to(REPO)}:{line} ({layer_of(module)}) imports {target} ({target_layer})")
    assert not broken, "imports against the layering rule:\n" + "\n".join(broken)


PLUGIN_DIRS = ["plugins", "agents", "examples/atari_modes/src", "examples/minatar/src"]


@pytest.mark.parametrize("folder", PLUGIN_DIRS)
def test_plugins_and_agents_use_only_contracts_and_results(folder):
    broken = []
    for path in sorted((REPO / folder).rglob("*.py")):
        if "build" in path.relative_to(REPO).parts:
            continue
        for line, target in imported_modules(path, "plugin"):
            if layer_of(target) not in (None, "ground", "results"):
                broken.append(f"{path.relative_to(REPO)}:{line} imports {target}")
    assert not broken, "plugins and agents reach into core machinery:\n" + "\n".join(broken)


def _tree_modules(folder: str, name: str):
    """(path, module, package) of every module under ``folder``, installed as ``name``."""
    for path in sorted((REPO / folder).rglob("*.py")):
        rel = path.relative_to(REPO / folder).with_suffix("")
        if "build" in rel.parts or "templates" in rel.parts:
            continue
        parts = [name, *rel.parts]
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        package = module if parts[-1] == "__init__" else ".".join(parts[:-1])
        yield path, module, package


def _circle(files) -> str | None:
    """An import circle among ``files`` ((path, module, package) triples), as "a -> b -> a", or
    None. Every import counts: module-level, inside a function and under ``TYPE_CHECKING`` alike
    (a lazy import only hides a circle). A submodule importing its own package's names
    (``from benchgen.results.compare import stats``) is no circle: the package is already being
    imported when its submodules run."""
    modules = {module: (path, package) for path, module, package in files}
    graph = {
        m: {t for _, t in imported_modules(p, pkg) if t in modules and t != m and not m.startswith(t + ".")}
        for m, (p, pkg) in modules.items()
    }
    seen: dict[str, int] = {}
    stack: list[str] = []

    def visit(m):
        seen[m] = 1
        stack.append(m)
        for t in sorted(graph[m]):
            if seen.get(t) == 1:
                return " -> ".join(stack[stack.index(t) :] + [t])
            if t not in seen and (found := visit(t)):
                return found
        stack.pop()
        seen[m] = 2
        return None

    for m in sorted(graph):
        if m not in seen and (found := visit(m)):
            return found
    return None


# folder -> installed import name, from the one map (pyproject.toml, [tool.setuptools.package-dir])
PACKAGE_DIRS = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
TREES = {folder: name for name, folder in PACKAGE_DIRS.items()}


@pytest.mark.parametrize("folder", sorted(TREES))
def test_no_import_circle(folder):
    found = _circle(list(_tree_modules(folder, TREES[folder])))
    assert found is None, f"import circle: {found}"


def test_a_lazy_import_circle_is_found(tmp_path):
    """The check sees through imports inside functions and under TYPE_CHECKING."""
    (tmp_path / "a.py").write_text("def f():\n    from pkg.b import g\n")
    (tmp_path / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import f\n")
    files = [(tmp_path / f"{n}.py", f"pkg.{n}", "pkg") for n in "ab"]
    assert _circle(files) == "pkg.a -> pkg.b -> pkg.a"
