"""``benchgen new-agent NAME``: the generated agent package works as generated.

As for ``new-plugin`` (``test_new_plugin.py``): the generated agent conformance tests run from the
source tree (the package's own conftest puts ``src`` on the path); then the package is really
pip-installed, with ``pip install --target`` into a throwaway directory put on ``PYTHONPATH`` (this
venv is not changed), and its plugin tests (entry point, settings, a CLI run on the kit's
suites) run against the installed entry point, none skipped.
"""

from __future__ import annotations

import re

import pytest

from benchgen.config import field_docs
from tests.conftest import run_cli
from tests.testing_kit.generated_packages import install_into, package_env, plugin_line, run_pytest


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    root = tmp_path_factory.mktemp("newagent")
    proc = run_cli("new-agent", "sampler", "--dir", root / "pkg", plugins=None)
    assert proc.returncode == 0, proc.stderr
    assert "pip install -e" in proc.stdout and "agent sampler" in proc.stdout
    return root


def test_layout_and_entry_point(generated):
    pkg = generated / "pkg"
    files = sorted(str(p.relative_to(pkg)) for p in pkg.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    assert files == [
        "README.md",
        "pyproject.toml",
        "src/benchgen_sampler/__init__.py",
        "src/benchgen_sampler/agent.py",
        "src/benchgen_sampler/config.py",
        "tests/conftest.py",
        "tests/test_conformance.py",
        "tests/test_plugin.py",
    ]
    pyproject = (pkg / "pyproject.toml").read_text()
    assert 'name = "benchgen-sampler"' in pyproject
    assert '[project.entry-points.benchgen]\nsampler = "benchgen_sampler"' in pyproject
    assert "$" not in "".join((pkg / f).read_text() for f in files)
    assert "class TestConformance(AgentConformance)" in (pkg / "tests" / "test_conformance.py").read_text()


def test_config_fields_are_documented(generated, monkeypatch):
    # (modules imported from the test's temporary folders are forgotten when it ends: tests/conftest.py)
    monkeypatch.syspath_prepend(str(generated / "pkg" / "src"))
    from benchgen_sampler.config import ActionValueConfig

    docs = field_docs(ActionValueConfig)
    assert set(docs) == {"epsilon", "step_size", "seed_offset"} and all(docs.values())


def test_generated_conformance_tests_pass_from_the_source_tree(generated):
    proc = run_pytest(generated / "pkg", "tests/test_conformance.py", env=package_env())
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert re.search(r"\b14 passed\b", proc.stdout) and "skipped" not in proc.stdout, proc.stdout[-2000:]


def test_installed_package_is_discovered_and_its_tests_pass(generated):
    env = install_into(generated / "pkg", generated / "site")
    line = plugin_line(env, "sampler")
    assert line.split()[:4] == ["sampler", "benchgen-sampler", "0.1.0", "benchgen_sampler"] and line.endswith("ok")
    proc = run_pytest(generated / "pkg", "tests/test_plugin.py", env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert re.search(r"\b4 passed\b", proc.stdout) and "skipped" not in proc.stdout, proc.stdout[-2000:]


@pytest.mark.parametrize(
    "name, fragment",
    [
        ("My-Agent", "must be lowercase letters"),
        ("class", "must be lowercase letters"),
        ("random", "an agent named 'random' is already installed"),
    ],
)
def test_bad_names_are_one_line_errors(name, fragment, tmp_path):
    proc = run_cli("new-agent", name, cwd=tmp_path, plugins=None)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and fragment in proc.stderr, proc.stderr
    assert not any(tmp_path.iterdir())


def test_refuses_a_non_empty_directory(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "keep.txt").write_text("mine")
    proc = run_cli("new-agent", "x", "--dir", tmp_path / "pkg", plugins=None)
    assert proc.returncode == 2 and "not empty" in proc.stderr
    assert [p.name for p in (tmp_path / "pkg").iterdir()] == ["keep.txt"]


def test_works_with_a_broken_plugin_installed(tmp_path):
    proc = run_cli("new-agent", "x", "--dir", tmp_path / "pkg", plugins="no_such_plugin_module_zz")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "pkg" / "src" / "benchgen_x" / "agent.py").is_file()
