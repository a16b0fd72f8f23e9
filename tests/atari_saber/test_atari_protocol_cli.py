"""``--protocol``: a named Atari protocol or a custom YAML one, recorded, reported, resumed and
kept apart by compare; bad choices refused in one line before anything is written."""

from __future__ import annotations

import json
import sqlite3

import pytest

from tests.conftest import assert_usage_error, run_cli

RANDOM_RUN = ("run", "atari_saber", "random", "--tasks", "pong", "--frames", "40k", "--no-progress")


def write(path, text: str):
    path.write_text(text)
    return path


def test_named_protocol_is_recorded_reported_and_resumed(tmp_path):
    out = tmp_path / "machado"
    run = (*RANDOM_RUN[:6], "10k", "--num-envs", "1", "--no-progress")  # two or three random Pong games
    proc = run_cli(*run, "--protocol", "machado2018", "--out", out)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "protocol  machado2018" in proc.stderr  # the plan says which
    meta = json.loads((out / "run.json").read_text())
    assert meta["protocol"]["protocol"] == "machado2018"
    assert meta["protocol"]["max_episode_frames"] == 18_000 and meta["protocol"]["max_stuck_frames"] == 0
    assert meta["protocol_choice"] == {"preset": "machado2018", "changes": {}}
    proc = run_cli("report", out)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Protocol: machado2018." in (out / "report" / "report.md").read_text()
    proc = run_cli("resume", out, "--no-progress")  # rebuilt under the same protocol: no drift
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "another protocol" not in proc.stderr

    saber = tmp_path / "saber"
    assert run_cli(*run, "--out", saber).returncode == 0
    proc = run_cli("compare", out, saber, "--out", tmp_path / "cmp")
    assert proc.returncode != 0 and "max_episode_frames" in proc.stderr  # protocols are not mixed


def test_custom_protocol_file_is_labelled_with_its_changes(tmp_path):
    custom = write(tmp_path / "skip5.yaml", "base: machado2018\nframeskip: 5\nnoop_max: 30\n")
    out = tmp_path / "custom"
    proc = run_cli(*RANDOM_RUN, "--protocol", custom, "--out", out)
    assert proc.returncode == 0, proc.stderr[-2000:]
    meta = json.loads((out / "run.json").read_text())
    assert meta["protocol"]["protocol"] == "custom" and meta["protocol"]["protocol_base"] == "machado2018"
    assert meta["protocol"]["frameskip"] == 5 and meta["frames_per_step"] == 5
    assert meta["protocol_choice"] == {"preset": "machado2018", "changes": {"frameskip": 5, "noop_max": 30}}
    with sqlite3.connect(out / "results.sqlite") as conn:
        lengths = [row[0] for row in conn.execute("SELECT length_frames FROM episodes")]
    assert lengths and all(n % 5 == 0 for n in lengths)  # frame skip 5
    assert run_cli("report", out).returncode == 0
    report = (out / "report" / "report.md").read_text()
    assert "Protocol: custom (from machado2018); changed: frameskip = 5, noop_max = 30." in report
    custom.unlink()  # the run keeps the values, not the path
    assert run_cli("resume", out, "--no-progress").returncode == 0


@pytest.mark.parametrize(
    ("protocol", "fragments"),
    [
        ("machado", ["unknown atari_saber protocol 'machado'", "did you mean 'machado2018'"]),
        (
            "file:base: dqn2015\nevaluation_frames: 1000\n",
            ["give evaluation_episodes or evaluation_frames, not both"],
        ),
        ("file:base: saber\nevaluation_interval_frames: 4000\n", ["need evaluation phases"]),
        ("file:base: saber\nmax_stuck_frames: 0\n", ["infinite_gameplay needs max_stuck_frames > 0"]),
        ("file:base: ale2013\ntraining_episodes: -1\n", ["training_episodes must be a whole number >= 0"]),
        ("file:base: saber\nframe_skip: 5\n", ["unknown protocol parameter 'frame_skip'", "did you mean 'frameskip'"]),
        (
            "file:base: saber\nsticky_action_probability: 1.5\n",
            ["sticky_action_probability must be a number in [0, 1]"],
        ),
        ("file:base: saber\nframeskip: 7\n", ["frameskip 7 does not divide"]),
        ("file:frameskip: 5\n", ["give `base: PRESET`"]),
    ],
)
def test_bad_protocol_choices_are_refused_before_anything_is_written(tmp_path, protocol, fragments):
    if protocol.startswith("file:"):
        protocol = str(write(tmp_path / "custom.yaml", protocol.removeprefix("file:")))
    out = tmp_path / "run"
    assert_usage_error(run_cli(*RANDOM_RUN, "--protocol", protocol, "--out", out), *fragments)
    assert not out.exists()


