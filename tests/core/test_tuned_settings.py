"""Task-fitted settings owned by suites (``benchgen.tuned``): what a run gets with no flags, where
each value comes from, and that ``--config`` and ``--set`` still win. No learning here: the
slow check that the settings learn is ``tests/gymnasium_suite/test_rl_zoo_scores.py``."""

from __future__ import annotations

import json

import pytest

from benchgen.config import RunConfig
from benchgen.errors import UsageError
from benchgen.registry import get_registry
from benchgen.run.planning.agent_settings import resolve_agent_settings
from benchgen.run.planning.plan import create_run, describe_plan, plan_units, resolve, resolve_from_meta
from benchgen.tuned import AGENT_DEFAULT, ALL_TASKS, JOINT, TunedSettings, entries_for
from tests.conftest import run_cli

ZOO = "RL Baselines3 Zoo hyperparams/dqn.yml Acrobot-v1"


def _resolve(agent: str, tasks: list[str], overrides: dict | None = None, sources: dict | None = None, **run):
    config = RunConfig(suite="gymnasium", agent=agent, tasks=tasks, **run)
    return resolve(get_registry(), config, overrides or {}, override_sources=sources)


def test_dqn_on_acrobot_gets_the_rl_zoo_settings_with_their_sources():
    """The issue's case: `benchgen run gymnasium dqn --tasks Acrobot-v1` ran Atari settings (a
    replay start of 200K steps past its 100K budget, 4 stacked observations, clipped rewards)."""
    r = _resolve("dqn", ["Acrobot-v1"])
    config, sources = r.agent_config, r.config_sources
    assert (config.learning_rate, config.batch_size, config.replay_capacity) == (6.3e-4, 128, 50_000)
    assert (config.learning_starts_frames, config.target_update_frames, config.epsilon_end) == (0, 250, 0.1)
    assert (config.optimizer, config.mlp_hidden_size, config.frame_stack, config.reward_clip) == ("adam", 256, 1, 0.0)
    assert sources["learning_rate"].startswith("suite gymnasium (Acrobot-v1): " + ZOO)
    assert sources["frame_stack"].startswith("suite gymnasium (all tasks): benchgen: gymnasium's observations")
    assert sources["n_step"] == AGENT_DEFAULT and config.n_step == 1  # SB3's DQN: 1-step, as benchgen's
    assert r.budget == 100_000 and [u.budget_frames for u in plan_units(r)] == [100_000]  # RL Zoo's n_timesteps
    plan = describe_plan(r, plan_units(r))
    assert ZOO in plan and "budget of Acrobot-v1: 100,000 timesteps, the suite's" in plan


def test_set_and_config_win_over_the_suite_and_say_so():
    r = _resolve(
        "dqn",
        ["Acrobot-v1"],
        {"learning_rate": 1e-3, "batch_size": 32},
        {"learning_rate": "--set", "batch_size": "--config my.yaml"},
        budget=20_000,
    )
    assert (r.agent_config.learning_rate, r.agent_config.batch_size) == (1e-3, 32)
    assert (r.config_sources["learning_rate"], r.config_sources["batch_size"]) == ("--set", "--config my.yaml")
    assert r.agent_config.replay_capacity == 50_000  # the rest stays the suite's
    assert r.budget == 20_000 and not r.task_budgets  # a given budget replaces the task's


