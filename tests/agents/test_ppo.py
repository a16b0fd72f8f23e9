"""The ppo agent: the SB3 VecEnv adapter, policy choice, budget/checkpoint/log plumbing, save and
load, learning on small tasks, and CLI smoke runs (toy, platformer, Sonic's Airstriker, Atari)."""

from __future__ import annotations

import importlib.util
import json
import sqlite3
import time

import gymnasium as gym
import numpy as np
import pytest

from benchgen.agent import AgentEnvironment
from benchgen.errors import UsageError
from benchgen.tuned import tuned_values
from benchgen_agents.ppo import SPECS
from benchgen_agents.ppo.agent import PPOAgent, choose_policy
from benchgen_agents.ppo.config import PPOConfig
from benchgen_agents.ppo.vec_env import BenchgenVecEnv
from tests.agents.agent_harness import Context, CountingEnv, environment_of
from tests.conftest import run_cli
from tests.fixture_plugins.platformer_suite import PlatformerVectorEnv
from tests.fixture_plugins.toy_suite import ToyVectorEnv

TEST_PLUGINS = "tests.fixture_plugins.toy_suite,tests.fixture_plugins.platformer_suite"
SMALL = dict(
    n_steps=32,
    batch_size=64,
    n_epochs=4,
    learning_rate=1e-3,
    clip_range=0.2,
    ent_coef=0.0,
    clip_reward=False,
    deterministic_eval=True,
    torch_threads=1,
)


