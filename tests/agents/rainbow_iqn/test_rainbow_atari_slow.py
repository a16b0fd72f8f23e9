"""Slow, real-length check that Rainbow-IQN learns a real SABER Atari game (hours on 2 CPU cores).

    python -m pytest -m slow tests/agents/rainbow_iqn/test_rainbow_atari_slow.py

Freeway (SABER random score 0.0) rewards crossing the road; a policy that learned to press UP
scores ~20 per episode. The run uses the paper's settings except ``precision=bfloat16`` (about 3x
faster updates on CPU) and records its episodes like any run; the test reads them back.
"""

from __future__ import annotations

import sqlite3

import pytest

from tests.conftest import run_cli

FREEWAY_RANDOM = 0.0  # ../shared/data/world_records.csv


@pytest.mark.slow
def test_rainbow_iqn_learns_freeway(tmp_path):
    out = tmp_path / "run"
    proc = run_cli("run", "atari_saber", "rainbow_iqn", "--games", "freeway", "--frames", "600k",
                   "--set", "precision=bfloat16", "--out", out, "--no-progress", timeout=6 * 3600)
    assert proc.returncode == 0, proc.stderr
    conn = sqlite3.connect(out / "results.sqlite")
    scores = [r[0] for r in conn.execute("SELECT score FROM episodes ORDER BY id")]
    conn.close()
    assert len(scores) >= 10
    last = scores[-5:]
    assert sum(last) / len(last) > FREEWAY_RANDOM + 5, scores
