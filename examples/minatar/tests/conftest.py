"""Fixtures for the example plugin's tests.

In-process tests import ``benchgen_minatar`` (installed, or from ``src/`` when it is not). CLI
tests run ``python -m benchgen`` in a subprocess that finds the plugin **through its entry
point**, as users get it: the installed distribution if there is one (CI: ``pip install
./examples/minatar``), else a throwaway ``pip install --target`` of this directory.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DIST = "benchgen-minatar"

if importlib.util.find_spec("benchgen_minatar") is None:
    sys.path.insert(0, str(ROOT / "src"))


def installed() -> bool:
    """Whether the distribution is installed (not merely build metadata lying in ``src/``)."""
    try:
        dist = importlib.metadata.distribution(DIST)
    except importlib.metadata.PackageNotFoundError:
        return False
    return Path(str(dist.locate_file(""))).resolve() != (ROOT / "src").resolve()


@pytest.fixture(scope="session")
def plugin_env(tmp_path_factory) -> dict[str, str]:
    """Environment for subprocesses in which benchgen discovers the plugin from its entry point."""
    env = {k: v for k, v in os.environ.items() if k not in ("BENCHGEN_PLUGINS", "BENCHGEN_DISABLE_PLUGIN_AUTOLOAD")}
    env.setdefault("OMP_NUM_THREADS", "1")
    if not installed():
        # build from a copy: an in-tree build would leave egg-info and build/ in the source tree
        source = tmp_path_factory.mktemp("source") / "minatar"
        shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns("tests", "build", "*.egg-info", "__pycache__"))
        target = tmp_path_factory.mktemp("site")
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
                str(source),
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(target), env.get("PYTHONPATH")]))
    return env


@pytest.fixture(scope="session")
def benchgen(plugin_env):
    """``benchgen(*args, extra_env=None)`` -> CompletedProcess of ``python -m benchgen ARGS``."""

    def run(*args, extra_env: dict[str, str] | None = None, timeout: int = 600, cwd=None):
        env = dict(plugin_env)
        env.update(extra_env or {})
        return subprocess.run(
            [sys.executable, "-m", "benchgen", *map(str, args)],
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout,
            cwd=cwd,
        )

    return run
