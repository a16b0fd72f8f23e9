"""The shipped Atari 100K evaluation table (``data/evaluation_speeds.csv``, which the planner counts
evaluation rounds from) is what ``benchmarks/atari100k_evaluation_speeds.py`` derives from the
committed runs' episodes, and the script measures what its header says."""

from __future__ import annotations

from pathlib import Path

from benchgen.speeds import read_evaluation_csv
from benchgen_atari_saber.suite import AtariSaberSuite
from tests.benchmark_scripts import load

ROOT = Path(__file__).resolve().parents[2]
HEAD = "task,seed,episode,frames_total,length_frames,score,phase,unit_id,env_index,wall_time\n"


def test_the_committed_table_is_what_the_committed_runs_give():
    assert load("atari100k_evaluation_speeds").main(["--check"]) == 0
    assert AtariSaberSuite().measured_evaluation()  # the suite reads it


def test_the_table_is_the_evaluation_episodes_lengths_and_their_frames_over_their_wall_time(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    (results / "der-pong-seed0.csv").write_text(
        HEAD
        + "pong,0,0,1000,1000,1,train,u,0,50.0\n"  # training: not counted
        + "pong,0,1,1000,3000,2,train_eval,u,0,100.0\n"  # the first: its start is not known
        + "pong,0,2,1000,1000,2,train_eval,u,0,102.0\n"
        + "pong,0,3,1000,2000,2,train_eval,u,0,104.0\n"
    )
    script = load("atari100k_evaluation_speeds")
    out = tmp_path / "evaluation_speeds.csv"
    assert script.main(["--results", str(results), "--out", str(out)]) == 0
    assert script.main(["--results", str(results), "--out", str(out), "--check"]) == 0
    [row] = read_evaluation_csv(out)
    assert (row.agent, row.variant, row.task) == ("rainbow", "der", "pong")
    assert (row.episode_frames, row.frames_per_second) == (2000, 750)  # (3000+1000+2000)/3; 3000 frames / 4 s
    (results / "der-pong-seed1.csv").write_text(
        HEAD + "pong,1,0,1000,500,2,train_eval,u,0,1.0\npong,1,1,1000,500,2,train_eval,u,0,2.0\n"
    )
    assert script.main(["--results", str(results), "--out", str(out), "--check"]) == 1  # a run was added
