"""The shipped Procgen evaluation table (``data/evaluation_speeds.csv``, from which ``--plan`` counts
a run's test rounds) is what ``benchmarks/procgen_evaluation_speeds.py`` derives from the committed
runs' episodes, and the script times a round as its header says."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchgen.speeds import read_evaluation_csv
from benchgen_procgen.suite import ProcgenSuite
from tests.benchmark_scripts import load

ROOT = Path(__file__).resolve().parents[2]
HEAD = "task,seed,episode,frames_total,length_frames,score,phase,unit_id,env_index,wall_time\n"


def test_the_committed_table_is_what_the_committed_runs_give():
    assert load("procgen_evaluation_speeds").main(["--check"]) == 0
    assert any(e.agent == "ppo" for e in ProcgenSuite().measured_evaluation())  # the suite reads it


def test_a_round_lasts_its_last_vector_step_at_the_fitted_seconds_a_step(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    # two sub-environments in lockstep, 0.5 s a vector step from t=100: env 0 ends episodes of 4
    # and 6 frames (steps 4 and 10), env 1 one of 8 (step 8); a training episode is not counted,
    # nor is the second round's timing mixed with the first's (a round every frames_total)
    (results / "ppo-coinrun-seed0.csv").write_text(
        HEAD
        + "coinrun,0,0,50,30,1,train,u,0,90.0\n"
        + "coinrun,0,1,250,4,10,train_eval,u,0,102.0\n"
        + "coinrun,0,2,250,8,10,train_eval,u,1,104.0\n"
        + "coinrun,0,3,250,6,0,train_eval,u,0,105.0\n"
        + "coinrun,0,4,500,10,10,train_eval,u,0,1000.0\n"
        + "coinrun,0,5,500,10,10,train_eval,u,1,1000.0\n"
    )
    script = load("procgen_evaluation_speeds")
    out = tmp_path / "evaluation_speeds.csv"
    assert script.main(["--results", str(results), "--out", str(out)]) == 0
    assert script.main(["--results", str(results), "--out", str(out), "--check"]) == 0
    [row] = read_evaluation_csv(out)
    assert (row.agent, row.variant, row.task, row.episode_frames) == ("ppo", None, "coinrun", 6)
    # 18 frames in 10 steps x 0.5 s; the second round (both ends at one step) cannot be timed
    assert row.frames_per_second == pytest.approx(18 / 5, abs=0.5)
    assert "3 test-level episodes in 1 round" in row.measured
    (results / "random-coinrun-seed0.csv").write_text(
        HEAD + "coinrun,0,0,0,5,0,train_eval,u,0,1.0\ncoinrun,0,1,0,5,0,train_eval,u,0,2.0\n"
    )
    assert script.main(["--results", str(results), "--out", str(out), "--check"]) == 1  # a run was added
