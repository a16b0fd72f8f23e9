"""Studies over Atari protocols: a sweep of one protocol parameter (Machado et al. 2018, Table 1)
and a trained agent re-evaluated under another protocol (SABER, Table 2), through the CLI."""

from __future__ import annotations

import json
import sqlite3

from tests.conftest import assert_usage_error, run_cli

# a Freeway game lasts 2 min 16 s (about 8,200 frames): one env, 20k frames, two episodes
SWEEP = ("run", "atari_saber", "random", "--tasks", "freeway", "--frames", "20k", "--num-envs", "1", "--no-progress")


def _phases(run_dir) -> list[tuple[str, str]]:
    with sqlite3.connect(run_dir / "results.sqlite") as conn:
        return list(conn.execute("SELECT phase, extras FROM episodes ORDER BY id"))


def test_a_sweep_runs_one_condition_per_value_and_reports_them_side_by_side_with_the_paper(tmp_path):
    out = tmp_path / "sweep"
    proc = run_cli(*SWEEP, "--protocol", "machado2018", "--vary", "sticky_action_probability=0,0.25", "--out", out)
    assert proc.returncode == 0, proc.stderr[-2000:]
    deterministic = json.loads((out / "sticky_action_probability=0" / "run.json").read_text())
    sticky = json.loads((out / "sticky_action_probability=0.25" / "run.json").read_text())
    assert deterministic["protocol"]["protocol"] == "custom"
    assert deterministic["protocol"]["sticky_action_probability"] == 0.0
    assert sticky["protocol"]["protocol"] == "machado2018"  # the preset's own value: the preset itself
    table = json.loads((out / "sweep_table.json").read_text())
    assert table["tasks"] == ["freeway"] and table["parameter"] == "sticky_action_probability"
    conditions = table["conditions"]
    assert set(conditions) == {"sticky_action_probability=0", "sticky_action_probability=0.25"}
    # Machado et al. 2018, Table 1: DQN on Freeway, 32.2 deterministic and 31.6 sticky
    deterministic, sticky = conditions["sticky_action_probability=0"], conditions["sticky_action_probability=0.25"]
    assert deterministic["published"]["machado2018_dqn_deterministic"]["scores"]["freeway"] == 32.2
    assert sticky["published"]["machado2018_dqn_sticky"]["scores"]["freeway"] == 31.6
    assert "machado2018_dqn_sticky" not in deterministic["published"]  # each beside its own condition
    text = (out / "sweep.md").read_text()
    assert "| freeway |" in text and "machado2018_dqn_deterministic" in text
    (out / "sweep.md").unlink()
    assert run_cli("resume", out, "--no-progress").returncode == 0  # a sweep resumes as one
    assert (out / "sweep.md").read_text() == text


def test_bad_sweeps_are_refused_in_one_line_before_anything_is_written(tmp_path):
    out = tmp_path / "sweep"
    assert_usage_error(run_cli(*SWEEP, "--vary", "sticky=0,0.25", "--out", out), "unknown protocol parameter")
    assert_usage_error(run_cli(*SWEEP, "--vary", "frameskip=4", "--out", out), "two values at least")
    assert_usage_error(run_cli(*SWEEP, "--vary", "frameskip=4,7", "--out", out), "frameskip 7 does not divide")
    assert not out.exists()
    toy = ("run", "toy", "random", "--vary", "x=1,2", "--out", out)
    assert_usage_error(run_cli(*toy), "has a single protocol")


def test_a_trained_agent_is_re_evaluated_under_another_protocol_and_the_report_names_both(tmp_path):
    trained = tmp_path / "trained"
    proc = run_cli(*SWEEP[:6], "4k", *SWEEP[7:], "--protocol", "machado2018", "--out", trained)
    assert proc.returncode == 0, proc.stderr[-2000:]
    # DQN 2015's minimal action set is another action space: refused in one line
    assert_usage_error(run_cli("evaluate", trained, "--protocol", "dqn2015"), "Discrete(18)", "Discrete(3)")
    custom = tmp_path / "dqn_full.yaml"
    # evaluation episodes capped at 500 frames (a random Freeway game lasts about 8,200)
    custom.write_text("base: dqn2015\nfull_action_space: true\nevaluation_episode_cap_frames: 500\n")
    out = tmp_path / "reeval"
    proc = run_cli("evaluate", trained, "--protocol", custom, "--episodes", "3", "--out", out, "--no-progress")
    assert proc.returncode == 0, proc.stderr[-2000:]
    meta = json.loads((out / "run.json").read_text())
    assert meta["reevaluation"]["source_protocol_label"] == "machado2018"
    assert meta["reevaluation"]["schedule"]["epsilon"] == 0.05  # DQN 2015's evaluation policy
    assert meta["protocol"]["protocol"] == "custom" and meta["protocol"]["noop_max"] == 30
    rows = _phases(out)
    assert len(rows) == 3 and {phase for phase, _ in rows} == {"reeval"}  # exactly the quota
    report = (out / "report" / "report.md").read_text()
    assert "trained under the protocol machado2018" in report and "custom (from dqn2015 v2)" in report
    assert_usage_error(run_cli("evaluate", tmp_path, "--protocol", "saber"), "not a benchgen run directory")


def test_evaluate_takes_a_relative_run_path_and_a_failed_one_leaves_nothing_behind(tmp_path, monkeypatch, capsys):
    """Issue 27 item 3: ``benchgen evaluate runs/base`` read its starting checkpoints relative to
    the new run and always failed, leaving a half-made evaluation run behind."""
    from benchgen.cli import main
    from benchgen.errors import UsageError
    from benchgen.run.execution import execute

    trained = ("run", "atari_saber", "random", "--tasks", "pong", "--frames", "4k", "--num-envs", "1")
    proc = run_cli(*trained, "--protocol", "machado2018", "--out", "runs/base", "--no-progress", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    monkeypatch.chdir(tmp_path)
    evaluate = ["evaluate", "runs/base", "--protocol", "saber", "--episodes", "1", "--no-progress"]
    with monkeypatch.context() as m:

        def fail(*args, **kwargs):
            raise UsageError("the unit failed")

        m.setattr(execute, "run_units", fail)
        assert main(evaluate) == 2
    assert "benchgen: error: the unit failed" in capsys.readouterr().err
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["base"]  # nothing half-made
    assert main(evaluate) == 0, capsys.readouterr().err
    rows = _phases(tmp_path / "runs" / "base-eval-saber")
    assert [phase for phase, _ in rows] == ["reeval"]
