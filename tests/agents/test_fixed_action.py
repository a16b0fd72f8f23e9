"""Bellemare et al. 2013's Const and Perturb baselines, and the sweep that picks the best action."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest

from agents.fixed_action import FixedActionAgent, FixedActionConfig, PerturbConfig
from benchgen.agent import AgentEnvironment
from benchgen.errors import UsageError
from tests.conftest import assert_usage_error, run_cli


def _agent(config):
    space = gym.spaces.Discrete(6)
    env = AgentEnvironment(observation_space=gym.spaces.Box(0, 255, (1, 8, 8), np.uint8), action_space=space)
    return FixedActionAgent(config, env)


def test_const_holds_its_action_and_perturb_replaces_about_one_in_twenty():
    assert set(_agent(FixedActionConfig(action=4)).act(np.zeros((1000, 1, 8, 8)))) == {4}
    actions = _agent(PerturbConfig(action=4)).act(np.zeros((20_000, 1, 8, 8)))
    replaced = np.mean(actions != 4)
    # a random replacement is action 4 again one time in six: 0.05 x 5/6 of the steps differ
    assert abs(replaced - 0.05 * 5 / 6) < 0.01
    with pytest.raises(UsageError, match="action 6 is not in this action space"):
        _agent(FixedActionConfig(action=6))


def test_the_best_constant_action_per_game_is_found_by_a_sweep(tmp_path):
    """Freeway rewards only UP (action 2 of the full set): Const scores there and nowhere else.
    12K frames per condition hold one whole episode (Freeway's clock ends one after 8,192
    frames), all the scores need."""
    out = tmp_path / "const"
    args = ("run", "atari_saber", "const", "--tasks", "freeway", "--frames", "12k", "--num-envs", "1", "--no-progress")
    proc = run_cli(*args, "--protocol", "machado2018", "--vary", "action=0,2", "--out", out)
    assert proc.returncode == 0, proc.stderr[-2000:]
    table = json.loads((out / "sweep_table.json").read_text())
    assert table["conditions"]["action=0"]["scores"]["freeway"] == 0
    assert table["conditions"]["action=2"]["scores"]["freeway"] > 0
    assert table["best"]["freeway"]["condition"] == "action=2"
    assert "| freeway |" in (out / "sweep.md").read_text()
    assert_usage_error(run_cli(*args, "--vary", "action=0,99", "--out", tmp_path / "bad"), "action 99 is not in")
