"""Scoring the best policy found, re-evaluated (``EvaluationSchedule.best_policy``; Machado et al.
2018 section 3, SABER section 2.1): the agent of the best evaluation round, not the last, plays
an independent round after training, recorded under ``<phase>_best``, continued exactly after a
``kill -9``; the final agent's checkpoint and rounds stay as they were."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import time
from pathlib import Path

import numpy as np
import pytest

from benchgen.results.store import ResultsStore, Unit
from benchgen.run.evaluation.rounds import EvaluationRounds
from benchgen.run.execution.recorder import EpisodeRecorder
from benchgen.suite import EvaluationSchedule
from tests.conftest import run_cli, start_cli
from tests.fixture_plugins import best_round
from tests.fixture_plugins.toy_suite import ToyVectorEnv

PLUGINS = "tests.fixture_plugins.toy_suite,tests.fixture_plugins.best_round"


def _episodes(run_dir: Path) -> list[dict]:
    conn = sqlite3.connect(run_dir / "results.sqlite", timeout=30)
    conn.row_factory = sqlite3.Row
    rows = [dict(r) for r in conn.execute("SELECT * FROM episodes ORDER BY id")]
    conn.close()
    for r in rows:
        r["extras"] = json.loads(r["extras"])
    return rows


def _kill_during_reevaluation(proc, run_dir: Path, timeout: float = 180) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
        try:
            if sum(e["phase"] == "train_best" for e in _episodes(run_dir)) >= 4:
                break
        except (sqlite3.Error, FileNotFoundError):
            continue
    assert proc.poll() is None, "the run finished before it could be killed; the test needs a longer round"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()


def test_the_best_rounds_agent_is_re_evaluated_under_its_phase_and_a_kill_midway_resumes_exactly(tmp_path):
    out = tmp_path / "run"
    args = ["run", "toy_best", "fading", "--tasks", "count-20", "--frames", "1200", "--num-envs", "2"]
    proc = start_cli(*args, "--out", str(out), "--no-progress", plugins=PLUGINS, quiet=True)
    _kill_during_reevaluation(proc, out)
    killed = _episodes(out)
    assert 4 <= sum(e["phase"] == "train_best" for e in killed) < best_round.ROUND_EPISODES
    assert run_cli("resume", out, "--no-progress", plugins=PLUGINS).returncode == 0
    episodes = _episodes(out)
    assert episodes[: len(killed)] == killed  # nothing recorded before the kill was lost or rewritten

    rounds: dict[int, list[float]] = {}
    for e in episodes:
        if e["phase"] == "train_eval":
            rounds.setdefault(e["extras"]["eval_round"], []).append(e["score"])
    assert sorted(rounds) == [1, 2, 3]  # at 400, 800 and 1,200 training frames
    means = {k: float(np.mean(v)) for k, v in rounds.items()}
    assert means[1] > 5 * max(means[2], means[3])  # the agent faded after the first round

    best = [e for e in episodes if e["phase"] == "train_best"]
    assert len(best) == best_round.ROUND_EPISODES  # exactly the quota, across the kill
    assert {(e["extras"]["best_round"], e["extras"]["best_round_frames"]) for e in best} == {(1, 400)}
    assert {e["extras"]["eval_round"] for e in best} == {1}
    assert {e["frames_total"] for e in best} == {1200}  # played after training
    assert float(np.mean([e["score"] for e in best])) > 5 * means[3]  # the first round's agent, not the last
    first_round = [e for e in episodes if e["phase"] == "train_eval" and e["extras"]["eval_round"] == 1]
    # independent of the round that chose it: other environment seeds, other episodes
    assert [e["score"] for e in best] != [e["score"] for e in first_round]

    checkpoints = next((out / "units").iterdir()) / "checkpoints"
    steps = {int(p.name): json.loads((p / "fading.json").read_text())["steps"] for p in checkpoints.iterdir()}
    assert steps[400] == 100  # the best round's agent survived the pruning
    assert steps[1200] == 300  # the final checkpoint is the final agent, not the re-evaluated one

    assert run_cli("report", out, plugins=PLUGINS).returncode == 0
    report = json.loads((out / "report" / "report.json").read_text())
    phases = report["phases"]
    assert phases["train_best"]["episodes"] == best_round.ROUND_EPISODES
    assert phases["train_best"]["final"]["score"]["count-20"] == pytest.approx(np.mean([e["score"] for e in best]))
    assert phases["train_eval"]["final"]["score"]["count-20"] == pytest.approx(means[3])  # the final agent's
    summary = report["learning_summaries"]["tasks"]["count-20"]  # Machado et al.'s summaries side by side
    assert summary["best_reevaluated"] == pytest.approx(np.mean([e["score"] for e in best]))
    assert summary["best_round"] == pytest.approx(means[1]) and summary["last_round"] == pytest.approx(means[3])


class OneAction:
    def __init__(self, action: int):
        self.action = action

    def act(self, observations, greedy=True):
        return np.full(len(observations), self.action, dtype=np.int64)


def test_the_best_round_is_the_complete_round_of_highest_mean_and_is_read_back_on_resume(tmp_path):
    store = ResultsStore(tmp_path / "results.sqlite")
    unit = Unit("train-s0", 0, "train", ["count-20"], 0, 1_200)
    store.add_units([unit])
    schedule = EvaluationSchedule(episodes=4, interval_frames=400, best_policy=True)

    def play(frames_done: int, action: int) -> EvaluationRounds:
        recorder = EpisodeRecorder(ToyVectorEnv(["count-20"] * 2, seed=0), store, unit, frames_done=frames_done)
        rounds = EvaluationRounds(schedule, unit, recorder, ["count-20"] * 2, seed=0)
        rounds.play_due(OneAction(action), lambda tasks, seed: ToyVectorEnv(tasks, seed), lambda env: env, lambda: None)
        return rounds

    assert play(0, 2).best_round() is None  # no round is due yet, none is complete
    play(400, 2)  # round 1: the good action
    play(800, 0)  # round 2: three 0s end each episode with almost nothing
    rounds = play(1_200, 2)  # round 3: the good action again
    assert rounds.mean_score(1) > rounds.mean_score(2)
    assert rounds.began == {1: 400, 2: 800, 3: 1_200}
    expected = max((1, 3), key=rounds.mean_score)
    assert rounds.best_round() == expected
    # read back from the store by a resumed unit: the same round, its counter and score
    recorder = EpisodeRecorder(ToyVectorEnv(["count-20"] * 2, seed=0), store, unit, frames_done=1_200)
    again = EvaluationRounds(schedule, unit, recorder, ["count-20"] * 2, seed=0)
    assert again.best_round() == expected and again.began == rounds.began
    assert again.mean_score(expected) == pytest.approx(rounds.mean_score(expected))
    store.close()
