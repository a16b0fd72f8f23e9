"""Sarsa(lambda) on sparse binary features (Bellemare et al. 2013, section 3.1; Sutton and Barto
1998, Figure 8.8): the update's numbers, its traces, learning, checkpoints, and the agent's
settings and CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

from benchgen.errors import UsageError
from benchgen_agents.sarsa.agent import check_sarsa_config
from benchgen_agents.sarsa.config import PAPER_PARAMETERS, SarsaConfig
from benchgen_agents.sarsa.learner import SparseSarsaLambda
from tests.conftest import assert_usage_error, run_cli


def learner(**kw) -> SparseSarsaLambda:
    args = dict(num_features=100, num_actions=3, alpha=0.5, gamma=0.9, lam=0.5, trace_threshold=0.01)
    return SparseSarsaLambda(**{**args, **kw})


def test_one_update_moves_the_active_weights_by_alpha_over_the_active_count():
    sarsa = learner()
    rows = sarsa.rows(np.array([7, 42]))
    assert sarsa.values(rows).tolist() == [0, 0, 0]
    sarsa.update(rows, action=1, delta=1.0)  # alpha / 2 active features * delta * trace 1
    assert sarsa.values(rows).tolist() == pytest.approx([0, 0.5, 0])
    assert sarsa.weights[rows, 1].tolist() == pytest.approx([0.25, 0.25])


def test_replacing_traces_reset_to_one_and_accumulating_traces_add():
    for kind, expected in (("replacing", 1.0), ("accumulating", 1.0 + 0.9 * 0.5)):
        sarsa = learner(trace=kind)
        rows = sarsa.rows(np.array([3]))
        sarsa.update(rows, 0, 0.0)
        sarsa.update(rows, 0, 0.0)
        assert sarsa.trace_of(rows[0], 0) == pytest.approx(expected)


def test_traces_decay_by_gamma_lambda_and_vanish_below_the_threshold():
    sarsa = learner()
    a, b = sarsa.rows(np.array([1])), sarsa.rows(np.array([2]))
    sarsa.update(a, 0, 0.0)
    sarsa.update(b, 0, 0.0)
    assert sarsa.trace_of(a[0], 0) == pytest.approx(0.45)
    sarsa.update(b, 0, 0.0)
    sarsa.update(b, 0, 0.0)  # 0.45 * 0.45 * 0.45 = 0.091; 0.041 next
    sarsa.update(b, 0, 0.0)
    sarsa.update(b, 0, 0.0)  # 0.0185
    sarsa.update(b, 0, 0.0)  # 0.0083 < 0.01: zeroed
    assert sarsa.trace_of(a[0], 0) == 0
    # the later step's error moves the weight of feature 1 by its trace (0 once it vanished)
    sarsa.update(b, 0, 1.0)
    assert sarsa.weights[a[0], 0] == 0 and sarsa.weights[b[0], 0] == pytest.approx(0.5)
    sarsa.clear_traces()
    assert len(sarsa.trace_entries) == 0 and sarsa.trace_of(b[0], 0) == 0


def test_it_learns_the_better_action_of_a_two_armed_bandit():
    """One-step episodes from one state: action 1 pays 1, action 0 pays 0."""
    sarsa = learner(num_actions=2)
    rng = np.random.default_rng(0)
    rows = sarsa.rows(np.array([5, 9]))
    for _ in range(200):
        action = int(rng.integers(2))
        q = sarsa.values(rows)[action]
        sarsa.update(rows, action, float(action) - q)  # episode ends: target = reward
        sarsa.clear_traces()
    assert sarsa.values(rows) == pytest.approx([0.0, 1.0], abs=1e-3)


def test_weights_grow_past_their_first_allocation_and_survive_a_checkpoint():
    sarsa = learner(num_features=10_000)
    for start in range(0, 3000, 500):
        rows = sarsa.rows(np.arange(start, start + 500))
        sarsa.update(rows, start % 3, 1.0)
    assert sarsa.rows_used == 3000 and len(sarsa.weights) >= 3000
    copy = learner(num_features=10_000)
    copy.load_state(sarsa.state())
    probe = np.array([0, 1234, 2999, 5000])
    assert np.array_equal(copy.values(copy.rows(probe)), sarsa.values(sarsa.rows(probe)))
    assert copy.max_active == sarsa.max_active == 500


def test_each_feature_set_takes_its_papers_parameters():
    # ALE paper, appendix C: RAM alpha 0.2 lambda 0.5, LSH 0.5 / 0.5, BASS 0.5 / 0.9; gamma 0.999, epsilon 0.05
    assert SarsaConfig(features="ram").resolved() == {"alpha": 0.2, "lam": 0.5, "gamma": 0.999, "epsilon": 0.05}
    assert SarsaConfig(features="lsh").resolved()["lam"] == 0.5
    assert SarsaConfig(features="bass").resolved() == {"alpha": 0.5, "lam": 0.9, "gamma": 0.999, "epsilon": 0.05}
    assert SarsaConfig(features="disco").resolved()["alpha"] == 0.1
    assert PAPER_PARAMETERS["blob_prost"]["gamma"] == 0.99
    assert SarsaConfig(features="bass", alpha=0.1).resolved()["alpha"] == 0.1  # a setting given wins


def test_bad_settings_are_refused_in_one_line():
    with pytest.raises(UsageError, match="unknown feature set 'bas'"):
        check_sarsa_config(SarsaConfig(features="bas"))
    with pytest.raises(UsageError, match="unknown trace"):
        check_sarsa_config(SarsaConfig(trace="dutch"))
    with pytest.raises(UsageError, match="blob_neighbourhood must be 1 or more"):
        check_sarsa_config(SarsaConfig(blob_neighbourhood=0))
    with pytest.raises(UsageError, match="--num-envs 1"):
        check_sarsa_config(SarsaConfig(), type("Run", (), {"num_envs": 4})())


def test_the_cli_refuses_an_unknown_feature_set_before_writing(tmp_path):
    out = tmp_path / "run"
    proc = run_cli("run", "atari_saber", "sarsa", "--tasks", "pong", "--set", "features=hog", "--out", out)
    assert_usage_error(proc, "unknown feature set 'hog'")
    assert not out.exists()


def test_a_short_run_learns_from_the_emulator_screen_and_checkpoints(tmp_path):
    """Basic features on Freeway, read from the palette screen the Atari suite offers; the
    checkpoint holds the background and the weights of the features met."""
    protocol = tmp_path / "ale_short.yaml"  # the ALE paper's protocol with 1,000-frame episodes
    protocol.write_text("base: ale2013\nmax_episode_frames: 1000\nevaluation_episodes: 1\n")
    out = tmp_path / "run"
    args = ("run", "atari_saber", "sarsa", "--tasks", "freeway", "--protocol", protocol, "--no-progress")
    settings = ("--set", "features=basic", "--set", "background_samples=20", "--checkpoints", "2000,4000")
    proc = run_cli(*args, *settings, "--frames", "4000", "--out", out)
    assert proc.returncode == 0, proc.stderr[-2000:]
    unit = next((out / "units").iterdir())
    checkpoint = next(p for p in unit.rglob("sarsa.json"))
    state = json.loads(checkpoint.read_text())
    assert state["features"] == "basic" and state["histogram_samples"] is None  # the background is done
    with np.load(checkpoint.parent / "sarsa_arrays.npz") as arrays:
        assert arrays["background"].shape == (210, 160)
        assert len(arrays["learner_features"]) > 0 and arrays["learner_features"].max() < 28_672
    proc = run_cli("export", out, "--output", tmp_path / "episodes.csv")
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = (tmp_path / "episodes.csv").read_text().splitlines()
    assert len(rows) >= 1 + 4 + 1  # header, four 1,000-frame training episodes, one evaluation episode


def test_a_budget_ending_before_disco_found_its_classes_still_evaluates(tmp_path):
    """Issue 47, 16: training ended while DISCO was still sampling screens for its classes, and
    the evaluation after it raised "DISCO needs its classes" with a traceback; evaluation now
    finishes discovery with the screens sampled (a copy: training's own discovery is unchanged)."""
    protocol = tmp_path / "ale_short.yaml"
    protocol.write_text("base: ale2013\nmax_episode_frames: 400\nevaluation_episodes: 1\n")
    out = tmp_path / "run"
    args = ("run", "atari_saber", "sarsa", "--tasks", "freeway", "--protocol", protocol, "--no-progress")
    settings = ("--set", "features=disco", "--set", "background_samples=20", "--set", "disco_samples=1000")
    proc = run_cli(*args, *settings, "--frames", "800", "--num-envs", "1", "--out", out)
    assert proc.returncode == 0, proc.stderr[-2000:]
    state = json.loads(next((out / "units").rglob("sarsa.json")).read_text())
    assert state["disco"]["classes"] is None and 0 < state["disco"]["samples"] < 1000  # discovery unfinished
    proc = run_cli("export", out, "--output", tmp_path / "episodes.csv")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert any(",train_eval," in row for row in (tmp_path / "episodes.csv").read_text().splitlines())
