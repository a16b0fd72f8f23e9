"""Commands that only read the registry start fast: they never import torch (about 2.5 s on the
development machine, more than the rest of ``benchgen list`` together), and never load an Atari
ROM (about 70 ms a game: the 61 games' modes and difficulties come from a shipped table). torch
is imported when an agent is built, a ROM when an env is made (issue 29, "fast start"). The time
itself is measured by ``benchmarks/bench_fast_start.py``."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO, cli_env

#: runs one command in a fresh interpreter, then prints the modules it imported that no listing
#: needs and the ROMs it loaded (ale-py's ``ALEInterface.loadROM``, watched from its first import)
PROBE = """
import contextlib, importlib.abc, io, sys
loaded = []

class WatchAle(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != "ale_py":
            return None
        sys.meta_path.remove(self)
        import ale_py
        load = ale_py.ALEInterface.loadROM
        def spy(ale, rom):
            loaded.append(str(rom))
            return load(ale, rom)
        ale_py.ALEInterface.loadROM = spy
        return ale_py.__spec__

sys.meta_path.insert(0, WatchAle())
from benchgen.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        code = main(sys.argv[1:])
    except SystemExit as stop:  # --help
        code = stop.code
heavy = sorted(m for m in ("torch", "stable_baselines3", "ray", "ale_py") if m in sys.modules)
print(code, ",".join(heavy) or "-", len(loaded))
print(out.getvalue())
"""


@pytest.mark.parametrize(
    "args",
    [
        ["list"],
        ["--help"],
        ["list", "atari_saber"],
        ["references", "atari_saber"],  # with the atari_modes example's tables, where installed
        ["protocols", "atari_saber"],
        ["settings", "dqn"],
    ],
)
def test_commands_that_read_the_registry_do_not_import_torch_or_load_roms(args):
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        capture_output=True,
        text=True,
        env=cli_env(),
        cwd=REPO,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    code, heavy, roms = proc.stdout.splitlines()[0].split()
    assert code == "0", proc.stdout[-2000:] + proc.stderr[-2000:]
    # listing a suite's tasks asks ale-py whether each game's ROM is there (so imports it), no more
    allowed = {"ale_py"} if args[:1] == ["list"] and args[1:] else set()
    imported = set(heavy.split(",")) - {"-"} - allowed
    assert not imported, f"`benchgen {' '.join(args)}` imported {imported}: import it where an agent or env is built"
    assert roms == "0", f"`benchgen {' '.join(args)}` loaded {roms} Atari ROMs: read what it needs from a table"
    if args[:2] == ["list", "atari_saber"]:  # every game's flavors were listed, without a ROM
        assert "asteroids:m128d3" in proc.stdout and "ale_py" in heavy
    if args == ["list"]:  # the torch agents were registered, so the check above means something
        listed = proc.stdout.split()
        assert {"dqn", "rainbow", "rainbow_iqn", "ppo", "rainbow_joint"} <= set(listed), proc.stdout