def test_a_suite_with_one_protocol_takes_no_protocol(tmp_path):
    proc = run_cli("run", "toy", "random", "--protocol", "saber", "--out", tmp_path / "r")
    assert_usage_error(proc, "suite 'toy' has a single protocol")


def test_protocols_command_shows_presets_side_by_side_and_one_with_sources():
    proc = run_cli("protocols", "atari_saber")
    assert proc.returncode == 0, proc.stderr
    for name in ("saber", "machado2018", "dqn2015", "rainbow2018", "ale2013"):
        assert name in proc.stdout
    differing = [line for line in proc.stdout.splitlines() if "frameskip" in line]
    assert differing and "*" in differing[0]  # ALE 2013's frame skip 5 differs
    # every preset differs from another in its version since dqn2015 and rainbow2018 went to 2 (they
    # score the best policy found): the row is marked, with the values side by side
    versions = [line for line in proc.stdout.splitlines() if " version " in line]
    assert versions and "*" in versions[0] and " 2 " in versions[0] and " 1 " in versions[0]
    best = [line for line in proc.stdout.splitlines() if " best_policy " in line]
    assert best and "*" in best[0] and "True" in best[0] and "False" in best[0]
    proc = run_cli("protocols", "atari_saber", "ale2013")
    assert proc.returncode == 0 and "5,000 training episodes" in proc.stdout
    assert_usage_error(run_cli("protocols", "atari_saber", "sabre"), "did you mean 'saber'")
    assert "named protocols" in run_cli("list", "atari_saber").stdout


def test_a_run_of_dqn2015_version_1_stays_readable_as_its_version(tmp_path):
    # dqn2015 version 1 scored the agent at the end of training; version 2 scores the best round's
    # agent re-evaluated. A run recorded under version 1 is still reported and compared as itself,
    # and is not continued under version 2
    out = tmp_path / "old"
    quick = write(tmp_path / "quick.yaml", "base: dqn2015\nevaluation_episodes: 1\nevaluation_interval_frames: 0\n")
    proc = run_cli(*RANDOM_RUN[:6], "800", "--num-envs", "2", "--protocol", quick, "--out", out, "--no-progress")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "protocol  custom (from dqn2015 v2)" in proc.stderr
    meta = json.loads((out / "run.json").read_text())
    assert meta["protocol"]["best_policy"] and meta["protocol"]["protocol_version"] == "2"
    # what version 1 recorded: no best_policy, one evaluation after training, its task score rule
    old = {k: v for k, v in meta["protocol"].items() if k not in ("protocol_base", "best_policy")}
    old.update(protocol="dqn2015", protocol_version="1", evaluation_interval_frames=0, evaluation_episodes=30)
    old["task_score"] = meta["task_score_rule"] = "mean raw score of the evaluation episodes"
    meta.update(protocol=old, protocol_choice={"preset": "dqn2015", "changes": {}})
    (out / "run.json").write_text(json.dumps(meta))
    conn = sqlite3.connect(out / "results.sqlite")
    conn.execute("DELETE FROM episodes WHERE phase = 'train_best'")  # version 1 never played it
    conn.commit()
    conn.close()
    assert run_cli("report", out).returncode == 0
    report = (out / "report" / "report.md").read_text()
    assert "Protocol: dqn2015." in report and "mean raw score of the evaluation episodes" in report
    scores = json.loads((out / "report" / "report.json").read_text())["phases"]
    assert "train_best" not in scores and scores["train_eval"]["episodes"] == 1
    assert_usage_error(run_cli("resume", out, "--no-progress"), "protocol.protocol_version (1 -> 2)")
