"""The example as users get it after ``pip install``: discovered through its entry point, listed
with its distribution and version, and run end to end through the CLI by the shared agents
(random, a tiny ppo and rainbow_iqn, and a joint agent on a tiny split)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import benchgen_minatar

#: settings that make ppo update within a few hundred frames; no intermediate checkpoints
PPO_TINY = ["n_steps=64", "batch_size=32", "n_epochs=1", "device=cpu", "torch_threads=1", "checkpoint_every=1000000"]
#: settings that make rainbow_iqn learn within a few hundred frames (the algorithm is unchanged)
RAINBOW_TINY = [
    "replay_capacity=1000",
    "learning_starts_frames=100",
    "batch_size=8",
    "target_update_frames=100",
    "num_tau_samples=8",
    "num_tau_prime_samples=8",
    "num_quantile_samples=8",
    "hidden_size=32",
    "mlp_hidden_size=32",
    "device=cpu",
    "torch_threads=1",
    "checkpoint_every=1000000",
]
TINY_SPLIT = """\
suite: minatar
name: tiny
description: two games to train on, a third to test on
train: [breakout, asterix]
test: [space_invaders]
"""


def _settings(values: list[str]) -> list[str]:
    return [arg for value in values for arg in ("--set", value)]


def _episodes(run_dir: Path) -> list[dict]:
    conn = sqlite3.connect(run_dir / "results.sqlite")
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute("SELECT * FROM episodes ORDER BY id")]
    finally:
        conn.close()


def test_discovered_from_its_entry_point_with_distribution_and_version(benchgen):
    proc = benchgen("plugins")
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("minatar ")), None)
    assert line is not None, proc.stdout + proc.stderr
    assert line.split()[:4] == ["minatar", "benchgen-minatar", benchgen_minatar.__version__, "benchgen_minatar"]
    assert line.rstrip().endswith("ok")
    listing = benchgen("list", "minatar")
    assert listing.returncode == 0, listing.stderr
    assert "tasks (5 of 5 runnable here)" in listing.stdout and "holdout_space_invaders" in listing.stdout


def test_random_agent_end_to_end(benchgen, tmp_path):
    out = tmp_path / "random"
    proc = benchgen(
        "run", "minatar", "random", "--tasks", "breakout,freeway", "--frames", "3000", "--out", out, "--no-progress"
    )
    assert proc.returncode == 0, proc.stderr
    meta = json.loads((out / "run.json").read_text())
    assert meta["protocol"]["sticky_action_probability"] == 0.1 and meta["protocol"]["minatar_version"] == "1.0.15"
    assert any(p["name"] == "minatar" and p["distribution"] == "benchgen-minatar" for p in meta["plugins"])
    assert meta["versions"]["minatar"] == "1.0.15"  # the suite's declared software, recorded with the run
    episodes = _episodes(out)
    by_task = {t: [e for e in episodes if e["task"] == t] for t in ("breakout", "freeway")}
    assert by_task["breakout"] and all(e["end_reason"] == "game_over" for e in by_task["breakout"])
    assert [(e["end_reason"], e["length_frames"]) for e in by_task["freeway"]] == [("time_limit", 2501)]
    assert (out / "report" / "report.md").is_file()
    exported = tmp_path / "episodes.csv"
    assert benchgen("export", out, "-o", exported).returncode == 0
    assert exported.read_text().splitlines()[0].split(",")[6] == "ramp_level"


def test_ppo_and_rainbow_iqn_run_unchanged(benchgen, tmp_path):
    for agent, settings, frames in (("ppo", PPO_TINY, 256), ("rainbow_iqn", RAINBOW_TINY, 300)):
        out = tmp_path / agent
        proc = benchgen(
            "run", "minatar", agent, "--tasks", "breakout", "--frames", frames, *_settings(settings), "--out", out,
            "--no-progress",
        )  # fmt: skip
        assert proc.returncode == 0, f"{agent}: {proc.stderr}"
        assert (out / "report" / "report.md").is_file() and _episodes(out)


def test_joint_agent_trains_on_several_games_and_fine_tunes_on_a_held_out_one(benchgen, tmp_path):
    split = tmp_path / "tiny.yaml"
    split.write_text(TINY_SPLIT)
    out = tmp_path / "ppo_joint"
    proc = benchgen(
        "run", "minatar", "ppo_joint", "--split", split, "--frames", "256", "--finetune",
        "--set", "finetune_budget=128", "--set", "zeroshot_episodes=1", *_settings(PPO_TINY),
        "--out", out, "--no-progress",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    conn = sqlite3.connect(out / "results.sqlite")
    try:
        units = conn.execute("SELECT phase, tasks, status FROM units ORDER BY ordinal").fetchall()
    finally:
        conn.close()
    assert [(u[0], json.loads(u[1])) for u in units] == [
        ("joint", ["breakout", "asterix"]),
        ("zeroshot", ["breakout"]),
        ("zeroshot", ["asterix"]),
        ("zeroshot", ["space_invaders"]),
        ("finetune", ["space_invaders"]),
    ]
    assert {u[2] for u in units} == {"done"}


def test_an_agent_that_needs_named_actions_is_refused_in_one_line(benchgen, tmp_path):
    proc = benchgen("run", "minatar", "jerk", "--tasks", "breakout", "--out", tmp_path / "x")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("benchgen: error: ") and "minatar" in lines[0]
    assert not (tmp_path / "x").exists()
