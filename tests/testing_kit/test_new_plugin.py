"""``benchgen new-plugin NAME``: the generated package works as generated.

The generated conformance tests run from the source tree (the package's own conftest puts
``src`` on the path); then the package is really pip-installed, with ``pip install --target``
into a throwaway directory put on ``PYTHONPATH`` (this venv is not changed), and its CLI tests
run against the installed entry point (none may skip).
"""

from __future__ import annotations

import re

import pytest

from tests.conftest import run_cli
from tests.testing_kit.generated_packages import install_into, package_env, plugin_line, run_pytest


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    root = tmp_path_factory.mktemp("newplugin")
    proc = run_cli("new-plugin", "corridors", "--dir", root / "pkg", plugins=None)
    assert proc.returncode == 0, proc.stderr
    assert "pip install -e" in proc.stdout
    return root


def test_layout_and_entry_point(generated):
    pkg = generated / "pkg"
    files = sorted(str(p.relative_to(pkg)) for p in pkg.rglob("*") if p.is_file())
    assert files == [
        "README.md",
        "pyproject.toml",
        "src/benchgen_corridors/__init__.py",
        "src/benchgen_corridors/data/optimal_scores.csv",
        "src/benchgen_corridors/data/random_scores.csv",
        "src/benchgen_corridors/splits/default.yaml",
        "tests/conftest.py",
        "tests/test_conformance.py",
        "tests/test_plugin.py",
    ]
    pyproject = (pkg / "pyproject.toml").read_text()
    assert 'name = "benchgen-corridors"' in pyproject
    assert '[project.entry-points.benchgen]\ncorridors = "benchgen_corridors"' in pyproject
    assert "$" not in "".join((pkg / f).read_text() for f in files)


def test_generated_tests_pass_from_the_source_tree(generated):
    proc = run_pytest(generated / "pkg", "tests/test_conformance.py", env=package_env())
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert re.search(r"\b11 passed\b", proc.stdout), proc.stdout[-2000:]  # every SuiteConformance test


def test_installed_package_is_discovered_and_its_tests_pass(generated):
    env = install_into(generated / "pkg", generated / "site")
    line = plugin_line(env, "corridors")
    assert line.split()[:4] == ["corridors", "benchgen-corridors", "0.1.0", "benchgen_corridors"] and line.endswith(
        "ok"
    )
    proc = run_pytest(generated / "pkg", "tests/test_plugin.py", env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert re.search(r"\b3 passed\b", proc.stdout) and "skipped" not in proc.stdout, proc.stdout[-2000:]


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["new-plugin", "My-Suite"], "must be lowercase letters"),
        (["new-plugin", "class"], "must be lowercase letters"),
    ],
)
def test_bad_names_are_one_line_errors(args, fragment, tmp_path):
    proc = run_cli(*args, cwd=tmp_path, plugins=None)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and fragment in proc.stderr
    assert not any(tmp_path.iterdir())


def test_refuses_a_non_empty_directory(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "keep.txt").write_text("mine")
    proc = run_cli("new-plugin", "x", "--dir", tmp_path / "pkg", plugins=None)
    assert proc.returncode == 2 and "not empty" in proc.stderr
    assert [p.name for p in (tmp_path / "pkg").iterdir()] == ["keep.txt"]
