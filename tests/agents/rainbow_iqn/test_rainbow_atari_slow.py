"""Slow, real-length check that Rainbow-IQN learns a real SABER Atari game (about an hour on 2 CPU
cores, minutes on a GPU):

    python -m pytest -m slow tests/agents/rainbow_iqn/test_rainbow_atari_slow.py

Breakout (SABER random score 1.5), 600K frames with SABER's settings except
``precision=bfloat16`` (about 2x faster updates on a CPU with bfloat16 matrix units). The run
records its episodes like any run; the test reads them back and asks the last 20 episodes to
average at least 3x the random score and at least 2 points more than the agent's first 20
episodes (a freshly initialised noisy network already scores about 2: it favours FIRE actions,
which launch the ball).

Why not a game where ε-greedy agents leave random play sooner (Road Runner: Dopamine's IQN
averages 290 over its first million frames against a random 11.5)? Rainbow-IQN explores with
noisy networks only; its initial policy there keeps to up/right/down actions, and on this
machine it played 592 episodes (197K frames) without a single point before it was stopped.
"""

from __future__ import annotations

import sqlite3

import pytest

from tests.conftest import run_cli

BREAKOUT_RANDOM = 1.5  # ../shared/data/world_records.csv
FRAMES = "600k"


@pytest.mark.slow
def test_rainbow_iqn_learns_breakout(tmp_path):
    out = tmp_path / "run"
    proc = run_cli("run", "atari_saber", "rainbow_iqn", "--games", "breakout", "--frames", FRAMES,
                   "--set", "precision=bfloat16", "--out", out, "--no-progress", timeout=6 * 3600)
    assert proc.returncode == 0, proc.stderr
    conn = sqlite3.connect(out / "results.sqlite")
    scores = [r[0] for r in conn.execute("SELECT score FROM episodes ORDER BY id")]
    conn.close()
    assert len(scores) >= 100
    first, last = sum(scores[:20]) / 20, sum(scores[-20:]) / 20
    assert last >= 3 * BREAKOUT_RANDOM and last >= first + 2, (first, last)
