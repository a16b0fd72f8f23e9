"""Out of the box on gymnasium: ``benchgen run gymnasium AGENT --tasks TASK`` with no other flag
(the suite's RL Zoo settings and budget, ``plugins/gymnasium_suite/tuned/``) reaches at least 90%
of the RL Baselines3 Zoo's published score (slow: minutes to half an hour each on one core).

    python -m pytest -m slow tests/gymnasium_suite/test_rl_zoo_scores.py -k "dqn and Acrobot"

Published scores: ``benchmark.md`` of DLR-RM/rl-baselines3-zoo at commit
22e3ff2450fd92033f7f032915e1f64894a09584, the mean return of the trained agent (deterministic
policy) over about 150,000 evaluation steps, one training run each. benchgen's score is the
suite's: the mean raw return of the last 100 training episodes, exploration included (DQN's final
epsilon 0.04 to 0.1, PPO's sampled actions), a harder measure than the RL Zoo's greedy one.

"90% of the score": a percentage of a negative return (Acrobot's -76.6) has no meaning, so the
check takes it the way the field normalizes scores (Mnih et al. 2015; Bellemare et al. 2013):
90% of the way from random play to the published score, ``random + 0.9 * (zoo - random)``.
Random play is measured in the same test with benchgen's random agent under the same protocol
(CartPole-v1 about 22, Acrobot-v1 about -499, where the 500-step time limit ends nearly every
episode). For CartPole-v1 this asks for about 452 of 500.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.conftest import run_cli_subprocess

#: (agent, task) -> the RL Zoo's published mean return (benchmark.md, commit 22e3ff2)
RL_ZOO = {
    ("dqn", "CartPole-v1"): 500.0,
    ("dqn", "Acrobot-v1"): -76.639,
    ("ppo", "CartPole-v1"): 500.0,
}
FRACTION = 0.9
RANDOM_STEPS = 20_000


def last_100_mean(run_dir: Path) -> tuple[float, int]:
    conn = sqlite3.connect(run_dir / "results.sqlite")
    try:
        scores = [r[0] for r in conn.execute("SELECT score FROM episodes WHERE phase = 'train' ORDER BY id")]
    finally:
        conn.close()
    tail = scores[-100:]
    return sum(tail) / len(tail), len(scores)


#: measured (seed 0, development machine, 2026-11-25): dqn Acrobot-v1 -75.7 (the settings run with
#: --set before the table existed; same values, torch_threads=1, and a torso of two layers, one
#: more than the RL Zoo's net_arch that the table now gives), ppo CartPole-v1 500.0 (4 min); dqn
#: CartPole-v1 238.1 (4 min; seed 1: 305.2), marked below: stable-baselines3's own DQN with the RL Zoo's values
#: falls as short under this measure (last-100 training mean 178.9 and 234.9, seeds 0 and 1;
#: SB3 2.9.2, same machine and day: benchmarks/rl_zoo_dqn_cartpole_sb3.py), so the gap is the
#: measure, not benchgen's DQN
DQN_CARTPOLE_GAP = (
    "238.1 (seed 1: 305.2) with the RL Zoo's settings and network (training episodes, epsilon 0.04; was 255.6 "
    "with one hidden layer more); the same trained agents evaluated greedily (benchgen evaluate, 20 episodes) "
    "score 500.0, the "
    "RL Zoo's measure and score; stable-baselines3's DQN with the same values reaches only 178.9 and 234.9 "
    "(seeds 0, 1) on this training-episode measure (and 18.8 greedy for seed 0): its 500 is one greedy run"
)
PAIRS = [
    pytest.param(agent, task, marks=pytest.mark.xfail(strict=True, reason=DQN_CARTPOLE_GAP))
    if (agent, task) == ("dqn", "CartPole-v1")
    else pytest.param(agent, task)
    for agent, task in sorted(RL_ZOO)
]


@pytest.mark.slow
@pytest.mark.parametrize(("agent", "task"), PAIRS)
def test_rl_zoo_settings_reach_ninety_percent_of_its_score(tmp_path, agent, task):
    random_run = tmp_path / "random"
    proc = run_cli_subprocess(
        "run", "gymnasium", "random", "--tasks", task, "--timesteps", RANDOM_STEPS, "--out", random_run,
        "--no-progress", plugins=None, timeout=1800,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    random_score, _ = last_100_mean(random_run)

    out = tmp_path / agent
    proc = run_cli_subprocess("run", "gymnasium", agent, "--tasks", task, "--out", out, plugins=None, timeout=3 * 3600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    score, episodes = last_100_mean(out)
    zoo = RL_ZOO[agent, task]
    required = random_score + FRACTION * (zoo - random_score)
    print(
        f"{agent} {task}: last-100 mean {score:.1f} over {episodes} episodes; RL Zoo {zoo}, random {random_score:.1f}"
    )
    assert score >= required, (
        f"{agent} on {task}: {score:.1f} < {required:.1f} (RL Zoo {zoo}, random {random_score:.1f})"
    )
