"""The installed package list, found rather than kept by hand.

The repository keeps the mission's layout (``agents/``, ``plugins/atari_saber/``, ...), and each
folder installs under an import name of its own (``benchgen_agents``, ``benchgen_atari_saber``,
...). That folder -> import name map is written once, in pyproject.toml's
``[tool.setuptools.package-dir]``; everything else about the build is declared there too. This
file only reads the map and lists every folder below each mapped root as a package, data folders
(``splits/``, ``data/``, ``tuned/``, templates) included, so that their files install as package
data. A new module, sub-package or data folder needs no edit here or in pyproject.toml.
"""

import sys
from pathlib import Path

from setuptools import find_namespace_packages, setup

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 builds get tomli from [build-system] requires
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent
# Byte-code caches are folders too; nothing else under a mapped root stays out of the install.
NOT_PACKAGES = ("__pycache__", "*.__pycache__")


def installed_packages() -> list[str]:
    """Every mapped root and every folder below it, as dotted import names."""
    roots = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    packages = []
    for name, folder in roots.items():
        below = find_namespace_packages(where=str(ROOT / folder), exclude=NOT_PACKAGES)
        packages += [name, *(f"{name}.{sub}" for sub in below)]
    return sorted(packages)


setup(packages=installed_packages())
