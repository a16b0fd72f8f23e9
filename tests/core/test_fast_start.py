"""Commands that only read the registry start fast: they never import torch (about 2.5 s on the
development machine, more than the rest of ``benchgen list`` together). torch is imported when an
agent is built (issue 29, "fast start")."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO, cli_env

#: runs one command in a fresh interpreter, then prints the modules it imported that no listing needs
PROBE = """
import contextlib, io, sys
from benchgen.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = main(sys.argv[1:])
heavy = sorted(m for m in ("torch", "stable_baselines3", "ray") if m in sys.modules)
print(code, ",".join(heavy) or "-", out.getvalue().count("\\n"))
print(out.getvalue())
"""


@pytest.mark.parametrize("args", [["list"], ["list", "atari_saber"], ["protocols", "atari_saber"], ["settings", "dqn"]])
def test_commands_that_read_the_registry_do_not_import_torch(args):
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        capture_output=True,
        text=True,
        env=cli_env(),
        cwd=REPO,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    code, heavy, _lines = proc.stdout.splitlines()[0].split()
    assert code == "0", proc.stdout[-2000:] + proc.stderr[-2000:]
    assert heavy == "-", f"`benchgen {' '.join(args)}` imported {heavy}: import it where an agent is built"
    if args == ["list"]:  # the torch agents were registered, so the check above means something
        listed = proc.stdout.split()
        assert {"dqn", "rainbow", "rainbow_iqn", "ppo", "rainbow_joint"} <= set(listed), proc.stdout
