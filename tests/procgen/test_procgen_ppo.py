"""PPO with the Procgen paper's network and settings: the IMPALA CNN, the suite's tuned entry, and
a short run that learns, saves and is evaluated in bfloat16."""

from __future__ import annotations

import sys

import gymnasium as gym
import numpy as np
import torch

from benchgen_agents.ppo.impala_cnn import ImpalaCNN
from benchgen_procgen import env as procgen_env
from tests.conftest import refused_in_process, run_cli


def _parameters(module: torch.nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def test_the_impala_cnn_has_baselines_shape_and_size():
    net = ImpalaCNN(gym.spaces.Box(0, 255, (3, 64, 64), np.uint8))
    out = net(torch.rand(5, 3, 64, 64))
    assert out.shape == (5, 256) and out.dtype == torch.float32 and (out >= 0).all()
    # baselines' build_impala_cnn: per stage a 3x3 conv and four 3x3 convs in two residual blocks, then
    # dense 8*8*32 -> 256 (all with biases)
    convs = (3 * 16 + 4 * 16 * 16 + 16 * 32 + 4 * 32 * 32 + 32 * 32 + 4 * 32 * 32) * 9 + (16 * 5 + 32 * 5 + 32 * 5)
    assert _parameters(net) == convs + 2048 * 256 + 256


def test_bfloat16_runs_the_cnn_in_bfloat16_and_gives_float32_features_close_to_float32():
    space = gym.spaces.Box(0, 255, (3, 64, 64), np.uint8)
    torch.manual_seed(0)
    full = ImpalaCNN(space)
    half = ImpalaCNN(space, precision="bfloat16")
    half.load_state_dict(full.state_dict())
    x = torch.rand(4, 3, 64, 64)
    a, b = full(x), half(x)
    assert b.dtype == torch.float32
    assert not torch.equal(a, b) and torch.allclose(a, b, atol=0.05 * a.abs().max().item())


def test_ppo_on_procgen_takes_the_papers_settings_and_runs_saves_and_is_evaluated(tmp_path):
    plan = run_cli("run", "procgen", "ppo", "--tasks", "coinrun", "--plan", plugins=None)
    assert plan.returncode == 0, plan.stderr
    for setting in (
        "policy=ImpalaCnnPolicy",
        "n_steps=256",
        "batch_size=2048",
        "n_epochs=3",
        "gamma=0.999",
        "learning_rate=0.0005",
        "normalize_reward=True",
        "clip_range_vf=0.2",
        "features_dim=256",
    ):
        assert setting in plan.stdout, setting
    assert "1 unit x 25,000,000 timesteps" in plan.stdout
    # the shipped speed was measured in bfloat16: a float32 run's plan says so (benchgen.speeds)
    assert "measured with precision=bfloat16 (this run: float32)" in plan.stdout
    out = tmp_path / "r"
    quick = tmp_path / "quick.yaml"  # test rounds of 1 episode (maze's last up to 500 steps)
    quick.write_text("base: easy200\nevaluation_episodes: 1\n")
    args = (
        "--tasks",
        "maze",
        "--timesteps",
        "1024",
        "--num-envs",
        "4",
        "--set",
        "n_steps=64",
        "--set",
        "batch_size=128",
        "--set",
        "n_epochs=1",
        "--set",
        "precision=bfloat16",
        "--checkpoints",
        "512,1024",
        "--out",
        out,
    )
    proc = run_cli("run", "procgen", "ppo", *args, "--protocol", quick, "--no-progress", plugins=None)
    assert proc.returncode == 0, proc.stderr[-3000:]
    state = (out / "units").glob("*/checkpoints/*/ppo_agent.json")
    assert any(True for _ in state)
    again = run_cli("evaluate", out, "--episodes", "1", plugins=None)
    assert again.returncode == 0, again.stderr[-3000:]


def test_without_the_package_a_procgen_run_is_one_line_with_the_install_command(capsys, tmp_path, monkeypatch):
    monkeypatch.delenv("BENCHGEN_PLUGINS", raising=False)
    monkeypatch.setitem(sys.modules, "procgen", None)
    monkeypatch.setitem(sys.modules, "procgen.env", None)
    refused_in_process(
        capsys, procgen_env.INSTALL_COMMAND, "run", "procgen", "random", "--tasks", "coinrun", "--out", tmp_path / "r"
    )
    assert not (tmp_path / "r").exists()
