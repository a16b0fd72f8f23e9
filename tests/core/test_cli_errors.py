"""Every bad input: one line that says what to do, exit code 2, no traceback, nothing recorded."""

from __future__ import annotations

import pytest

from tests.conftest import assert_usage_error, run_cli


@pytest.mark.parametrize(
    "args, fragments",
    [
        (["run", "tyo", "random"], ["unknown suite 'tyo'", "did you mean 'toy'"]),
        (["run", "toy", "randm"], ["unknown agent 'randm'", "did you mean 'random'"]),
        (["run", "toy", "random", "--tasks", "count-21"], ["unknown task", "did you mean 'count-20'"]),
        (["run", "toy", "random", "--split", "pairr"], ["unknown split", "did you mean 'pair'"]),
        (["run", "toy", "random", "--set", "nokey"], ["--set expects key=value"]),
        (["run", "toy", "random", "--set", "seed_ofset=3"], ["did you mean 'seed_offset'"]),
        (["run", "toy", "random", "--set", "seed_offset=abc"], ["must be an integer"]),
        (["run", "toy", "random", "--frames", "0"], ["budget must be a positive"]),
        (["run", "toy", "random", "--frames", "-40"], ["budget must be a positive"]),
        (["run", "toy", "random", "--frames", "lots"], ["not a number"]),
        (["run", "toy", "random", "--seeds", "0,0"], ["seed twice"]),
        (["run", "toy", "ppo_joint", "--set", "run.zeroshot_frames=0"], ["zeroshot_frames must be a positive"]),
        (["run", "toy", "ppo_joint", "--set", "run.zeroshot_episodes=0"], ["zeroshot_episodes must be positive"]),
        (["list", "tyo"], ["did you mean 'toy'"]),
        (["frobnicate"], ["invalid choice"]),
        (["resume", "/nonexistent/run"], ["not a benchgen run directory"]),
        (["export", "/nonexistent/run"], ["not a benchgen run directory"]),
    ],
)
def test_bad_run_input(tmp_path, args, fragments):
    out = tmp_path / "run"
    proc = run_cli(*args, *(["--out", out] if args[0] == "run" else []))
    assert_usage_error(proc, *fragments)
    assert not out.exists(), "nothing may be written for bad input"


def test_config_file_that_does_not_parse(tmp_path):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("seed_offset: [1, 2\n")
    proc = run_cli("run", "toy", "random", "--config", cfg, "--out", tmp_path / "run")
    assert_usage_error(proc, "does not parse as YAML")
    assert not (tmp_path / "run").exists()


def test_config_file_with_unknown_key(tmp_path):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("agent:\n  sed_offset: 1\n")
    proc = run_cli("run", "toy", "random", "--config", cfg, "--out", tmp_path / "run")
    assert_usage_error(proc, "sed_offset", "did you mean 'seed_offset'")


def test_output_directory_holding_another_run(tmp_path):
    out = tmp_path / "run"
    first = run_cli("run", "toy", "random", "--tasks", "count-20", "--frames", "400", "--out", out, "--no-progress")
    assert first.returncode == 0, first.stderr
    before = (out / "results.sqlite").stat().st_mtime_ns
    proc = run_cli("run", "toy", "random", "--tasks", "count-20", "--frames", "400", "--out", out)
    assert_usage_error(proc, "already holds a run", "benchgen resume")
    assert (out / "results.sqlite").stat().st_mtime_ns == before


@pytest.mark.parametrize(
    "content, fragment",
    [
        ("task,score\ncount-20,abc\n", "is not a number"),
        ("game,points\ncount-20,1\n", "needs columns task,score"),
        ("task,score\ncount-20,1\ncount-20,2\n", "appears twice"),
        ("task,score\n,1\n", "empty task name"),
        ("task,score\ncount-21,1\n", "did you mean 'count-20'"),
        ("task,score\n", "no rows"),
    ],
)
def test_bad_score_csv(tmp_path, content, fragment):
    path = tmp_path / "scores.csv"
    path.write_text(content)
    assert_usage_error(run_cli("score", "toy", path), fragment)


def test_plugin_that_fails_to_import_stops_startup():
    proc = run_cli("list", plugins="tests.fixture_plugins.toy_suite,tests.fixture_plugins.does_not_exist")
    assert_usage_error(proc, "error importing plugin 'tests.fixture_plugins.does_not_exist'")
    listing = run_cli("plugins", plugins="tests.fixture_plugins.toy_suite,tests.fixture_plugins.does_not_exist")
    assert listing.returncode == 1
    assert "tests.fixture_plugins.toy_suite" in listing.stdout and "FAILED" in listing.stdout
