"""End to end through benchgen's runner: the Sonic suite's code on Airstriker levels.

``tests/sonic/airstriker_plugin.py`` registers suite ``sonic_airstriker`` (the SonicSuite class
with two Airstriker levels and a 50-timestep limit); ``benchgen run`` builds its vector env,
wraps it in the core recorder and the suite's agent wrappers, and records every episode.
"""

from __future__ import annotations

import csv

from tests.conftest import run_cli

PLUGIN = "tests.sonic.airstriker_plugin"


def test_run_random_records_protocol_episodes(tmp_path):
    out = tmp_path / "run"
    run = run_cli(
        "run",
        "sonic_airstriker",
        "random",
        "--tasks",
        "airstriker-Level1",
        "--timesteps",
        "300",
        "--num-envs",
        "2",
        "--out",
        out,
        "--no-progress",
        plugins=PLUGIN,
        timeout=120,
    )
    exported = run_cli("export", out, "--format", "csv", "--output", tmp_path / "episodes.csv", plugins=PLUGIN)
    assert exported.returncode == 0, exported.stderr
    with open(tmp_path / "episodes.csv", newline="") as handle:
        episodes = list(csv.DictReader(handle))
    assert len(episodes) >= 6  # 300 timesteps = 150 per sub-environment, episodes of at most 50
    for ep in episodes:
        assert ep["task"] == "airstriker-Level1"
        assert ep["end_reason"] in {"completed", "life_lost", "time_limit"}
        assert int(ep["timesteps"]) <= 50 and int(ep["length_frames"]) <= 4 * int(ep["timesteps"])
        score, progress = float(ep["score"]), float(ep["x_progress"])
        if ep["end_reason"] == "completed":
            assert progress == 1.0 and 9000 < score <= 10000
        else:
            assert score == 9000 * progress
    assert run.returncode == 0, run.stderr[-2000:]
