"""What the tests of ``benchgen new-plugin`` and ``benchgen new-agent`` do with a generated package:
run its tests, and pip-install it into a throwaway directory put on ``PYTHONPATH`` (this venv is
not changed)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def package_env(**extra: str) -> dict[str, str]:
    """This process's environment without benchgen's test plugins, one OpenMP thread, ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in ("BENCHGEN_PLUGINS", "BENCHGEN_DISABLE_PLUGIN_AUTOLOAD")}
    env.setdefault("OMP_NUM_THREADS", "1")
    env.update(extra)
    return env


def run_pytest(cwd: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    """The package's own tests, as its author would run them."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def install_into(package: Path, target: Path) -> dict[str, str]:
    """``pip install --target`` the package; the environment in which it is installed."""
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--quiet"]
        + ["--target", str(target), str(package)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return package_env(PYTHONPATH=os.pathsep.join(filter(None, [str(target), os.environ.get("PYTHONPATH")])))


def plugin_line(env: dict[str, str], name: str) -> str:
    """The line ``benchgen plugins`` prints for plugin ``name``."""
    plugins = subprocess.run(
        [sys.executable, "-m", "benchgen", "plugins"], env=env, capture_output=True, text=True, timeout=300
    )
    return next(ln for ln in plugins.stdout.splitlines() if ln.startswith(f"{name} "))
