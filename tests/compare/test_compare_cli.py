"""``benchgen compare``: protocol refusal and forced labels, reference agents, outputs, real toy runs."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from benchgen.cli import main
from tests.compare.helpers import PLUGINS, A, B, make_run
from tests.conftest import REPO, cli_env

FAST = ["--reps", "50", "--curve-points", "4", "--no-plots", "--no-html"]


def _load(out):
    return json.loads((out / "compare.json").read_text())


def test_mismatched_protocol_is_refused_naming_the_parameter(tmp_path, capsys):
    make_run(tmp_path / "r" / "a", "agent_a", A, protocol={"version": "1", "sticky_prob": 0.25})
    make_run(tmp_path / "r" / "b", "agent_b", B, protocol={"version": "1", "sticky_prob": 0.0})
    out = tmp_path / "out"
    assert main(["compare", str(tmp_path / "r"), "--out", str(out), *FAST]) == 2
    err = capsys.readouterr().err
    assert err.startswith("benchgen: error: runs differ in protocol parameters: sticky_prob (0.25 in a; 0.0 in b)")
    assert "--force" in err and "version (" not in err  # only what differs is named
    assert not out.exists(), "a refused comparison writes nothing"


def test_budget_and_suite_version_mismatch_are_named(tmp_path, capsys):
    make_run(tmp_path / "a", "agent_a", A, budget=4000, protocol={"version": "1"})
    make_run(tmp_path / "b", "agent_b", B, budget=2000, protocol={"version": "2"})
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "o"), *FAST]) == 2
    err = capsys.readouterr().err
    assert "version (1 in a; 2 in b)" in err and "budget (4000 in a; 2000 in b)" in err


def test_forced_comparison_is_labelled_in_every_output(tmp_path, capsys):
    make_run(tmp_path / "r" / "a", "agent_a", A, protocol={"version": "1", "sticky_prob": 0.25})
    make_run(tmp_path / "r" / "b", "agent_b", B, protocol={"version": "1", "sticky_prob": 0.0})
    out = tmp_path / "out"
    assert (
        main(["compare", str(tmp_path / "r"), "--out", str(out), "--force", "--reps", "50", "--curve-points", "3"]) == 0
    )
    label = "FORCED COMPARISON: protocols differ in sticky_prob"
    assert label in capsys.readouterr().out
    data = _load(out)
    assert data["forced"] is True and data["forced_label"].startswith(label)
    assert data["protocol_differences"] == {"sticky_prob": {"0.25": ["a"], "0.0": ["b"]}}
    assert label in (out / "compare.md").read_text().splitlines()[2]
    page = (out / "compare.html").read_text()
    assert 'id="forced-label"' in page and label in page and "<title>[FORCED]" in page
    assert sorted(p.name for p in out.glob("*.png")) == [
        "aggregates.png",
        "classes.png",
        "learning_curves.png",
        "learning_curves_tasks.png",
        "performance_profiles.png",
        "probability_of_improvement.png",
    ]


def test_reference_agent_normalization_saber_eq2(two_agents, tmp_path):
    """--baseline toy_ref: s = (a - random) / |ref - random|, per task (random is 0 here)."""
    out = tmp_path / "o"
    assert main(["compare", str(two_agents), "--out", str(out), "--baseline", "toy_ref", *FAST]) == 0
    data = _load(out)
    assert data["baseline"] == "toy_ref" and data["normalized"]
    norm = data["per_task"]["normalized"]
    # agent_a raw means: count-20 30, count-50 40; toy_ref: 50, 25
    assert norm["count-20"]["agent_a"]["value"] == pytest.approx(30 / 50)
    assert norm["count-50"]["agent_a"]["value"] == pytest.approx(40 / 25)
    assert norm["count-50"]["toy_ref (ref)"]["value"] == pytest.approx(1.0)
    assert data["references"]["toy_ref"]["aggregates"]["median"] == pytest.approx(1.0)
    # the reference at an earlier checkpoint: NAME@CHECKPOINT
    out2 = tmp_path / "o2"
    assert main(["compare", str(two_agents), "--out", str(out2), "--baseline", "toy_ref@1000", *FAST]) == 0
    data2 = _load(out2)
    assert data2["baseline"] == "toy_ref@1000"
    assert data2["per_task"]["normalized"]["count-20"]["agent_b"]["value"] == pytest.approx(10 / 10)


def test_user_reference_csv_as_row_and_baseline(two_agents, tmp_path, capsys):
    csv = tmp_path / "mine.csv"
    csv.write_text("task,frames_1000,frames_4000\ncount-20,5,20\ncount-50,10,40\ncount-80,20,inf\n")
    out = tmp_path / "o"
    assert main(["compare", str(two_agents), "--out", str(out), "--reference", f"my_agent={csv}", *FAST]) == 0
    data = _load(out)
    mine = data["references"]["my_agent"]
    assert mine["checkpoint"] == "frames_4000"  # matches the runs' 4000 frames
    assert mine["raw"] == {"count-20": 20.0, "count-50": 40.0, "count-80": "inf"}
    assert mine["normalized"]["count-80"] == "inf" and mine["aggregates"]["mean"] == pytest.approx(
        (0.2 + 0.4 + 2.0) / 3
    )
    assert "my_agent (ref)" in data["per_task"]["views"]["score"]["count-20"]
    # a plain task,score CSV as the baseline
    base = tmp_path / "base.csv"
    base.write_text("task,score\ncount-20,60\ncount-50,80\ncount-80,300\n")
    assert main(["compare", str(two_agents), "--out", str(tmp_path / "o2"), "--baseline", str(base), *FAST]) == 0
    assert _load(tmp_path / "o2")["per_task"]["normalized"]["count-20"]["agent_a"]["value"] == pytest.approx(0.5)
    # an unknown baseline: one line, did-you-mean
    capsys.readouterr()
    assert main(["compare", str(two_agents), "--out", str(tmp_path / "o3"), "--baseline", "toy_rf", *FAST]) == 2
    assert "did you mean 'toy_ref'" in capsys.readouterr().err


def test_raw_mode_and_checkpoint_and_pairs(two_agents, tmp_path, capsys):
    out = tmp_path / "o"
    assert (
        main(["compare", str(two_agents), "--out", str(out), "--baseline", "raw", "--pair", "agent_b:agent_a", *FAST])
        == 0
    )
    data = _load(out)
    assert not data["normalized"] and data["metrics"] == ["median", "iqm", "mean"]
    assert data["aggregate_tasks"] == ["count-20", "count-50"]  # count-80 has infinite gameplay: raw only
    assert [(p["x"], p["y"]) for p in data["probability_of_improvement"]] == [("agent_b", "agent_a")]
    assert main(["compare", str(two_agents), "--out", str(out), "--at", "99999", *FAST]) == 2
    assert "--at 99999 lies outside the budget" in capsys.readouterr().err
    # aggregates of another time view (Atari: score_5min / score_30min; the toy suite records score_half)
    assert main(["compare", str(two_agents), "--out", str(out), "--view", "score_half", *FAST]) == 0
    assert _load(out)["agents"]["agent_a"]["aggregates"]["median"]["value"] == pytest.approx(0.2)
    assert main(["compare", str(two_agents), "--out", str(out), "--view", "score_5min", *FAST]) == 2
    assert "the runs record the views score_half, score" in capsys.readouterr().err


def _run(out, *extra):
    cmd = [
        sys.executable,
        "-m",
        "benchgen",
        "run",
        "toy",
        "random",
        "--tasks",
        "count-20,count-50",
        "--seeds",
        "0,1",
        "--frames",
        "1200",
        "--out",
        str(out),
        "--no-progress",
        *extra,
    ]
    return subprocess.Popen(
        cmd, env=cli_env(PLUGINS), cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_report_over_a_results_root_of_real_runs(tmp_path):
    """Two agent configs trained by `benchgen run`; `benchgen report ROOT` compares them."""
    root = tmp_path / "results"
    procs = [_run(root / "a"), _run(root / "b", "--set", "seed_offset=5")]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    proc = subprocess.run(
        [sys.executable, "-m", "benchgen", "report", str(root)],
        capture_output=True,
        text=True,
        env=cli_env(PLUGINS),
        cwd=REPO,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    data = _load(root / "compare")
    assert data["labels"] == ["random(seed_offset=0)", "random(seed_offset=5)"]
    assert data["rows"]["random(seed_offset=0)"] == ["a:seed0", "a:seed1"]
    assert not data["protocol_length"] and not data["forced"]
    curves = data["curves"]
    assert len(curves["frames"]) == 20 and curves["frames"][-1] == 1200
    agg = curves["aggregate"]["random(seed_offset=0)"]
    assert agg["value"][-1] == pytest.approx(data["agents"]["random(seed_offset=0)"]["aggregates"]["iqm"]["value"])
    assert all(lo <= v <= hi for v, lo, hi in zip(agg["value"], agg["ci_low"], agg["ci_high"]) if v is not None)
    assert "P(random(seed_offset=0) > random(seed_offset=5))" in proc.stdout


def test_scores_at_a_checkpoint_with_the_matching_reference(tmp_path):
    """--at 1000: each seed's score from the episodes finished by frame 1000, next to toy_ref at 1000."""
    eps = {s: {t: [10.0 * (s + 1), 50.0, 60.0, 70.0] for t in ("count-20", "count-50")} for s in (0, 1)}
    make_run(tmp_path / "r" / "a", "agent_a", eps)
    make_run(
        tmp_path / "r" / "b",
        "agent_b",
        {s: {t: [5.0, 5.0, 5.0, 5.0] for t in ("count-20", "count-50")} for s in (0, 1)},
    )
    out = tmp_path / "o"
    assert main(["compare", str(tmp_path / "r"), "--out", str(out), "--at", "1000", *FAST]) == 0
    data = _load(out)
    assert data["amount"] == 1000 and data["at"] == 1000
    assert data["per_task"]["views"]["score"]["count-20"]["agent_a"]["mean"] == pytest.approx(15.0)
    assert data["references"]["toy_ref"]["checkpoint"] == "1000"
    assert data["per_task"]["views"]["score"]["count-20"]["toy_ref (ref)"]["mean"] == 10.0
    assert data["welch"][0]["tasks"]["count-20"]["mean_y"] == 5.0


