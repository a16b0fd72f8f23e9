"""Slow, real-length check that Rainbow-IQN learns a real SABER Atari game (about 4.5 hours on
2 CPU cores, much less on a GPU):

    python -m pytest -m slow tests/agents/rainbow_iqn/test_rainbow_atari_slow.py

Breakout (SABER random score 1.5), 2M frames with SABER's settings except ``precision=bfloat16``
(about 2x faster updates on a CPU with bfloat16 matrix units). The run records its episodes like
any run; the test reads them back and asks the last 100 episodes to average at least 3x the random
score and at least 2 points more than the agent's first 100 episodes (a freshly initialised noisy
network already scores about 2.3: it favours FIRE actions, which launch the ball).

Measured on the development machine (see docs/measurements/learning.md): 600K frames were not enough. Over 642
episodes the mean per 100K frames went 2.34, 2.34, 2.26, 2.39, 2.62, 2.46 (first 100 episodes
2.32, last 100 2.43), with SABER's learning rate of 5e-5 and 32K updates. The 2M-frame budget
follows Dopamine's IQN Breakout baselines (16 on average over frames 1M-2M, with epsilon-greedy
exploration); this check has not yet run to completion at 2M frames.

Why not a game where epsilon-greedy agents leave random play sooner (Road Runner: Dopamine's IQN
averages 290 over its first million frames against a random 11.5)? Rainbow-IQN explores with
noisy networks only; its initial policy there keeps to up/right/down actions, and on this
machine it played 592 episodes (197K frames) without a single point before it was stopped.
"""

from __future__ import annotations

import sqlite3

import pytest

from tests.conftest import run_cli

BREAKOUT_RANDOM = 1.5  # ../shared/data/world_records.csv
FRAMES = "2M"


@pytest.mark.slow
def test_rainbow_iqn_learns_breakout(tmp_path):
    out = tmp_path / "run"
    proc = run_cli(
        "run",
        "atari_saber",
        "rainbow_iqn",
        "--games",
        "breakout",
        "--frames",
        FRAMES,
        "--set",
        "precision=bfloat16",
        "--out",
        out,
        "--no-progress",
        timeout=6 * 3600,
    )
    assert proc.returncode == 0, proc.stderr
    conn = sqlite3.connect(out / "results.sqlite")
    scores = [r[0] for r in conn.execute("SELECT score FROM episodes ORDER BY id")]
    conn.close()
    assert len(scores) >= 200
    first, last = sum(scores[:100]) / 100, sum(scores[-100:]) / 100
    assert last >= 3 * BREAKOUT_RANDOM and last >= first + 2, (first, last)
