"""Deliberately broken plugins, really pip-installed (into a throwaway ``--target`` directory):
an import error and an unknown hook each stop start-up with one line naming the plugin and its
distribution; ``benchgen plugins`` lists the failure and exits 1."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

BROKEN = {
    "import_error": (
        "benchgen-broken-import",
        "benchgen_broken_import",
        textwrap.dedent("""\
        import benchgen
        import a_dependency_that_is_not_installed  # noqa: F401

        @benchgen.hookimpl
        def benchgen_suites():
            return []
        """),
    ),
    "unknown_hook": (
        "benchgen-broken-hook",
        "benchgen_broken_hook",
        textwrap.dedent("""\
        import benchgen

        @benchgen.hookimpl
        def benchgen_suite():  # misspelled: the hook is benchgen_suites
            return []
        """),
    ),
}


def _install(tmp_path, dist: str, module: str, source: str):
    pkg = tmp_path / "src"
    (pkg / module).mkdir(parents=True)
    (pkg / module / "__init__.py").write_text(source)
    (pkg / "pyproject.toml").write_text(
        textwrap.dedent(f"""\
        [build-system]
        requires = ["setuptools>=69"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "{dist}"
        version = "6.6.6"

        [project.entry-points.benchgen]
        broken = "{module}"

        [tool.setuptools]
        packages = ["{module}"]
        """)
    )
    target = tmp_path / "site"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--no-build-isolation",
            "--quiet",
            "--target",
            str(target),
            str(pkg),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    env = {k: v for k, v in os.environ.items() if k not in ("BENCHGEN_PLUGINS", "BENCHGEN_DISABLE_PLUGIN_AUTOLOAD")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(target), os.environ.get("PYTHONPATH")]))
    return env


def _benchgen(env, *args):
    return subprocess.run(
        [sys.executable, "-m", "benchgen", *args], env=env, capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_broken_plugin_stops_startup_naming_it(tmp_path, kind):
    dist, module, source = BROKEN[kind]
    env = _install(tmp_path, dist, module, source)
    for args in (["list"], ["run", "toy", "random"]):
        proc = _benchgen(env, *args)
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert "plugin 'broken'" in lines[0] and f"{dist} 6.6.6" in lines[0], lines[0]
        detail = "a_dependency_that_is_not_installed" if kind == "import_error" else "benchgen_suite"
        assert detail in lines[0]
    listing = _benchgen(env, "plugins")
    assert listing.returncode == 1
    line = next(ln for ln in listing.stdout.splitlines() if ln.startswith("broken "))
    assert dist in line and "FAILED" in line
    # the escape hatch: autoload off, benchgen starts
    assert _benchgen({**env, "BENCHGEN_DISABLE_PLUGIN_AUTOLOAD": "1"}, "list").returncode == 0
