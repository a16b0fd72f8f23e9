"""MinAtar Breakout learning checks, one per value-based agent and PPO (slow: run with one command each).

    python -m pytest -m slow examples/minatar/tests/test_minatar_learning.py -k dqn
    (or -k rainbow_iqn, -k "rainbow and not iqn", -k ppo)

Each runs ``benchgen run minatar AGENT --tasks breakout --frames N`` with the suite's own settings
for the agent (``src/benchgen_minatar/tuned/AGENT.yaml``: Young and Tian 2019's DQN schedule,
replay 100K, one update per frame, target copy every 1,000 frames, 5,000 frames of random play
first; PPO on 8 environments) and asserts
that the mean score of the last 100 training episodes reaches ``REQUIRED``.

Threshold: 10 times the random score. Young and Tian's README gives random play on Breakout a
mean return of 0.5 (``examples/random_play.py``, 1,000 episodes; benchgen measured 0.51 under
its own protocol, ``data/random_scores.csv``), and their DQN and AC(lambda) curves (the paper's
Figure 3, 5M frames, 30 seeds) rise well above that within the first million frames; the
figure gives no table to take a number from, so the check asks for a clear multiple of
random at 1M frames rather than a point on their curve. On 2 CPU cores one run takes one to
two hours (a million updates for the value-based agents). ``rainbow_iqn`` is checked at 250K
frames: each of its updates carries 64 + 64 quantile samples per transition (the IQN paper's
N = N'), about four times a Rainbow update here, so 1M frames would take most of a working day
on this CPU; fewer frames make the same threshold harder to reach, not easier.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

FRAMES = 1_000_000
RANDOM_BREAKOUT = 0.5  # Young and Tian, MinAtar README: random play, 1,000 episodes
REQUIRED = 10 * RANDOM_BREAKOUT

#: agent -> frames
AGENTS = {"dqn": FRAMES, "rainbow": FRAMES, "rainbow_iqn": 250_000, "ppo": FRAMES}


def last_100_mean(run_dir: Path) -> tuple[float, int]:
    conn = sqlite3.connect(run_dir / "results.sqlite")
    try:
        scores = [r[0] for r in conn.execute("SELECT score FROM episodes WHERE phase = 'train' ORDER BY id")]
    finally:
        conn.close()
    tail = scores[-100:]
    return (sum(tail) / len(tail) if tail else 0.0), len(scores)


@pytest.mark.slow
@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_breakout_last_100_mean_beats_ten_times_random(benchgen, tmp_path, agent):
    out = tmp_path / agent
    frames = AGENTS[agent]
    proc = benchgen(
        "run",
        "minatar",
        agent,
        "--tasks",
        "breakout",
        "--frames",
        frames,
        "--out",
        out,
        "--no-progress",
        timeout=4 * 3600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    mean, episodes = last_100_mean(out)
    print(f"{agent}: {episodes} episodes, last-100 mean {mean:.2f} (required {REQUIRED})")
    assert mean >= REQUIRED, f"{agent}: last-100 mean {mean:.2f} < {REQUIRED} after {frames} frames"
