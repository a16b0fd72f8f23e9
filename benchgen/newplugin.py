"""``benchgen new-plugin NAME``: write a working plugin package from the template.

The template (``benchgen/templates/plugin``) is a complete third-party plugin: a pyproject with
the ``benchgen`` entry point, one suite with a scripted environment, one split file, random and
reference scores with a scorer, and tests (the conformance kit, the installed entry point, a CLI
run) that pass as generated. Files ending in ``.tmpl`` are filled with :class:`string.Template`
(``$$name``, ``$$module``, ``$$dist``, ``$$benchgen_version``); a ``__module__`` directory becomes
the import package.
"""

from __future__ import annotations

import keyword
import re
import string
from importlib import resources
from pathlib import Path

from benchgen import __version__
from benchgen.errors import UsageError

TEMPLATE_DIR = "templates/plugin"
NAME_RE = re.compile(r"[a-z][a-z0-9_]*")


def names(name: str) -> dict[str, str]:
    """The template's variables for plugin ``name`` (also the suite and entry-point name)."""
    if not NAME_RE.fullmatch(name) or keyword.iskeyword(name):
        raise UsageError(
            f"plugin name '{name}' must be lowercase letters, digits and '_', starting with a letter "
            "(it becomes the suite name and part of the import name)"
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


def create_plugin(name: str, directory: Path | None = None) -> tuple[Path, list[Path]]:
    """Write the package for ``name`` into ``directory`` (default ``./<dist>``); return it and
    the files written. Refuses a directory that exists and is not empty."""
    values = names(name)
    target = Path(directory) if directory is not None else Path(values["dist"])
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise UsageError(f"{target} exists and is not empty; pass --dir with a new or empty directory")
    root = resources.files("benchgen").joinpath(TEMPLATE_DIR)
    written = []
    for rel, source in _files(root):
        out = target / rel.replace("__module__", values["module"])[: -len(".tmpl")]
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(string.Template(source.read_text()).substitute(values))
        written.append(out)
    return target, written
