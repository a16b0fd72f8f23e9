"""Agents and suites meet through declared needs, not names: a third-party agent gets what it
declares from every suite, is refused before anything is written where a need cannot be met,
and is built through the one factory signature."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from types import SimpleNamespace

import gymnasium as gym
import numpy as np
import pytest

from benchgen.agent import AgentNeeds
from benchgen.errors import UsageError
from benchgen_atari_saber.suite import AtariSaberSuite
from tests.conftest import run_cli
from tests.fixture_plugins.platformer_suite import SEMANTICS, PlatformerSuite
from tests.fixture_plugins.sprinter_agent import SPEC, Sprinter, SprinterConfig
from tests.fixture_plugins.toy_suite import ToySuite

PLUGINS = "tests.fixture_plugins.toy_suite,tests.fixture_plugins.platformer_suite,tests.fixture_plugins.sprinter_agent"


def _env(single_action_space):
    """A stand-in for a wrapped vector env: only its spaces are read."""
    return SimpleNamespace(
        single_observation_space=gym.spaces.Box(0, 255, (4, 84, 84), np.uint8), single_action_space=single_action_space
    )


def test_the_factory_gets_the_spaces_and_the_suite_s_answers():
    suite = PlatformerSuite()
    environment = SPEC.environment(suite, _env(gym.spaces.Discrete(6)))
    assert (environment.frames_per_step, environment.action_semantics, environment.suite) == (
        4,
        SEMANTICS,
        "platformer",
    )
    agent = SPEC.factory(SprinterConfig(), environment)
    assert isinstance(agent, Sprinter) and agent.actions == {"right": 2, "right_jump": 5}
    atari = AtariSaberSuite()  # names FIRE as the jump: RIGHT 3, RIGHTFIRE 11 in the full action set
    agent = SPEC.factory(SprinterConfig(), SPEC.environment(atari, _env(gym.spaces.Discrete(18))))
    assert agent.actions == {"right": 3, "right_jump": 11}


def test_only_agents_that_need_named_actions_are_given_them():
    plain = dataclasses.replace(SPEC, name="plain", needs=AgentNeeds())
    assert plain.environment(PlatformerSuite(), _env(gym.spaces.Discrete(6))).action_semantics is None


def test_needs_are_checked_in_words():
    with pytest.raises(ValueError, match="observations must be one of"):
        AgentNeeds(observations="pixels")
    with pytest.raises(ValueError, match="reward must be one of"):
        AgentNeeds(reward="clipped")
    SPEC.check(PlatformerSuite())  # names every action the sprinter needs
    with pytest.raises(
        UsageError, match="^sprinter is not supported on suite toy: it does not declare right/left/jump"
    ):
        SPEC.check(ToySuite())


def test_a_third_party_agent_runs_on_a_suite_that_names_its_actions(tmp_path):
    out = tmp_path / "run"
    proc = run_cli(
        "run",
        "platformer",
        "sprinter",
        "--tasks",
        "sprint-10",
        "--timesteps",
        "400",
        "--out",
        out,
        "--no-progress",
        plugins=PLUGINS,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    conn = sqlite3.connect(out / "results.sqlite")
    assert conn.execute("SELECT status, frames_done FROM units").fetchone() == ("done", 1600)
    assert conn.execute("SELECT COUNT(*) FROM episodes WHERE end_reason = 'completed'").fetchone()[0] >= 1
    conn.close()
    assert json.loads((out / "run.json").read_text())["agent"] == "sprinter"


def test_a_suite_that_cannot_name_the_actions_is_refused_before_anything_is_written(tmp_path):
    proc = run_cli(
        "run",
        "toy",
        "sprinter",
        "--tasks",
        "count-20",
        "--frames",
        "400",
        "--out",
        tmp_path / "run",
        "--no-progress",
        plugins=PLUGINS,
    )
    assert proc.returncode == 2
    assert "sprinter is not supported on suite toy: it does not declare right/left/jump actions" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "run").exists()
