"""The example as users get it after ``pip install``: discovered through its entry point, listed
with its distribution and version, run end to end through the CLI by the shared agents (random,
rainbow_iqn, and the joint agents with fine-tuning), scored, and its own sub-command."""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path

import pytest

import benchgen_atari_modes

TINY_SPLIT = """\
suite: atari_modes
name: tiny
description: one default flavor to train on, one other flavor of the same game to test on
train: [breakout:m0d0]
test: [breakout:m4d1]
"""

#: settings that make rainbow_iqn learn within a few hundred frames (the algorithm is unchanged;
#: smaller widths and one torch thread keep it quick on a small CI box); no intermediate checkpoints
RAINBOW_TINY = [
    "--set",
    "replay_capacity=1000",
    "--set",
    "learning_starts_frames=400",
    "--set",
    "batch_size=8",
    "--set",
    "target_update_frames=400",
    "--set",
    "num_tau_samples=8",
    "--set",
    "num_tau_prime_samples=8",
    "--set",
    "num_quantile_samples=8",
    "--set",
    "hidden_size=64",
    "--set",
    "device=cpu",
    "--set",
    "torch_threads=1",
    "--set",
    "checkpoint_every=1000000",
]
#: settings that make PPO update within a few hundred frames
PPO_TINY = [
    "--set",
    "n_steps=32",
    "--set",
    "batch_size=32",
    "--set",
    "n_epochs=1",
    "--set",
    "features_dim=64",
    "--set",
    "device=cpu",
    "--set",
    "torch_threads=1",
    "--set",
    "checkpoint_every=1000000",
]
TINY = {"rainbow_iqn": RAINBOW_TINY, "rainbow_iqn_joint": RAINBOW_TINY, "ppo": PPO_TINY, "ppo_joint": PPO_TINY}


def _episodes(run_dir: Path) -> list[dict]:
    conn = sqlite3.connect(run_dir / "results.sqlite")
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute("SELECT * FROM episodes ORDER BY id")]
    finally:
        conn.close()


def _agents(benchgen) -> set[str]:
    out = benchgen("list").stdout
    return {line.split()[0] for line in out.split("agents:", 1)[-1].splitlines() if line.strip()}


def test_discovered_from_its_entry_point_with_distribution_and_version(benchgen):
    proc = benchgen("plugins")
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("atari_modes ")), None)
    assert line is not None, proc.stdout + proc.stderr
    assert line.split()[:4] == [
        "atari_modes",
        "benchgen-atari-modes",
        benchgen_atari_modes.__version__,
        "benchgen_atari_modes",
    ]
    assert line.rstrip().endswith("ok")
    listing = benchgen("list", "atari_modes")
    assert listing.returncode == 0, listing.stderr
    assert "flavors " in listing.stdout and "tasks (85 of 85 runnable here)" in listing.stdout


def test_random_agent_end_to_end_and_the_random_scores_command(benchgen, tmp_path):
    out = tmp_path / "random"
    proc = benchgen(
        "run",
        "atari_modes",
        "random",
        "--tasks",
        "breakout:m0d0,breakout:m4d1",
        "--frames",
        "4000",
        "--out",
        out,
        "--no-progress",
    )
    assert proc.returncode == 0, proc.stderr
    meta = json.loads((out / "run.json").read_text())
    assert meta["protocol"]["sticky_action_probability"] == 0.25
    assert any(p["name"] == "atari_modes" and p["distribution"] == "benchgen-atari-modes" for p in meta["plugins"])
    episodes = _episodes(out)
    assert {e["task"] for e in episodes} == {"breakout:m0d0", "breakout:m4d1"}
    assert all(e["end_reason"] == "game_over" and 0 < e["length_frames"] <= 4000 for e in episodes)
    assert (out / "report" / "report.md").is_file()
    table = tmp_path / "random.csv"
    proc = benchgen("atari-modes", "random-scores", out, "-o", table)
    assert proc.returncode == 0, proc.stderr
    with table.open() as handle:
        rows = list(csv.DictReader(handle))
    assert [r["task"] for r in rows] == ["breakout:m0d0", "breakout:m4d1"] and all(int(r["episodes"]) > 0 for r in rows)
    scored = benchgen("score", "atari_modes", table, "--json")
    assert scored.returncode == 0, scored.stderr
    assert json.loads(scored.stdout)["baseline"] == "world_record"


@pytest.mark.parametrize("agent", ["rainbow_iqn"])
def test_learning_agent_end_to_end(benchgen, tmp_path, agent):
    if agent not in _agents(benchgen):
        pytest.fail(f"agent '{agent}' is not installed")
    out = tmp_path / agent
    proc = benchgen(
        "run",
        "atari_modes",
        agent,
        "--tasks",
        "breakout:m0d0",
        "--frames",
        "1600",
        *TINY[agent],
        "--out",
        out,
        "--no-progress",
        timeout=1800,
    )
    assert proc.returncode == 0, proc.stderr
    assert (out / "report" / "report.md").is_file()
    assert json.loads((out / "run.json").read_text())["agent"] == agent


@pytest.mark.parametrize("agent", ["rainbow_iqn_joint", "ppo_joint"])
def test_joint_training_zero_shot_and_fine_tuning(benchgen, tmp_path, agent):
    if agent not in _agents(benchgen):
        pytest.skip(f"joint agent '{agent}' is not installed")
    split = tmp_path / "tiny.yaml"
    split.write_text(TINY_SPLIT)
    out = tmp_path / agent
    proc = benchgen(
        "run",
        "atari_modes",
        agent,
        "--split",
        split,
        "--frames",
        "800",
        "--finetune",
        "--set",
        "finetune_budget=800",
        "--set",
        "zeroshot_episodes=1",
        *TINY[agent],
        "--out",
        out,
        "--no-progress",
        timeout=1800,
    )
    assert proc.returncode == 0, proc.stderr
    conn = sqlite3.connect(out / "results.sqlite")
    try:
        units = conn.execute("SELECT phase, tasks, status FROM units ORDER BY ordinal").fetchall()
    finally:
        conn.close()
    assert [(u[0], json.loads(u[1])) for u in units] == [
        ("joint", ["breakout:m0d0"]),
        ("zeroshot", ["breakout:m0d0"]),
        ("zeroshot", ["breakout:m4d1"]),
        ("finetune", ["breakout:m4d1"]),
    ]
    assert {u[2] for u in units} == {"done"}


def test_unknown_task_is_the_standard_one_line_error(benchgen, tmp_path):
    proc = benchgen("run", "atari_modes", "random", "--tasks", "breakout:m0d2", "--out", tmp_path / "x")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("benchgen: error: unknown task of suite 'atari_modes'")
    assert "did you mean" in lines[0] and not (tmp_path / "x").exists()
