"""The gymnasium suite through ``benchgen`` in a subprocess, found through its entry point: runs of
the random agent and of the shared learners, the report, the normalization recipe, bad input."""

from __future__ import annotations

import json
import sqlite3

import pytest

from tests.conftest import assert_usage_error, run_cli

#: small networks, replay and schedules, so that a learner's unit takes seconds
VALUE_TINY = [
    "--set=hidden_size=32",
    "--set=mlp_hidden_size=32",
    "--set=replay_capacity=2000",
    "--set=learning_starts_frames=400",
    "--set=target_update_frames=400",
    "--set=batch_size=8",
]
TINY = {
    "ppo": ["--set=n_steps=64", "--set=batch_size=64", "--set=n_epochs=1"],
    "rainbow": [*VALUE_TINY, "--set=num_atoms=11"],
    "rainbow_iqn": [
        *VALUE_TINY,
        "--set=num_tau_samples=8",
        "--set=num_tau_prime_samples=8",
        "--set=num_quantile_samples=4",
        "--set=cosine_embedding_dim=16",
    ],
}


def _run(*args, timeout=600):
    """``benchgen ARGS`` with the installed plugins only (the suite comes in through its entry point)."""
    return run_cli(*args, plugins=None, timeout=timeout)


def _episodes(run_dir) -> list[tuple]:
    conn = sqlite3.connect(run_dir / "results.sqlite")
    try:
        return conn.execute("SELECT task, score, length_frames, end_reason FROM episodes ORDER BY id").fetchall()
    finally:
        conn.close()


def _units(run_dir) -> list[tuple]:
    conn = sqlite3.connect(run_dir / "results.sqlite")
    try:
        return conn.execute("SELECT tasks, status, frames_done FROM units").fetchall()
    finally:
        conn.close()


def _check_cartpole(episodes) -> None:
    """CartPole pays 1 per step, the last included: the return is the length; its limit is 500."""
    assert episodes
    for _, score, length, reason in episodes:
        assert score == length and 0 < length <= 500
        assert reason == ("truncated" if length == 500 else "terminated")


