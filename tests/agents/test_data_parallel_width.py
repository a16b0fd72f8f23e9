"""What a run with data-parallel or virtual workers plays, said in its plan (issue 47, 14): all the
workers' sub-environments, declared by the agent (``AgentSpec.vector_width``), and a warning when a
learning unit's budget is below one of its learning rounds (``AgentSpec.round_steps``)."""

from __future__ import annotations

from tests.conftest import run_cli


def _plan(*args: str) -> str:
    proc = run_cli("run", "atari_saber", *args, "--plan", plugins=None)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_the_plan_says_how_many_sub_environments_virtual_workers_play_and_warns_below_one_round():
    plan = _plan("ppo_joint", "--split", "ale_train5", "--set", "virtual_workers=188", "--frames", "40000")
    assert "joint        1 unit x 40,000 frames (5 tasks; 188 sub-environments stepped at once)" in plan
    assert "below one learning round of ppo_joint (24,064 agent steps over 188 sub-environments)" in plan
    # its unit stops at a whole vector step of all 188 sub-environments, not of the 8 the run names
    assert "a whole vector step of 188 sub-environments x 4 frames" in plan


def test_a_budget_of_one_round_or_more_plans_without_a_warning():
    assert "below one learning round" in _plan("ppo", "--tasks", "pong", "--frames", "400")
    assert "below one learning round" not in _plan("ppo", "--tasks", "pong", "--frames", "4096")
    assert "sub-environments stepped at once" not in _plan("ppo", "--tasks", "pong", "--frames", "4096")