def test_runs_differing_only_in_how_they_ran_pool_their_seeds(tmp_path):
    """Seeds of one agent run with other threads or devices (``execution_setting`` fields) are
    one experiment: pooled under one label, with a note saying how each ran; a setting of what
    the agent learns still tells runs apart."""
    root = tmp_path / "runs"
    for name, seed, config in (
        ("cpu1", 0, {"torch_threads": 1, "device": "cpu", "learning_rate": 1e-4}),
        ("cpu0", 1, {"torch_threads": 0, "device": "auto", "learning_rate": 1e-4}),
        ("fast", 2, {"torch_threads": 0, "device": "auto", "learning_rate": 1e-3}),
    ):
        make_run(root / name, "dqn", {seed: {"count-20": [10.0 + seed]}}, agent_config=config)
    out = tmp_path / "o"
    assert main(["compare", str(root), "--out", str(out), *FAST]) == 0
    data = _load(out)
    assert data["labels"] == ["dqn(learning_rate=0.0001)", "dqn(learning_rate=0.001)"]
    assert data["rows"]["dqn(learning_rate=0.0001)"] == ["cpu0:seed1", "cpu1:seed0"]
    note = next(n for n in data["notes"] if "how the runs ran" in n)
    assert 'device: "auto" in cpu0' not in note and "device: auto in cpu0, cpu in cpu1" in note
    assert "torch_threads: 0 in cpu0, 1 in cpu1, 0 in fast" in note