def _cartpole(n: int = 8) -> gym.vector.VectorEnv:
    return gym.make_vec(
        "CartPole-v1",
        num_envs=n,
        vectorization_mode="sync",
        vector_kwargs={"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP},
    )


# -- the VecEnv adapter ----------------------------------------------------------------------
def test_adapter_translates_same_step_autoreset():
    env = ToyVectorEnv(["count-20", "count-50"], seed=0)
    vec = BenchgenVecEnv(env, clip_reward=False)
    obs = vec.reset()
    assert isinstance(obs, np.ndarray) and obs.shape == (2, 1, 8, 8)  # obs only, no info
    for _ in range(20):  # action 2 never ends an episode early: count-20 is truncated at step 20
        vec.step_async(np.array([2, 2]))
        obs, rewards, dones, infos = vec.step_wait()
    assert rewards.dtype == np.float32 and dones.tolist() == [True, False]
    assert infos[0]["TimeLimit.truncated"] is True and infos[1] == {}
    assert infos[0]["terminal_observation"][0, 0, 0] == 20  # the last frame, not the new episode's
    assert obs[0, 0, 0, 0] == 0  # SAME_STEP: already the next episode's first observation
    for _ in range(3):  # three 0-actions in a row: game over, a true termination
        obs, _r, dones, infos = vec.step(np.array([0, 0]))
    assert dones.all() and infos[1]["TimeLimit.truncated"] is False and "terminal_observation" in infos[1]


def test_adapter_clips_rewards_for_learning_only():
    env = CountingEnv(_cartpole(2))
    vec = BenchgenVecEnv(env, clip_reward=True)
    vec.reset()
    _obs, rewards, _d, _i = vec.step(np.array([0, 1]))
    assert set(rewards.tolist()) <= {-1.0, 0.0, 1.0}


def test_adapter_reads_gymnasium_masked_final_obs():
    vec = BenchgenVecEnv(_cartpole(4))
    vec.reset()
    for _ in range(200):
        obs, _r, dones, infos = vec.step(np.zeros(4, dtype=np.int64))
        if dones.any():
            i = int(np.flatnonzero(dones)[0])
            assert infos[i]["terminal_observation"].shape == (4,)
            assert not np.array_equal(infos[i]["terminal_observation"], obs[i])
            return
    pytest.fail("no CartPole episode ended")


def test_adapter_refuses_next_step_autoreset():
    env = gym.make_vec("CartPole-v1", num_envs=2, vectorization_mode="sync")  # NEXT_STEP by default
    with pytest.raises(ValueError, match="SAME_STEP"):
        BenchgenVecEnv(env)


# -- policy and settings -----------------------------------------------------------------------
def test_policy_choice_and_channel_first_frames_are_not_transposed():
    frames = gym.spaces.Box(0, 255, (4, 84, 84), np.uint8)
    assert choose_policy("auto", frames) == "CnnPolicy"
    assert choose_policy("auto", gym.spaces.Box(0, 255, (1, 8, 8), np.uint8)) == "MlpPolicy"
    assert choose_policy("auto", gym.spaces.Box(-1, 1, (4,), np.float32)) == "MlpPolicy"
    with pytest.raises(UsageError, match="CnnPolicy needs"):
        choose_policy("CnnPolicy", gym.spaces.Box(0, 255, (1, 8, 8), np.uint8))
    env = CountingEnv(PlatformerVectorEnv(["walls-30"] * 2, seed=0))
    agent = PPOAgent(PPOConfig(n_steps=8, batch_size=16), environment_of(env))
    agent.learn(env, Context(env, budget_steps=16))
    from stable_baselines3.common.torch_layers import NatureCNN
    from stable_baselines3.common.vec_env import VecTransposeImage

    model = agent.model
    assert not isinstance(model.env, VecTransposeImage)  # (4, 84, 84) is already channel-first
    assert model.observation_space.shape == (4, 84, 84)
    assert isinstance(model.policy.features_extractor, NatureCNN) and model.policy.normalize_images
    assert model.policy.features_extractor.cnn[0].in_channels == 4


def test_suite_settings_are_the_papers():
    from benchgen_atari_saber.suite import AtariSaberSuite
    from benchgen_sonic.suite import SonicSuite

    atari, sonic = tuned_values(AtariSaberSuite(), "ppo"), tuned_values(SonicSuite(), "ppo")
    assert (
        atari["n_steps"],
        atari["batch_size"],
        atari["n_epochs"],
        atari["learning_rate"],
        atari["clip_range"],
        atari["ent_coef"],
        atari["vf_coef"],
        atari["lr_schedule"],
    ) == (128, 256, 4, 2.5e-4, 0.1, 0.01, 0.5, "linear")
    assert (
        sonic["n_steps"],
        sonic["batch_size"],
        sonic["n_epochs"],
        sonic["gamma"],
        sonic["gae_lambda"],
        sonic["clip_range"],
        sonic["ent_coef"],
    ) == (8192, 8192, 4, 0.99, 0.95, 0.2, 0.001)
    spec = SPECS[0]
    assert spec.algorithm == "ppo" and spec.default_num_envs is None  # the suite's: 8 Atari, 1 Sonic
    for values in (atari, sonic):
        PPOConfig(**values)  # every file is a valid config


def test_config_fails_fast():
    with pytest.raises(ValueError, match="lr_schedule"):
        PPOConfig(lr_schedule="cosine")
    with pytest.raises(ValueError, match="policy"):
        PPOConfig(policy="LstmPolicy")


# -- learn: budget, checkpoints, logging, schedules -------------------------------------------
def test_learn_stops_at_the_budget_and_checkpoints_every_step():
    env = CountingEnv(ToyVectorEnv(["count-20"] * 4, seed=0))
    agent = PPOAgent(PPOConfig(**SMALL), environment_of(env))
    ctx = Context(env, budget_steps=1000)
    agent.learn(env, ctx)
    assert env.steps_done == 1000  # exactly: not rounded up to a whole rollout (32 x 4 = 128)
    assert ctx.checkpoint_calls == 250  # once per vector step
    assert agent.model.num_timesteps == 1000
    assert {"train/loss", "train/learning_rate", "train/clip_range"} <= set(ctx.scalars)
    lrs = ctx.scalars["train/learning_rate"]
    assert lrs[0] < 1e-3 and lrs == sorted(lrs, reverse=True)  # linear decay over the unit's budget


def test_save_load_continues_where_it_stopped(tmp_path):
    env = CountingEnv(ToyVectorEnv(["count-20"] * 4, seed=0))
    agent = PPOAgent(PPOConfig(**SMALL), environment_of(env))
    agent.learn(env, Context(env, budget_steps=512))
    agent.save(tmp_path)
    assert (tmp_path / "ppo.pt").is_file()
    assert json.loads((tmp_path / "ppo_agent.json").read_text())["num_timesteps"] == 512
    obs = np.zeros((4, 1, 8, 8), np.uint8)

    resumed = PPOAgent(PPOConfig(**SMALL), environment_of(env))
    resumed.load(tmp_path)
    np.testing.assert_array_equal(resumed.act(obs), agent.act(obs))  # predict-only policy from the checkpoint
    env2 = CountingEnv(ToyVectorEnv(["count-20"] * 4, seed=1), steps_done=512)
    ctx = Context(env2, budget_steps=1024)
    resumed.learn(env2, ctx)
    assert resumed.model.num_timesteps == 1024 and env2.steps_done == 1024
    # the learning-rate schedule continued from half way, it did not restart
    assert max(ctx.scalars["train/learning_rate"]) <= 0.5e-3 + 1e-9

    # a checkpoint fine-tuned with another number of sub-environments (joint -> one test task)
    single = CountingEnv(ToyVectorEnv(["count-80"], seed=2))
    finetune = PPOAgent(PPOConfig(**SMALL), environment_of(single))
    finetune.load(tmp_path)
    finetune.learn(single, Context(single, budget_steps=64))
    assert finetune.model.n_envs == 1 and finetune.model.num_timesteps == 64


def test_greedy_act_samples_unless_deterministic_eval():
    env = CountingEnv(ToyVectorEnv(["count-20"] * 2, seed=0))
    obs = np.zeros((256, 1, 8, 8), np.uint8)
    for deterministic, distinct in ((False, 3), (True, 1)):
        config = PPOConfig(**{**SMALL, "deterministic_eval": deterministic})
        agent = PPOAgent(config, environment_of(env))
        agent.learn(env, Context(env, budget_steps=env.steps_done + 2))  # an untrained, near-uniform policy
        assert len(set(agent.act(obs, greedy=True).tolist())) == distinct


def test_finetuning_starts_a_fresh_adam_state_a_resume_keeps_it(tmp_path):
    env = CountingEnv(ToyVectorEnv(["count-20"] * 4, seed=0))
    agent = PPOAgent(PPOConfig(**SMALL), environment_of(env))
    agent.learn(env, Context(env, budget_steps=256))
    agent.save(tmp_path)
    (tmp_path / "checkpoint.json").write_text(json.dumps({"unit": "joint-pair-s0", "agent": "ppo_joint"}))
    for unit, adam_state in (("joint-pair-s0", True), ("finetune-count-80-s0", False)):
        other = PPOAgent(PPOConfig(**SMALL), environment_of(env))
        other.load(tmp_path)
        fresh = CountingEnv(ToyVectorEnv(["count-80"] * 4, seed=3))
        other.learn(fresh, Context(fresh, budget_steps=64, unit_dir=tmp_path / unit))  # < 1 rollout: no update
        assert bool(other.model.policy.optimizer.state) is adam_state, unit
        np.testing.assert_array_equal(
            other.act(np.zeros((4, 1, 8, 8), np.uint8)), agent.act(np.zeros((4, 1, 8, 8), np.uint8))
        )  # the weights came along


def test_load_refuses_another_agents_checkpoint(tmp_path):
    (tmp_path / "checkpoint.json").write_text(json.dumps({"agent": "jerk"}))
    agent = PPOAgent(PPOConfig(), AgentEnvironment(gym.spaces.Box(0, 255, (1, 8, 8), np.uint8), gym.spaces.Discrete(3)))
    with pytest.raises(UsageError, match="written by agent 'jerk'"):
        agent.load(tmp_path)


# -- it learns -------------------------------------------------------------------------------
def test_ppo_learns_toy_task_quickly():
    """count-20: action 2 earns reward with p = 0.8 per step; random play scores about 9."""
    start = time.process_time()  # CPU seconds: robust to a busy machine
    env = CountingEnv(ToyVectorEnv(["count-20"] * 8, seed=1))
    agent = PPOAgent(PPOConfig(**SMALL), environment_of(env))
    agent.learn(env, Context(env, budget_steps=8000))
    evaluation = CountingEnv(ToyVectorEnv(["count-20"] * 8, seed=2))
    obs, _ = evaluation.reset()
    while len(evaluation.returns) < 40:
        obs, *_ = evaluation.step(agent.act(obs, greedy=True))
    assert np.mean(env.returns[:30]) < 11
    assert np.mean(evaluation.returns) >= 14  # the optimum is 16
    assert time.process_time() - start < 60


def test_ppo_learns_cartpole_quickly():
    """CartPole through gymnasium's own SAME_STEP vector env (truncation at 500 bootstrapped)."""
    start = time.process_time()  # CPU seconds: robust to a busy machine
    env = CountingEnv(_cartpole(8))
    config = PPOConfig(
        n_steps=32,
        batch_size=256,
        n_epochs=20,
        learning_rate=1e-3,
        clip_range=0.2,
        ent_coef=0.0,
        gamma=0.98,
        gae_lambda=0.8,
        clip_reward=False,
        torch_threads=1,
    )  # RL Zoo's CartPole-v1
    agent = PPOAgent(config, environment_of(env))
    agent.learn(env, Context(env, budget_steps=40_000))
    assert np.mean(env.returns[:20]) < 40  # random play: about 22
    assert np.mean(env.returns[-20:]) >= 150
    assert time.process_time() - start < 60


# -- CLI smoke runs ----------------------------------------------------------------------------
def _units_and_episodes(out):
    conn = sqlite3.connect(out / "results.sqlite")
    units = conn.execute("SELECT unit_id, status, frames_done, budget_frames FROM units").fetchall()
    episodes = conn.execute("SELECT task, score FROM episodes ORDER BY id").fetchall()
    conn.close()
    return units, episodes


def test_cli_ppo_toy_mlp(tmp_path):
    out = tmp_path / "run"
    proc = run_cli(
        "run",
        "toy",
        "ppo",
        "--tasks",
        "count-20",
        "--frames",
        "20000",
        "--set",
        "n_steps=32",
        "--set",
        "batch_size=64",
        "--set",
        "run.checkpoint_every=10000",  # a save every half budget, not budget / 20
        "--out",
        out,
        "--no-progress",
        plugins=TEST_PLUGINS,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    units, episodes = _units_and_episodes(out)
    assert units == [("train-count-20-s0", "done", 20000, 20000)] and len(episodes) > 50
    final = sorted((out / "units" / "train-count-20-s0" / "checkpoints").iterdir())[-1]
    assert (final / "ppo.pt").is_file() and json.loads((final / "checkpoint.json").read_text())["agent"] == "ppo"
    assert json.loads((out / "run.json").read_text())["agent_config"]["policy"] == "auto"


def test_cli_ppo_platformer_cnn(tmp_path):
    out = tmp_path / "run"
    proc = run_cli(
        "run",
        "platformer",
        "ppo",
        "--tasks",
        "walls-30",
        "--timesteps",
        "256",
        "--num-envs",
        "2",
        "--set",
        "n_steps=32",
        "--set",
        "batch_size=64",
        "--out",
        out,
        "--no-progress",
        plugins=TEST_PLUGINS,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    units, _episodes = _units_and_episodes(out)
    assert units[0][1:3] == ("done", 1024)


@pytest.mark.skipif(importlib.util.find_spec("stable_retro") is None, reason="stable-retro is not installed")
def test_cli_ppo_sonic_airstriker(tmp_path):
    """The Sonic suite's code (agent wrappers: 7 actions, reward scale, 84x84x4 frames) on the free
    Airstriker ROM."""
    out = tmp_path / "run"
    proc = run_cli(
        "run",
        "sonic_airstriker",
        "ppo",
        "--tasks",
        "airstriker-Level1",
        "--timesteps",
        "256",
        "--num-envs",
        "2",
        "--set",
        "n_steps=64",
        "--set",
        "batch_size=64",
        "--out",
        out,
        "--no-progress",
        plugins="tests.sonic.airstriker_plugin",
        timeout=300,
    )
    units, episodes = _units_and_episodes(out)
    assert units[0][1:3] == ("done", 1024), proc.stderr[-3000:]
    assert episodes  # 50-timestep episodes


def _atari_available() -> bool:
    from benchgen.registry import Registry

    return "atari_saber" in Registry().suites


def test_cli_ppo_atari(tmp_path):
    if not _atari_available():
        pytest.skip("the atari_saber suite is not installed in this checkout")
    out = tmp_path / "run"
    proc = run_cli(
        "run",
        "atari_saber",
        "ppo",
        "--tasks",
        "pong",
        "--frames",
        "4096",
        "--num-envs",
        "2",
        "--set",
        "n_steps=64",
        "--set",
        "batch_size=64",
        "--set",
        "run.checkpoint_every=2048",  # a save every half budget, not budget / 20
        "--out",
        out,
        "--no-progress",
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    units, _episodes = _units_and_episodes(out)
    assert units[0][1:3] == ("done", 4096)
    assert json.loads((out / "run.json").read_text())["agent_config"]["clip_reward"] is True


@pytest.mark.slow
def test_ppo_atari_score_rises_above_random(tmp_path):
    """A real run on Breakout under the SABER protocol (RL Zoo settings, 8 envs): after 2M frames
    the task score (mean of the last 100 training episodes) is over 3x random play (1.7 in
    world_records.csv) and over twice the first 100 episodes' mean. A reference run on a shared
    2-core CPU (about 80 minutes, interrupted once and resumed): 1.31 over the first 100
    episodes, 7.49 over the last 100 at 2M frames."""
    if not _atari_available():
        pytest.skip("the atari_saber suite is not installed in this checkout")
    out = tmp_path / "run"
    proc = run_cli(
        "run",
        "atari_saber",
        "ppo",
        "--tasks",
        "breakout",
        "--frames",
        "2000000",
        "--out",
        out,
        "--no-progress",
        timeout=6 * 3600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    _units, episodes = _units_and_episodes(out)
    scores = [s for _t, s in episodes]
    assert np.mean(scores[-100:]) > 3 * 1.7
    assert np.mean(scores[-100:]) > 2 * np.mean(scores[:100])


def test_a_suite_derived_from_sonic_keeps_the_sonic_settings():
    """Tuned settings follow the suite's class: a Sonic test integration under another name trains
    with the Sonic paper's PPO settings, a suite with no table gets the config's own defaults."""
    from tests.fixture_plugins.toy_suite import ToySuite
    from tests.sonic.airstriker_plugin import LEVELS, AirstrikerSuite

    assert tuned_values(AirstrikerSuite(levels=LEVELS), SPECS[0].algorithm)["n_steps"] == 8192
    assert tuned_values(ToySuite(), SPECS[0].algorithm) == {}
