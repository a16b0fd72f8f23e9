"""The examples in docstrings run, as the installed modules (``benchgen``, the first-party
plugins and agents), so a docstring cannot show a result the code does not give."""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import pkgutil
from pathlib import Path

import pytest
import tomllib

# every first-party package, by its installed name (pyproject.toml, [tool.setuptools.package-dir])
PACKAGES = list(
    tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
)


def _modules() -> list[str]:
    names = []
    for package in PACKAGES:
        root = importlib.import_module(package)
        names.append(package)
        names += [
            m.name
            for m in pkgutil.walk_packages(root.__path__, prefix=f"{package}.")
            if not m.name.endswith("__main__")
        ]
    return names


def _has_examples(name: str) -> bool:
    return ">>> " in (importlib.util.find_spec(name).loader.get_source(name) or "")


@pytest.mark.parametrize("name", [m for m in _modules() if _has_examples(m)])
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed"
