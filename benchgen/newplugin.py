"""``benchgen new-plugin NAME`` and ``benchgen new-agent NAME``: write a working plugin package.

The suite template (``benchgen/templates/plugin``) is a complete third-party plugin: a pyproject with
the ``benchgen`` entry point, one suite with a scripted environment, one split file, random and
reference scores with a scorer, and tests (the conformance kit, the installed entry point, a CLI
run) that pass as generated. The agent template (``benchgen/templates/agent``) is the same for
an agent: the entry point, an agent with a documented config dataclass, a README, and tests (the
agent conformance kit, the installed entry point, a CLI run on the kit's suites) that pass as
generated. Files ending in ``.tmpl`` are filled with :class:`string.Template` (``$$name``,
``$$module``, ``$$dist``, ``$$benchgen_version``); a ``__module__`` directory becomes the import
package.
"""

from __future__ import annotations

import keyword
import re
import string
from collections.abc import Iterable
from importlib import resources
from pathlib import Path

from benchgen import __version__
from benchgen.errors import UsageError

TEMPLATE_DIR = "templates/plugin"
AGENT_TEMPLATE_DIR = "templates/agent"
NAME_RE = re.compile(r"[a-z][a-z0-9_]*")


def names(name: str, what: str = "suite") -> dict[str, str]:
    """The template's variables for plugin ``name`` (also the ``what``'s and the entry point's name:
    "suite" or "agent")."""
    if not NAME_RE.fullmatch(name) or keyword.iskeyword(name):
        raise UsageError(
            f"plugin name '{name}' must be lowercase letters, digits and '_', starting with a letter "
            f"(it becomes the {what} name and part of the import name)"
        )
    return {
        "name": name,
        "module": f"benchgen_{name}",
        "dist": "benchgen-" + name.replace("_", "-"),
        "benchgen_version": __version__,
    }


def _files(node, prefix: str = ""):
    for child in sorted(node.iterdir(), key=lambda c: c.name):
        rel = f"{prefix}{child.name}"
        if child.is_dir():
            if child.name == "__pycache__":
                continue
            yield from _files(child, rel + "/")
        elif child.name.endswith(".tmpl"):
            yield rel, child


def refuse_shadowing(name: str, what: str = "suite") -> None:
    """A one-line ``UsageError`` if plugin ``name`` would shadow, or be shadowed by, an installed
    package: an installed plugin's entry point of that name (a first-party plugin's among them),
    or its import name ``benchgen_<name>`` already importable
    (two plugins of one name would stop benchgen's start-up; two packages of one import name
    hide each other)."""
    from importlib import metadata, util

    values = names(name, what)
    hint = f"pick another {what} name"
    shipped = {ep.name: ep.value for ep in metadata.entry_points(group="benchgen")}
    if name in shipped:
        raise UsageError(
            f"'{name}' is the name of an installed plugin ({shipped[name]}), which yours would shadow; {hint}"
        )
    module = values["module"]
    try:
        found = util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = True
    if found or module in {v.split(":")[0].split(".")[0] for v in shipped.values()}:
        raise UsageError(f"the import name {module} of '{name}' is already taken by an installed package; {hint}")


def installed_suites() -> list[str]:
    """The names of the suites the installed plugins contribute; none if the plugins do not load."""
    from benchgen.registry import Registry

    try:
        return sorted(Registry().suites)
    except Exception:  # noqa: BLE001 - a broken plugin must not stop a new package from being written
        return []


def installed_random_agent() -> str:
    """The installed agent of random play (``AgentSpec.random_play``) that a new suite plugin's
    tests and README run; a one-line ``UsageError`` where none is installed."""
    from benchgen.registry import Registry

    try:
        agent = Registry().random_play_agent()
    except Exception:  # noqa: BLE001 - said below, in one line
        agent = None
    if agent is None:
        raise UsageError(
            "no installed agent declares random play (AgentSpec.random_play), which a new suite plugin's tests "
            "run; check `benchgen plugins`"
        )
    return agent


def create_plugin(name: str, directory: Path | None = None, taken: Iterable[str] = ()) -> tuple[Path, list[Path]]:
    """Write the suite plugin package for ``name`` into ``directory`` (default ``./<dist>``);
    return it and the files written. Refuses a name that shadows an installed package
    (:func:`refuse_shadowing`) or names a suite in ``taken`` (the suites installed here), and a
    directory that exists and is not empty."""
    values = names(name)
    refuse_shadowing(name)
    if name in set(taken):
        raise UsageError(f"a suite named '{name}' is already installed (`benchgen list`); pick another name")
    return _write(TEMPLATE_DIR, {**values, "random_agent": installed_random_agent()}, directory)


def create_agent(name: str, directory: Path | None = None, taken: Iterable[str] = ()) -> tuple[Path, list[Path]]:
    """Write the agent plugin package for ``name`` into ``directory`` (default ``./<dist>``); return
    it and the files written. Refuses a name that shadows an installed package
    (:func:`refuse_shadowing`), a name in ``taken`` (the agents installed here: a second agent of
    that name would stop benchgen's start-up) and a directory that exists and is not empty."""
    values = names(name, "agent")
    refuse_shadowing(name, "agent")
    if name in set(taken):
        raise UsageError(f"an agent named '{name}' is already installed (`benchgen list`); pick another name")
    return _write(AGENT_TEMPLATE_DIR, values, directory)


def installed_agents() -> list[str]:
    """The names of the agents the installed plugins contribute; none if the plugins do not load
    (``benchgen plugins`` says why)."""
    from benchgen.registry import Registry

    try:
        return sorted(Registry().agents)
    except Exception:  # noqa: BLE001 - a broken plugin must not stop a new package from being written
        return []


def _write(template: str, values: dict[str, str], directory: Path | None) -> tuple[Path, list[Path]]:
    target = Path(directory) if directory is not None else Path(values["dist"])
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise UsageError(f"{target} exists and is not empty; pass --dir with a new or empty directory")
    root = resources.files("benchgen").joinpath(template)
    written = []
    for rel, source in _files(root):
        out = target / rel.replace("__module__", values["module"])[: -len(".tmpl")]
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(string.Template(source.read_text()).substitute(values))
        written.append(out)
    return target, written
