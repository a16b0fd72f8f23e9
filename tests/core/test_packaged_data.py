"""What an install of benchgen carries, checked on a wheel built from this tree.

The repository's folders install under other names (pyproject.toml's
``[tool.setuptools.package-dir]``: ``agents/`` as ``benchgen_agents``, ...), and setup.py lists
every folder below them as a package. A user relies on two things from that: every module
imports by its installed name from the install itself (not from this checkout), and the files
next to the modules (split YAML, tuned settings, score tables, templates) ship with them.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import tomllib

REPO = Path(__file__).resolve().parents[2]
PACKAGE_DIRS: dict[str, str] = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
# what a build never carries: byte code
BUILD_LEFTOVERS = ("__pycache__",)


def source_files() -> dict[str, Path]:
    """Installed path (``benchgen_agents/ppo/agent.py``) -> source file, for every file under a mapped folder."""
    found = {}
    for name, folder in PACKAGE_DIRS.items():
        root = REPO / folder
        for path in root.rglob("*"):
            rel = path.relative_to(root)
            if path.is_file() and not any(part in BUILD_LEFTOVERS for part in rel.parts) and path.suffix != ".pyc":
                found["/".join([name, *rel.parts])] = path
    return found


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel built (offline, with this environment's setuptools) from a copy of the files the build reads."""
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(REPO / name, src / name)
    for folder in PACKAGE_DIRS.values():
        shutil.copytree(REPO / folder, src / folder, ignore=shutil.ignore_patterns(*BUILD_LEFTOVERS, "*.pyc"))
    out = tmp_path_factory.mktemp("wheel")
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), "."]
    subprocess.run(command, cwd=src, check=True, capture_output=True)
    (found,) = out.glob("benchgen-*.whl")
    return found


def test_every_file_under_the_mapped_folders_is_in_the_wheel(wheel):
    with zipfile.ZipFile(wheel) as archive:
        shipped = {n for n in archive.namelist() if ".dist-info/" not in n}
    expected = source_files()
    missing = sorted(str(expected[n].relative_to(REPO)) for n in expected.keys() - shipped)
    assert not missing, (
        f"files an install would leave out (a data file needs its suffix in [tool.setuptools.package-data]): {missing}"
    )
    assert shipped == expected.keys(), f"the wheel carries files from nowhere: {sorted(shipped - expected.keys())}"
    assert any(n.startswith("benchgen_atari_saber/splits/") and n.endswith(".yaml") for n in shipped)


def _module_name(installed: str) -> str:
    parts = installed.removesuffix(".py").split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_every_module_imports_by_its_installed_name_from_the_install(wheel, tmp_path):
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)  # a pure-Python wheel, unpacked, is what pip installs
    modules = sorted(_module_name(n) for n in source_files() if n.endswith(".py") and not n.endswith("__main__.py"))
    script = (
        "import importlib, json, sys\n"
        f"sys.path.insert(0, {str(site)!r})\n"
        f"print(json.dumps({{m: importlib.import_module(m).__file__ for m in {modules!r}}}))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    files = json.loads(done.stdout.splitlines()[-1])
    elsewhere = {m: f for m, f in files.items() if not Path(f).is_relative_to(site)}
    assert not elsewhere, f"modules imported from outside the install: {elsewhere}"
