"""A budget that is not a whole number of vector steps (issue 27 item 11): the unit runs whole
vector steps up to the first at or past its budget, as the agent contract says, and the plan says
so, with the nearest budgets that run exactly (``benchgen/run/budget.py``)."""

from __future__ import annotations

import sqlite3

from benchgen.cli import main


def _run(tmp_path, capsys, frames: int, num_envs: int) -> tuple[str, list[int]]:
    out = tmp_path / "run"
    capsys.readouterr()
    code = main(
        ["run", "toy", "random", "--tasks", "count-20", "--frames", str(frames), "--num-envs", str(num_envs)]
        + ["--out", str(out), "--no-progress"]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    with sqlite3.connect(out / "results.sqlite") as conn:
        done = [row[0] for row in conn.execute("SELECT frames_done FROM units")]
    conn.close()
    return captured.out + captured.err, done


def test_the_plan_says_what_a_budget_between_vector_steps_runs(tmp_path, capsys):
    # toy: 4 frames per step; 3 sub-environments step 12 frames at a time; 1,001 frames is
    # 250 agent steps, run as 84 vector steps: 1,008 frames
    text, done = _run(tmp_path, capsys, 1001, 3)
    assert done == [1008]
    line = next(line for line in text.splitlines() if "budget:" in line)
    assert "runs 1,008 frames, not the 1,001 asked" in line
    assert "3 sub-environments x 4 frames" in line and "996 or 1,008 frames run exactly" in line
    assert "total at most 1,008 frames" in text


def test_a_budget_of_whole_vector_steps_says_nothing_more(tmp_path, capsys):
    text, done = _run(tmp_path, capsys, 1008, 3)
    assert done == [1008]
    assert "budget:" not in text and "total at most 1,008 frames" in text


def test_frames_that_are_not_whole_agent_steps_are_refused_for_a_suite_counting_timesteps(monkeypatch, capsys):
    """A suite whose budget is in timesteps (4 frames each) does not turn --frames 1001 into 1000
    silently (issue 28 item 3): one line naming the nearest budgets that are whole steps."""
    from tests.conftest import refused_in_process

    monkeypatch.setenv("BENCHGEN_PLUGINS", "tests.fixture_plugins.platformer_suite")
    refused_in_process(capsys, "--frames 1000 or 1004", "run", "platformer", "random", "--frames", "1001", "--plan")
    code = main(["run", "platformer", "random", "--frames", "1000", "--plan"])
    assert code == 0
    assert "250 timesteps" in capsys.readouterr().out
