"""Input that was accepted and silently half used (issue 47, 15) is refused in one line."""

from __future__ import annotations

import pytest

from tests.conftest import refused_in_process


@pytest.mark.parametrize("flag", ["--config", "--protocol"])
def test_a_key_given_twice_in_a_yaml_file_is_refused(tmp_path, capsys, flag):
    """PyYAML keeps the last of two equal keys: the first value was silently dropped."""
    config = tmp_path / "twice.yaml"
    config.write_text("base: saber\nmax_episode_frames: 100\nmax_episode_frames: 200\n")
    refused_in_process(
        capsys,
        "gives the key 'max_episode_frames' twice (lines 2 and 3)",
        "run",
        "toy",
        "random",
        flag,
        config,
        "--plan",
    )


@pytest.mark.parametrize("tasks", ["", ",,,", " , "])
def test_an_empty_task_list_is_refused(capsys, tasks):
    """It once ran the suite's default split, as if --tasks were not given."""
    refused_in_process(capsys, "expected comma-separated names", "run", "toy", "random", "--tasks", tasks, "--plan")


@pytest.mark.parametrize("setting", ["run.suite=other", "run.agent=other", "suite=other", "agent=other"])
def test_suite_and_agent_are_not_settings(capsys, setting):
    """The command line's SUITE AGENT replaced them: listed by `benchgen settings`, and ignored."""
    refused_in_process(capsys, "is given on the command line", "run", "toy", "random", "--set", setting, "--plan")


def test_settings_does_not_list_them(capsys):
    from benchgen.cli import main

    capsys.readouterr()
    assert main(["settings", "random", "--suite", "toy"]) == 0
    names = [line.split()[0] for line in capsys.readouterr().out.splitlines() if line.startswith("  ")]
    assert "tasks" in names and "suite" not in names and "agent" not in names


def test_a_raw_comparison_counts_no_tasks_at_or_above_a_baseline(tmp_path, capsys):
    """Without a baseline (a suite with no scores to normalize by) compare said "1/3 tasks >= None"."""
    from benchgen.cli import main
    from tests.compare.helpers import A, make_run

    make_run(tmp_path / "runs" / "a", "agent_a", A)
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "runs"), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "None" not in out and ">=" not in out, out
