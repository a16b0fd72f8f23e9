"""Out of the box on gymnasium: ``benchgen run gymnasium AGENT --tasks TASK`` with no other flag
(the suite's RL Zoo settings and budget, ``plugins/gymnasium_suite/tuned/``) reaches at least 90%
of the RL Baselines3 Zoo's published score (slow: minutes to half an hour each on one core).

    python -m pytest -m slow tests/gymnasium_suite/test_rl_zoo_scores.py -k "dqn and Acrobot"

Published scores: the suite's ``data/rl_zoo_benchmark.csv`` (:mod:`benchgen_gymnasium.published`),
``benchmark.md`` of DLR-RM/rl-baselines3-zoo at commit 22e3ff2450fd92033f7f032915e1f64894a09584,
the mean return of the trained agent (deterministic policy) over about 150,000 evaluation steps,
one training run each. benchgen is held to the same measure: the trained run's agent evaluated greedily with ``benchgen evaluate RUN`` (100 episodes;
for ppo the policy's most probable action, the suite's ``deterministic_eval``, as the RL Zoo
evaluates every task but Atari).
The mean of the last 100 training episodes (exploration included: DQN's final epsilon 0.04 to
0.1, PPO's sampled actions) is printed beside it; it is not what the RL Zoo reports.

"90% of the score": a percentage of a negative return (Acrobot's -76.6) has no meaning, so the
check takes it the way the field normalizes scores (Mnih et al. 2015; Bellemare et al. 2013):
90% of the way from random play to the published score, ``random + 0.9 * (zoo - random)``.
Random play is measured in the same test with benchgen's random agent under the same protocol
(CartPole-v1 about 22, Acrobot-v1 about -499 and MountainCar-v0 -200, where the time limit ends
nearly every episode). For CartPole-v1 this asks for about 452 of 500, for Acrobot-v1 about -119
(dqn) and -116 (ppo), for MountainCar-v0 about -111 (dqn) and -119 (ppo).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from benchgen.config import RunConfig
from benchgen.registry import get_registry
from benchgen.run.planning.plan import resolve
from benchgen_gymnasium.published import rl_zoo_rows, rl_zoo_scores
from tests.conftest import run_cli_subprocess

#: (agent, task) -> the RL Zoo's published mean return: its algorithms are benchgen's agents of
#: the same names
RL_ZOO = rl_zoo_scores()
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


#: measured (seed 0, development machine, 2026-11-25): ppo CartPole-v1 greedy 500.0 (training mean
#: 500.0, with sampled and, re-run, with the table's deterministic actions; training 1 min); dqn
#: CartPole-v1 greedy 500.0 (training mean 238.1; seed 1: 305.2, which is also what stable-baselines3's own DQN gets on the
#: training measure with the RL Zoo's values: 178.9 and 234.9, benchmarks/rl_zoo_dqn_cartpole_sb3.py);
#: dqn Acrobot-v1 greedy -81.9 (training mean -85.7 over 1,025 episodes; needed -118.7 from random
#: -497.7; training 24 min beside other work); dqn MountainCar-v0 greedy -104.6 (training mean -143.3
#: over 716 episodes; needed -110.8 from random -200.0; training 11 min beside other work); ppo
#: Acrobot-v1 (normalize: VecNormalize) greedy -72.1 (training mean -75.3 over 11,671 episodes;
#: needed -115.9; 1M steps, 12 min beside other work); ppo MountainCar-v0 (normalize) greedy -110.6
#: (training mean -118.2 over 8,086 episodes; needed -119.4; 1M steps, 7 min beside other work)
PAIRS = sorted(RL_ZOO)
EVAL_EPISODES = 100


def evaluation_mean(run_dir: Path) -> float:
    conn = sqlite3.connect(run_dir / "results.sqlite")
    try:
        scores = [r[0] for r in conn.execute("SELECT score FROM episodes ORDER BY id")]
    finally:
        conn.close()
    assert len(scores) >= EVAL_EPISODES, len(scores)
    return sum(scores) / len(scores)


@pytest.mark.parametrize("row", rl_zoo_rows(), ids=lambda row: f"{row.algorithm}-{row.task}")
def test_a_run_with_no_flags_trains_for_the_published_budget(row):
    """``benchgen run gymnasium AGENT --tasks TASK`` takes the budget the RL Zoo's score was
    published after (its ``n_timesteps``), from the suite's tuned settings: the slow check below
    compares like with like."""
    run = resolve(get_registry(), RunConfig(suite="gymnasium", agent=row.algorithm, tasks=[row.task]), {})
    assert run.budget == row.n_timesteps


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
    training, episodes = last_100_mean(out)
    evaluation = tmp_path / "eval"
    proc = run_cli_subprocess(
        "evaluate", out, "--episodes", EVAL_EPISODES, "--out", evaluation, "--no-progress", plugins=None, timeout=1800
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    score = evaluation_mean(evaluation)
    zoo = RL_ZOO[agent, task]
    required = random_score + FRACTION * (zoo - random_score)
    print(
        f"{agent} {task}: greedy evaluation {score:.1f} over {EVAL_EPISODES} episodes (last-100 training mean "
        f"{training:.1f} over {episodes}); RL Zoo {zoo}, random {random_score:.1f}"
    )
    assert score >= required, (
        f"{agent} on {task}: {score:.1f} < {required:.1f} (RL Zoo {zoo}, random {random_score:.1f})"
    )
