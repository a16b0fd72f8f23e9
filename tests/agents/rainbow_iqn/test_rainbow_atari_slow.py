"""Slow, real-length check that Rainbow-IQN learns a real SABER Atari game (about an hour on 2 CPU
cores, minutes on a GPU):

    python -m pytest -m slow tests/agents/rainbow_iqn/test_rainbow_atari_slow.py

Road Runner (SABER random score 7.0) is the game where IQN's published learning curves leave random
play soonest: Dopamine's IQN baselines (sticky actions, the same 80K-frame learning start and one
update per 4 steps) average 290 over their first million frames and about 6,700 over the second.
The run uses SABER's settings except ``precision=bfloat16`` (about 2x faster updates on a CPU
with bfloat16 matrix units) and records its episodes like any run; the test reads them back and
asks the last 20 episodes to average at least 5x the random score.
"""

from __future__ import annotations

import sqlite3

import pytest

from tests.conftest import run_cli

ROAD_RUNNER_RANDOM = 7.0  # ../shared/data/world_records.csv
FRAMES = "500k"


@pytest.mark.slow
def test_rainbow_iqn_learns_road_runner(tmp_path):
    out = tmp_path / "run"
    proc = run_cli("run", "atari_saber", "rainbow_iqn", "--games", "road_runner", "--frames", FRAMES,
                   "--set", "precision=bfloat16", "--out", out, "--no-progress", timeout=6 * 3600)
    assert proc.returncode == 0, proc.stderr
    conn = sqlite3.connect(out / "results.sqlite")
    scores = [r[0] for r in conn.execute("SELECT score FROM episodes ORDER BY id")]
    conn.close()
    assert len(scores) >= 40
    last = scores[-20:]
    assert sum(last) / len(last) >= 5 * ROAD_RUNNER_RANDOM, scores
