"""``benchgen video`` through the Sonic suite's code (the bundled Airstriker ROM): the emulator's
full 224x320 screen, one frame per agent step."""

from __future__ import annotations

import imageio.v3 as iio

from tests.conftest import run_cli

PLUGIN = "tests.sonic.airstriker_plugin"


def test_a_sonic_video_shows_the_full_genesis_screen(tmp_path):
    run = tmp_path / "run"
    args = ("run", "sonic_airstriker", "random", "--tasks", "airstriker-Level1", "--timesteps", "200", "--out", run)
    proc = run_cli(*args, "--no-progress", plugins=PLUGIN)
    assert proc.returncode == 0, proc.stderr[-2000:]
    proc = run_cli("video", run, "--task", "airstriker-Level1", plugins=PLUGIN)
    assert proc.returncode == 0, proc.stderr[-2000:]
    frames = iio.imread(proc.stdout.strip())
    assert frames.shape[1:] == (448 + 32, 640, 3)  # 224x320 doubled, a 28-pixel banner, padded to 16
    assert frames.shape[0] >= 2