@pytest.fixture(scope="module")
def random_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("gymnasium") / "random"
    proc = _run(
        "run", "gymnasium", "random", "--tasks", "CartPole-v1,Acrobot-v1", "--timesteps", "2000", "--out", out,
        "--no-progress",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def test_random_run_records_each_envs_own_return(random_run):
    units = _units(random_run)
    assert sorted((json.loads(tasks), status, frames) for tasks, status, frames in units) == [
        (["Acrobot-v1"], "done", 2000),
        (["CartPole-v1"], "done", 2000),
    ]
    episodes = _episodes(random_run)
    _check_cartpole([e for e in episodes if e[0] == "CartPole-v1"])
    acrobot = [e for e in episodes if e[0] == "Acrobot-v1"]
    assert acrobot
    for _, score, length, reason in acrobot:
        # -1 per step except the step that reaches the goal (0); the time limit is 500 steps
        assert score == -length + (reason == "terminated")
        assert (reason == "truncated") == (length == 500)
    meta = json.loads((random_run / "run.json").read_text())
    assert meta["budget_unit"] == "timesteps" and meta["frames_per_step"] == 1
    envs = meta["protocol"]["envs"]
    assert envs["CartPole-v1"]["spec_version"] == 1 and envs["CartPole-v1"]["max_episode_steps"] == 500
    assert envs["Acrobot-v1"]["max_episode_steps"] == 500
    assert meta["protocol"]["gymnasium_version"]


def test_report_gives_each_task_the_mean_return_of_its_last_100_episodes(random_run):
    proc = _run("report", random_run)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads((random_run / "report" / "report.json").read_text())
    final = report["phases"]["train"]["final"]["score"]
    episodes = _episodes(random_run)
    for task in ("CartPole-v1", "Acrobot-v1"):
        scores = [score for t, score, _, _ in episodes if t == task][-100:]
        assert final[task] == pytest.approx(sum(scores) / len(scores))
    text = (random_run / "report" / "report.md").read_text()
    assert "CartPole-v1" in text and "reward_threshold" in text


def test_normalizing_against_measured_random_scores_and_the_solved_thresholds(random_run, tmp_path):
    """The suite's documented recipe: a random-score CSV, the registry's thresholds, baseline-set
    normalization in ``benchgen compare`` (0 = random, 1 = solved)."""
    measured = {"CartPole-v1": 20.0, "Acrobot-v1": -500.0}
    csv = tmp_path / "random.csv"
    csv.write_text("task,score\n" + "".join(f"{t},{s}\n" for t, s in measured.items()))
    out = tmp_path / "compare"
    proc = _run(
        "compare", random_run, "--reference", f"random_here={csv}", "--normalization", "baseline-set",
        "--baseline-set", "random_here,reward_threshold", "--reps", "50", "--no-plots", "--out", out,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads((out / "compare.json").read_text())
    raw = result["per_task"]["views"]["score"]
    normalized = result["per_task"]["normalized"]
    for task, threshold in (("CartPole-v1", 475.0), ("Acrobot-v1", -100.0)):
        a, r = raw[task]["random"]["mean"], measured[task]
        assert normalized[task]["random"]["value"] == pytest.approx((a - r) / (threshold - r))
    # without the recipe, scores stay raw, and a lone --baseline cannot normalize them
    proc = _run("compare", random_run, "--baseline", str(csv), "--reps", "50", "--no-plots", "--out", tmp_path / "c2")
    assert_usage_error(proc, "suite has no random scores")


def test_an_unknown_id_is_refused_in_one_line_with_near_matches(tmp_path):
    out = tmp_path / "run"
    proc = _run("run", "gymnasium", "random", "--tasks", "CartPol-v1", "--out", out, "--no-progress")
    assert_usage_error(proc, "unknown task of suite 'gymnasium' 'CartPol-v1'", "did you mean 'CartPole-v1'?")
    assert not out.exists()


def test_dqn_runs_3000_timesteps_on_cartpole(tmp_path):
    out = tmp_path / "dqn"
    proc = _run(
        "run", "gymnasium", "dqn", "--tasks", "CartPole-v1", "--timesteps", "3000", "--out", out, "--no-progress",
        # learning starts within the budget (the Atari default waits 200K steps), so updates run too
        "--set=learning_starts_frames=1000", "--set=target_update_frames=500",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert _units(out) == [('["CartPole-v1"]', "done", 3000)]
    _check_cartpole(_episodes(out))


@pytest.mark.parametrize("agent", sorted(TINY))
def test_the_other_learners_run_on_vector_observations(tmp_path, agent):
    out = tmp_path / agent
    proc = _run(
        "run", "gymnasium", agent, "--tasks", "CartPole-v1", "--timesteps", "1000", "--num-envs", "2", "--out", out,
        "--no-progress", *TINY[agent],
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert _units(out) == [('["CartPole-v1"]', "done", 1000)]
    _check_cartpole(_episodes(out))


def test_a_joint_agent_runs_on_a_split_of_tasks_with_the_same_spaces(tmp_path):
    split = tmp_path / "split.yaml"
    split.write_text("name: cartpoles\ntrain: [CartPole-v0]\ntest: [CartPole-v1]\n")
    out = tmp_path / "joint"
    proc = _run(
        "run", "gymnasium", "ppo_joint", "--split", split, "--finetune", "--timesteps", "600", "--out", out,
        "--no-progress", "--set=run.zeroshot_episodes=1", "--set=run.finetune_budget=200", *TINY["ppo"],
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert {status for _, status, _ in _units(out)} == {"done"}


def test_jerk_is_refused_in_one_line(tmp_path):
    out = tmp_path / "jerk"
    proc = _run("run", "gymnasium", "jerk", "--tasks", "CartPole-v1", "--out", out, "--no-progress")
    assert_usage_error(proc, "jerk is not supported on suite gymnasium")
    assert not out.exists()