def test_the_cli_records_each_source_in_the_run(tmp_path):
    """--config < --set on the command line, and run.json keeps where every value came from."""
    config = tmp_path / "c.yaml"
    config.write_text("agent:\n  batch_size: 16\n  gamma: 0.9\n")
    out = tmp_path / "run"
    proc = run_cli(
        "run", "gymnasium", "dqn", "--tasks", "CartPole-v1", "--timesteps", "300", "--config", str(config),
        "--set", "gamma=0.95", "--set", "torch_threads=1", "--out", str(out), "--no-progress", plugins=None,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    meta = json.loads((out / "run.json").read_text())
    config_values, sources = meta["agent_config"], meta["agent_config_sources"]
    assert (config_values["batch_size"], config_values["gamma"]) == (16, 0.95)
    assert (sources["batch_size"], sources["gamma"]) == (f"--config {config}", "--set")
    assert config_values["learning_rate"] == 2.3e-3 and "CartPole-v1" in sources["learning_rate"]
    assert sources["rmsprop_decay"] == AGENT_DEFAULT
    assert "settings --set: gamma=0.95" in proc.stderr  # the printed plan says it too


def test_several_tasks_each_get_their_own_settings_and_budget(tmp_path):
    r = _resolve("dqn", ["CartPole-v1", "Acrobot-v1", "FrozenLake-v1"])
    assert r.config_for(["CartPole-v1"]).learning_rate == 2.3e-3
    assert r.config_for(["Acrobot-v1"]).learning_rate == 6.3e-4
    # a task the RL Zoo did not tune keeps the agent's defaults under the suite's all-task values
    other = r.config_for(["FrozenLake-v1"])
    assert (other.learning_rate, other.frame_stack) == (2.5e-4, 1) and other is r.agent_config
    budgets = {u.tasks[0]: u.budget_frames for u in plan_units(r)}
    assert budgets == {"CartPole-v1": 50_000, "Acrobot-v1": 100_000, "FrozenLake-v1": 100_000}
    # resume and workers rebuild the same per-task configs from the run directory
    rundir = create_run(get_registry(), r, tmp_path / "run")
    again = resolve_from_meta(get_registry(), rundir.record())
    assert again.config_for(["Acrobot-v1"]) == r.config_for(["Acrobot-v1"])
    assert again.task_sources == r.task_sources and again.task_budgets == r.task_budgets


def test_ppo_on_cartpole_takes_the_rl_zoo_environments_unless_told():
    r = _resolve("ppo", ["CartPole-v1"])
    assert r.num_envs_for(["CartPole-v1"]) == 8 and r.num_envs == 8  # RL Zoo n_envs
    assert (r.agent_config.n_steps, r.agent_config.n_epochs, r.agent_config.clip_reward) == (32, 20, False)
    assert _resolve("ppo", ["CartPole-v1"], num_envs=2).num_envs_for(["CartPole-v1"]) == 2


def test_ppo_on_acrobot_and_mountaincar_takes_the_rl_zoo_entries_with_vecnormalize():
    """The RL Zoo's ppo.yml entries, with SB3's defaults for the keys they leave out (benchgen's
    own ppo defaults are the RL Zoo's Atari entry), and its deterministic evaluation."""
    for task, n_steps, gae_lambda in (("Acrobot-v1", 256, 0.94), ("MountainCar-v0", 16, 0.98)):
        r = _resolve("ppo", [task])
        c = r.agent_config
        assert (r.budget, r.num_envs_for([task])) == (1_000_000, 16), task
        assert (c.normalize, c.n_steps, c.gae_lambda, c.gamma, c.n_epochs, c.ent_coef) == (
            True, n_steps, gae_lambda, 0.99, 4, 0.0,
        )  # fmt: skip
        assert (c.batch_size, c.learning_rate, c.lr_schedule, c.clip_range, c.clip_schedule) == (
            64, 3e-4, "constant", 0.2, "constant",
        )  # fmt: skip
        assert (c.clip_reward, c.deterministic_eval, c.policy) == (False, True, "MlpPolicy")
        assert r.config_sources["normalize"].startswith(f"suite gymnasium ({task}): RL Baselines3 Zoo")
    assert _resolve("ppo", ["CartPole-v1"]).agent_config.normalize is False  # the RL Zoo's entry has none


def test_every_shipped_table_fits_the_agents_that_take_it():
    """Each suite's tuned settings build a valid config for every registered agent of that
    algorithm, and name a source; a table entry naming a task names one of the suite's."""
    registry = get_registry()
    checked = 0
    for suite in registry.suites.values():
        for spec in registry.agents.values():
            for task in (None, *suite.tasks()):
                entries = suite.tuned_settings(spec.algorithm, task, joint=spec.joint and task is None)
                if not entries or (task is not None and entries[-1].label != task):
                    continue
                assert all(e.source for e in entries)
                if task is not None:
                    settings = resolve_agent_settings(spec, suite, [task], {})
                    assert settings.sources  # built and validated
                checked += 1
    assert checked >= 6


def test_a_table_setting_the_agent_lacks_is_one_line(monkeypatch):
    registry = get_registry()
    suite, spec = registry.suite("gymnasium"), registry.agent("dqn")
    bad = TunedSettings("a test", {"no_such_field": 1}, label=ALL_TASKS)
    monkeypatch.setattr(type(suite), "tuned_settings", lambda self, algorithm, task, joint=False: [bad])
    with pytest.raises(UsageError, match="set \\['no_such_field'\\], which agent dqn does not take"):
        resolve_agent_settings(spec, suite, ["CartPole-v1"], {})


def test_entries_apply_lowest_first():
    table = {
        ALL_TASKS: TunedSettings("all", {"a": 1}, label=ALL_TASKS),
        JOINT: TunedSettings("joint", {"a": 2}, label=JOINT),
        "t": TunedSettings("t", {"a": 3}, budget=5, label="t"),
    }
    assert [e.source for e in entries_for(table, "t", False)] == ["all", "t"]
    assert [e.source for e in entries_for(table, None, True)] == ["all", "joint"]
    assert [e.source for e in entries_for(table, "u", False)] == ["all"]
