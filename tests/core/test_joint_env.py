"""Joint environments (benchgen.joint_env; Nichol et al. 2018's joint Rainbow): every slot draws a
new task at every episode, each episode is recorded under the task it played, draws are
reproducible for a seed, and runs choose them with --task-sampling (rainbow_joint by default)."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pytest

from benchgen.errors import UsageError
from benchgen.joint_env import JointTaskVectorEnv
from tests.conftest import run_cli
from tests.fixture_plugins.vector_suite import SUITE as CHAIN
from tests.fixture_plugins.vector_suite import ChainVectorEnv

TASKS = ["chain-8", "chain-12", "chain-20"]


def _chain(task: str, seed: int):
    return CHAIN.make_env([task], seed)


def _play(env: JointTaskVectorEnv, steps: int):
    """(episode ends, per-step (obs, info)) of ``steps`` steps of action 1 (reward 1 per step)."""
    env.reset(seed=3)
    ends, trace = [], []
    for _ in range(steps):
        obs, _r, _te, _tr, info = env.step(np.ones(env.num_envs, int))
        trace.append((obs, info))
        ends += env.pop_episode_ends()
    return ends, trace


def test_each_episode_plays_a_drawn_task_and_is_recorded_under_it():
    env = JointTaskVectorEnv(_chain, TASKS, num_envs=2, seed=0)
    ends, trace = _play(env, 400)
    assert {e.task for e in ends} == set(TASKS)  # every task drawn over many episodes
    for e in ends:  # chain-L: an episode of L steps of reward 1, under the task it played
        length = int(e.task.split("-")[1])
        assert (e.length_frames, e.score) == (length * 4, float(length))
    assert {e.env_index for e in ends} == {0, 1}
    for obs, info in trace:  # an ended slot: the old episode's last obs, the new one's first
        if "final_obs" in info:
            for i in np.flatnonzero(info["_final_obs"]):
                assert info["final_obs"][i][0] == pytest.approx(1.0)  # t / L at the end
                assert obs[i][0] == 0.0  # t = 0: a new episode
    env.close()


def test_draws_are_reproducible_for_a_seed_and_differ_for_another():
    def sequence(seed):
        env = JointTaskVectorEnv(_chain, TASKS, num_envs=2, seed=seed)
        ends, _ = _play(env, 300)
        env.close()
        return [(e.env_index, e.task) for e in ends]

    assert sequence(1) == sequence(1)
    assert sequence(1) != sequence(2)


def test_tasks_with_other_spaces_are_refused_in_one_line():
    def make(task, seed):
        return ChainVectorEnv([task], seed, num_actions=3 if task == "chain-8" else 18)

    with pytest.raises(UsageError, match="same observations and actions"):
        for seed in range(20):  # some seed draws both kinds of task for the two slots
            JointTaskVectorEnv(make, TASKS, num_envs=2, seed=seed).close()


def test_the_sonic_code_paths_switch_levels_between_episodes():
    from tests.sonic.airstriker_plugin import LEVELS, benchgen_suites

    suite = benchgen_suites()[0]
    tasks = [LEVELS[0].task, LEVELS[1].task]
    env = JointTaskVectorEnv(lambda task, seed: suite.make_env([task], seed=seed), tasks, num_envs=1, seed=0)
    try:
        env.reset(seed=0)
        ends = []
        for _ in range(600):  # episodes of at most 50 timesteps (the test protocol)
            env.step(np.zeros(1, int))
            ends += env.pop_episode_ends()
        assert {e.task for e in ends} == set(tasks)
    finally:
        env.close()


def _run(tmp_path, *extra):
    out = tmp_path / "run"
    proc = run_cli(
        "run", "chain", "ppo_joint", "--split", "all", "--frames", "2048", "--num-envs", "2",
        "--set", "policy=MlpPolicy", "--set", "n_steps=16", "--set", "batch_size=32",
        "--set", "zeroshot_episodes=1", "--no-progress", "--out", str(out), *extra,
        plugins="tests.fixture_plugins.vector_suite",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    conn = sqlite3.connect(out / "results.sqlite")
    rows = conn.execute(
        "SELECT task, episode, env_index, length_frames FROM episodes WHERE phase = 'joint' ORDER BY id"
    ).fetchall()
    conn.close()
    return out, proc, rows


def test_a_joint_run_with_episode_sampling_records_every_episode_under_its_task(tmp_path):
    out, proc, rows = _run(tmp_path, "--task-sampling", "episode")
    assert "draws a new task at every episode" in proc.stderr
    assert json.loads((out / "run.json").read_text())["run"]["task_sampling"] == "episode"
    assert {r[0] for r in rows} == set(TASKS)
    assert {r[2] for r in rows} == {0, 1}  # two slots, not one sub-environment per task
    for task in TASKS:
        numbers = [r[1] for r in rows if r[0] == task]
        assert numbers == list(range(len(numbers)))
        # an episode of chain-L lasts at most L steps (action 2 ends it early): recorded under the task played
        assert max(r[3] for r in rows if r[0] == task) <= int(task.split("-")[1]) * 4


def test_fixed_sampling_keeps_one_task_per_sub_environment(tmp_path):
    out, _proc, rows = _run(tmp_path)
    assert json.loads((out / "run.json").read_text())["run"]["task_sampling"] == "fixed"  # ppo_joint's default
    assert {(r[0], r[2]) for r in rows} == {("chain-8", 0), ("chain-12", 1), ("chain-20", 2)}


def test_rainbow_joint_samples_a_task_every_episode_unless_told(monkeypatch):
    from benchgen import registry
    from benchgen.config import RunConfig
    from benchgen.run.planning.plan import resolve

    monkeypatch.setenv("BENCHGEN_PLUGINS", "tests.fixture_plugins.vector_suite")
    registry.reset_registry()
    reg = registry.get_registry()
    assert resolve(reg, RunConfig(suite="chain", agent="rainbow_joint", split="all"), {}).run.task_sampling == "episode"
    told = RunConfig(suite="chain", agent="rainbow_joint", split="all", task_sampling="fixed")
    assert resolve(reg, told, {}).run.task_sampling == "fixed"
    with pytest.raises(UsageError, match="task_sampling must be one of"):
        resolve(reg, RunConfig(suite="chain", agent="ppo_joint", split="all", task_sampling="level"), {})


def test_data_parallel_workers_divide_a_units_tasks():
    from benchgen.run.execution.build import worker_tasks

    tasks = [f"t{i}" for i in range(47)]
    shares = [worker_tasks(tasks, 1, w, 188) for w in range(188)]
    assert all(len(s) == 1 for s in shares)
    assert {t: sum(s == [t] for s in shares) for t in tasks} == dict.fromkeys(tasks, 4)  # 4 workers per level
    assert worker_tasks(["a", "b", "c"], 2, 1, 2) == ["c", "a"]
    assert worker_tasks(["a", "b", "c"], 2, 0, 1) == ["a", "b", "c"]  # one worker: every task once at least
