"""Bad settings for the value-based agents through the CLI: exit 2, one line naming the setting,
no traceback, and no run directory written (the config is checked before anything is made)."""

from __future__ import annotations

import pytest

from tests.conftest import assert_usage_error, run_cli

CASES = [
    ("rainbow_iqn", ["variant=saber"], "unknown rainbow_iqn variant 'saber'; did you mean 'saber_code'?"),
    ("rainbow", ["v_min=5", "v_max=5"], "v_min (5.0) must be less than v_max (5.0)"),
    ("rainbow", ["v_min=10", "v_max=-10"], "v_min (10.0) must be less than v_max (-10.0)"),
    ("rainbow", ["num_atoms=1"], "num_atoms must be an integer of at least 2"),
    ("rainbow", ["v_max=inf"], "v_max (rainbow config) must be a finite number"),
    ("dqn", ["epsilon_end=1.5"], "epsilon_end must be in [0, 1], not 1.5"),
    ("dqn", ["epsilon_start=-0.1"], "epsilon_start must be in [0, 1], not -0.1"),
]


@pytest.mark.parametrize("agent, settings, fragment", CASES, ids=[" ".join(c[1]) for c in CASES])
def test_bad_value_agent_settings_are_one_line_exit_2_and_nothing_written(tmp_path, agent, settings, fragment):
    out = tmp_path / "run"
    sets = [arg for setting in settings for arg in ("--set", setting)]
    proc = run_cli(
        "run", "atari_saber", agent, "--tasks", "pong", "--frames", "1000", *sets, "--out", out, cwd=tmp_path
    )
    assert_usage_error(proc, fragment)
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []  # nothing written beside it either


@pytest.mark.parametrize("agent", ["dqn", "rainbow", "rainbow_iqn"])
def test_an_agent_refuses_spaces_it_cannot_handle_before_anything_is_written(tmp_path, agent):
    """The toy suite's observations are single 8x8 frames: no 4-frame stack, and too small for the
    Nature torso. The agent is built while the run is checked, so the refusal comes first."""
    out = tmp_path / "run"
    proc = run_cli(
        "run", "toy", agent, "--frames", "1000", "--out", out, cwd=tmp_path, plugins="tests.fixture_plugins.toy_suite"
    )
    assert_usage_error(proc, "not a multiple of frame_stack=4")
    assert list(tmp_path.iterdir()) == []
    proc = run_cli(
        "run",
        "toy",
        agent,
        "--frames",
        "1000",
        "--set",
        "frame_stack=1",
        "--out",
        out,
        cwd=tmp_path,
        plugins="tests.fixture_plugins.toy_suite",
    )
    assert_usage_error(proc, "the Nature-DQN torso needs images of at least 36x36 pixels, got 8x8")
    assert list(tmp_path.iterdir()) == []
