"""Checkpoints are data, never code (issue 18, items 1 and 14): a crafted checkpoint is refused in
one line and its payload does not run.

The payload is a pickle whose ``__reduce__`` calls ``pathlib.Path(marker).touch()``: whatever
unpickles it creates the marker file. The first test shows the crafted stable-baselines3 zip really
is an exploit (``PPO.load`` runs it, in a subprocess); the others give the same payload, in every
file an agent reads, to benchgen's agents and to the CLI, and assert the refusal and no marker.
"""

from __future__ import annotations

import base64
import json
import pathlib
import pickle
import subprocess
import sys
import zipfile

import gymnasium as gym
import numpy as np
import pytest
import torch

from benchgen.agent import AgentEnvironment
from benchgen.errors import UsageError
from benchgen_agents.ppo.agent import PPOAgent
from benchgen_agents.ppo.config import PPOConfig
from benchgen_agents.rainbow_iqn import make_agent
from tests.agents.agent_harness import Context, CountingEnv, environment_of
from tests.agents.rainbow_iqn.test_rainbow_agent import cartpole, tiny_config
from tests.conftest import run_cli
from tests.fixture_plugins.platformer_suite import PlatformerVectorEnv
from tests.fixture_plugins.toy_suite import ToyVectorEnv

TEST_PLUGINS = "tests.fixture_plugins.toy_suite,tests.fixture_plugins.platformer_suite"
SMALL = dict(
    n_steps=32, batch_size=64, n_epochs=4, learning_rate=1e-3, ent_coef=0.0, clip_reward=False, torch_threads=1
)


class Touch:
    """Unpickled, this creates ``marker`` (a stand-in for any code an attacker wants run)."""

    def __init__(self, marker: pathlib.Path):
        self.marker = pathlib.Path(marker)

    def __reduce__(self):
        return pathlib.Path.touch, (self.marker,)


def crafted_sb3_zip(path: pathlib.Path, marker: pathlib.Path) -> None:
    """An SB3 model zip holding only a ``data`` entry whose ``:serialized:`` value is the payload
    (SB3's ``json_to_data`` cloudpickle-loads every such value)."""
    payload = base64.b64encode(pickle.dumps(Touch(marker))).decode()
    data = {"policy_class": {":type:": "<class 'abc.ABCMeta'>", ":serialized:": payload}}
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("data", json.dumps(data))


def assert_refused(excinfo, marker: pathlib.Path, *fragments: str) -> None:
    message = str(excinfo.value)
    assert "\n" not in message and message.strip() == message, message
    for fragment in fragments:
        assert fragment in message, message
    assert not marker.exists(), "the payload ran"


@pytest.fixture(autouse=True)
def _restore_torch_threads():
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


# -- the exploit, and PPO ------------------------------------------------------------------------
def test_the_crafted_zip_runs_its_payload_in_sb3s_own_load(tmp_path):
    """Not benchgen: proof that the zip the next tests refuse is an exploit."""
    marker = tmp_path / "sb3-ran-it"
    crafted_sb3_zip(tmp_path / "ppo.zip", marker)
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from stable_baselines3 import PPO; PPO.load(sys.argv[1])",
            str(tmp_path / "ppo.zip"),
        ],
        capture_output=True,
        timeout=300,
    )
    assert marker.exists()


def _toy_ppo() -> tuple[PPOAgent, CountingEnv]:
    env = CountingEnv(ToyVectorEnv(["count-20"] * 2, seed=0))
    return PPOAgent(PPOConfig(**SMALL), environment_of(env)), env


def _ppo_checkpoint(directory: pathlib.Path) -> pathlib.Path:
    """A genuine checkpoint of a (barely) trained toy PPO agent, as the runner leaves it."""
    agent, env = _toy_ppo()
    agent.learn(env, Context(env, budget_steps=80))  # one update (a rollout is 2 x 32 steps): Adam has moments
    directory.mkdir(parents=True, exist_ok=True)
    agent.save(directory)
    (directory / "checkpoint.json").write_text(json.dumps({"agent": "ppo_joint", "unit": "joint-pair-s0"}))
    return directory


def test_a_ppo_checkpoint_is_tensors_and_json(tmp_path):
    ckpt = _ppo_checkpoint(tmp_path / "ckpt")
    assert {p.name for p in ckpt.iterdir()} == {"ppo.pt", "ppo_agent.json", "checkpoint.json"}  # no temporary left
    tensors = torch.load(ckpt / "ppo.pt", weights_only=True)
    assert set(tensors) == {"policy", "optimizer"} and tensors["optimizer"]["state"]  # Adam's moments came along
    state = json.loads((ckpt / "ppo_agent.json").read_text())
    assert (state["format"], state["policy"], state["num_timesteps"], state["weights"]) == (2, "MlpPolicy", 80, True)


def _zip_only(ckpt, marker):
    (ckpt / "ppo.pt").unlink()
    crafted_sb3_zip(ckpt / "ppo.zip", marker)


def _zip_and_old_state(ckpt, marker):
    # what benchgen wrote before: ppo.zip and a state file without a format
    _zip_only(ckpt, marker)
    (ckpt / "ppo_agent.json").write_text(json.dumps({"policy": "MlpPolicy", "num_timesteps": 8}))


def _pickled_object_in_pt(ckpt, marker):
    torch.save({"policy": Touch(marker), "optimizer": {}}, ckpt / "ppo.pt")


def _plain_pickle_as_pt(ckpt, marker):
    (ckpt / "ppo.pt").write_bytes(pickle.dumps({"policy": Touch(marker), "optimizer": {}}))


def _truncated_pt(ckpt, marker):
    data = (ckpt / "ppo.pt").read_bytes()
    (ckpt / "ppo.pt").write_bytes(data[: len(data) // 2])


def _tensors_of_another_network(ckpt, marker):
    torch.save({"policy": {"w": torch.zeros(3)}, "optimizer": {"state": {}, "param_groups": []}}, ckpt / "ppo.pt")


def _not_a_dict(ckpt, marker):
    torch.save([torch.zeros(1)], ckpt / "ppo.pt")


def _damaged_state(ckpt, marker):
    (ckpt / "ppo_agent.json").write_bytes(b"\xff{")


def _pt_missing(ckpt, marker):
    (ckpt / "ppo.pt").unlink()


@pytest.mark.parametrize(
    "damage, fragment",
    [
        (_zip_only, "format benchgen no longer loads (ppo.zip"),
        (_zip_and_old_state, "format benchgen no longer loads (ppo.zip"),
        (_pickled_object_in_pt, "holds pickled Python objects"),
        (_plain_pickle_as_pt, "holds pickled Python objects"),
        (_truncated_pt, "cannot be read"),
        (_tensors_of_another_network, "cannot be used here"),
        (_not_a_dict, "does not hold policy, optimizer"),
        (_damaged_state, "cannot be read"),
        (_pt_missing, "ppo.pt is missing"),
    ],
)
def test_ppo_refuses_anything_but_its_own_tensors_and_runs_nothing(tmp_path, damage, fragment):
    ckpt = _ppo_checkpoint(tmp_path / "ckpt")
    marker = tmp_path / "payload-ran"
    damage(ckpt, marker)
    agent, _env = _toy_ppo()
    with pytest.raises(UsageError) as excinfo:
        agent.load(ckpt)
    assert_refused(excinfo, marker, fragment)


def test_ppo_refuses_a_checkpoint_of_other_spaces_or_another_network(tmp_path):
    ckpt = _ppo_checkpoint(tmp_path / "toy")
    frames = CountingEnv(PlatformerVectorEnv(["walls-30"] * 2, seed=0))  # (4, 84, 84) frames: a CNN
    cnn = PPOAgent(PPOConfig(**{**SMALL, "n_steps": 8, "batch_size": 16}), environment_of(frames))
    with pytest.raises(UsageError, match="policy=MlpPolicy, this unit's config builds one with policy=CnnPolicy"):
        cnn.load(ckpt)
    cnn.learn(frames, Context(frames, budget_steps=8))
    cnn.save(tmp_path / "cnn")
    narrower = PPOAgent(PPOConfig(**{**SMALL, "features_dim": 64}), environment_of(frames))
    with pytest.raises(UsageError, match="set policy=CnnPolicy and features_dim=512 to start from it"):
        narrower.load(tmp_path / "cnn")
    other_actions = PPOAgent(
        PPOConfig(**SMALL), AgentEnvironment(gym.spaces.Box(0, 255, (1, 8, 8), np.uint8), gym.spaces.Discrete(5))
    )
    with pytest.raises(UsageError, match="same observations and actions"):
        other_actions.load(ckpt)


class _ChannelLast(gym.vector.VectorWrapper):
    """(4, 84, 84) frames as (84, 84, 4) (gymnasium's TransformObservation refuses SAME_STEP autoreset)."""

    def __init__(self, env):
        super().__init__(env)
        assert env.single_observation_space.shape == (4, 84, 84)
        self.single_observation_space = gym.spaces.Box(0, 255, (84, 84, 4), np.uint8)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, env.num_envs)

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        return np.moveaxis(obs, 1, -1), info

    def step(self, actions):
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        assert not (terminated.any() or truncated.any())  # final_obs would need the transposition too
        return np.moveaxis(obs, 1, -1), rewards, terminated, truncated, info


def test_a_channel_last_checkpoint_acts_without_an_env_as_the_model_does(tmp_path):
    """SB3 transposes channel-last frames (VecTransposeImage); the env-less policy of ``act`` must too."""
    env = CountingEnv(_ChannelLast(PlatformerVectorEnv(["walls-30"] * 2, seed=0)))
    config = PPOConfig(**{**SMALL, "n_steps": 8, "batch_size": 16, "deterministic_eval": True})
    agent = PPOAgent(config, environment_of(env))
    agent.learn(env, Context(env, budget_steps=16))  # 8 steps per sub-environment: no episode ends
    assert agent.model.policy.observation_space.shape == (4, 84, 84)  # SB3 transposed them
    agent.save(tmp_path)
    loaded = PPOAgent(config, environment_of(env))
    loaded.load(tmp_path)
    obs = np.random.default_rng(0).integers(0, 255, (6, 84, 84, 4), dtype=np.uint8)
    np.testing.assert_array_equal(loaded.act(obs), agent.act(obs))


# -- Rainbow-IQN ---------------------------------------------------------------------------------
SPACES = (gym.spaces.Box(-5, 5, (4,), np.float32), gym.spaces.Discrete(2))


def _rainbow_checkpoint(directory: pathlib.Path) -> pathlib.Path:
    agent = make_agent(tiny_config(save_replay=True), AgentEnvironment(*SPACES))
    env = cartpole()
    agent.learn(env, Context(env, 80, seed=0))
    agent.save(directory)
    return directory


def _pickled_rainbow_pt(ckpt, marker):
    state = torch.load(ckpt / "rainbow_iqn.pt", weights_only=True)
    torch.save({**state, "online": Touch(marker)}, ckpt / "rainbow_iqn.pt")


def _garbage_rainbow_pt(ckpt, marker):
    (ckpt / "rainbow_iqn.pt").write_bytes(b"PK\x03\x04 not really a zip")


def _pickled_replay_array(ckpt, marker):
    np.save(ckpt / "replay" / "tree.npy", np.array([Touch(marker)], dtype=object), allow_pickle=True)


def _pickled_mapped_replay_array(ckpt, marker):
    np.save(ckpt / "replay" / "actions.npy", np.array([Touch(marker)], dtype=object), allow_pickle=True)


def _rainbow_tensors_of_another_network(ckpt, marker):
    state = torch.load(ckpt / "rainbow_iqn.pt", weights_only=True)
    torch.save({**state, "online": {"w": torch.zeros(3)}}, ckpt / "rainbow_iqn.pt")


@pytest.mark.parametrize(
    "damage, fragment",
    [
        (_pickled_rainbow_pt, "holds pickled Python objects"),
        (_garbage_rainbow_pt, "cannot be read"),
        (_pickled_replay_array, "allow_pickle=False"),
        (_pickled_mapped_replay_array, "Python objects"),
        (_rainbow_tensors_of_another_network, "cannot be used here"),
    ],
)
def test_rainbow_refuses_pickles_and_damage_in_one_line(tmp_path, damage, fragment):
    ckpt = _rainbow_checkpoint(tmp_path / "ckpt")
    marker = tmp_path / "payload-ran"
    damage(ckpt, marker)
    with pytest.raises(UsageError) as excinfo:
        make_agent(tiny_config(save_replay=True), AgentEnvironment(*SPACES)).load(ckpt)
    assert_refused(excinfo, marker, fragment)


# -- end to end: the CLI -------------------------------------------------------------------------
@pytest.mark.parametrize("damage", [_zip_only, _pickled_object_in_pt])
def test_cli_from_a_crafted_checkpoint_is_one_line_and_runs_nothing(tmp_path, damage):
    """``--from DIR`` (and a crafted checkpoint swapped into a run) goes through the agent's load."""
    ckpt = _ppo_checkpoint(tmp_path / "ckpt")
    marker = tmp_path / "payload-ran"
    damage(ckpt, marker)
    proc = run_cli(
        "run",
        "toy",
        "ppo_joint",
        "--split",
        "pair",
        "--from",
        ckpt,
        "--frames",
        "12000",
        "--set",
        "n_steps=32",
        "--set",
        "batch_size=64",
        "--set",
        "run.zeroshot_episodes=2",
        "--out",
        tmp_path / "run",
        "--no-progress",
        plugins=TEST_PLUGINS,
    )
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    # the checkpoint is loaded while the run is validated: one line, and no run directory
    assert len(lines) == 1 and lines[0].startswith("benchgen: error: ") and str(ckpt) in lines[0], proc.stderr
    assert not (tmp_path / "run").exists(), "a run directory was written for a refused checkpoint"
    assert not marker.exists(), "the payload ran"
