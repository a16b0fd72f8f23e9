"""Evaluation phases and episode-count budgets (the DQN 2015, Rainbow 2018 and ALE 2013 protocols)
on a real ALE game, including a ``kill -9`` in the middle of each and a resume."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import time
from pathlib import Path

from tests.conftest import run_cli, start_cli


def _episodes(run_dir: Path) -> list[dict]:
    conn = sqlite3.connect(run_dir / "results.sqlite", timeout=30)
    conn.row_factory = sqlite3.Row
    rows = [dict(r) for r in conn.execute("SELECT * FROM episodes ORDER BY id")]
    conn.close()
    for r in rows:
        r["extras"] = json.loads(r["extras"])
    return rows


def _kill_when(proc, run_dir: Path, ready, timeout: float = 120) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
        try:
            if ready(_episodes(run_dir)):
                break
        except (sqlite3.Error, FileNotFoundError):
            continue
    assert proc.poll() is None, "the run finished before it could be killed; the test needs a longer run"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()


def _start(run_dir: Path, protocol_file: Path, frames: str):
    args = ["run", "atari_saber", "random", "--tasks", "pong", "--frames", frames, "--num-envs", "2"]
    return start_cli(*args, "--protocol", str(protocol_file), "--out", str(run_dir), "--no-progress", quiet=True)


def test_an_evaluation_round_killed_midway_is_continued_by_the_same_agent_with_its_quota_exact(tmp_path):
    quota = 6  # a random Pong game lasts ~3,600 frames: evaluation is most of the test's cost
    protocol = tmp_path / "dqn_short.yaml"  # DQN 2015 with 6-episode rounds every 8,000 frames
    protocol.write_text(f"base: dqn2015\nevaluation_episodes: {quota}\nevaluation_interval_frames: 8000\n")
    out = tmp_path / "run"
    proc = _start(out, protocol, "16000")
    _kill_when(proc, out, lambda eps: sum(e["phase"] == "train_eval" for e in eps) >= 3)
    killed = _episodes(out)
    assert run_cli("resume", out, "--no-progress").returncode == 0
    episodes = _episodes(out)
    assert episodes[: len(killed)] == killed  # nothing recorded was lost or rewritten
    numbers = [e["episode"] for e in episodes]
    assert numbers == list(range(len(episodes)))  # one numbering for the unit, phases together
    rounds = {}
    for e in episodes:
        if e["phase"] == "train_eval":
            rounds.setdefault(e["extras"]["eval_round"], []).append(e)
    assert sorted(rounds) == [1, 2]
    for k, point in ((1, 8000), (2, 16000)):
        # exactly the quota: the episodes recorded before the kill count, the lost ones do not
        assert len(rounds[k]) == quota
        assert {e["frames_total"] for e in rounds[k]} == {point}  # the training counter it began at
        assert all(e["length_frames"] <= 18_000 for e in rounds[k])  # DQN's 5-minute evaluation cap
    training = [e for e in episodes if e["phase"] == "train"]
    assert training and max(e["frames_total"] for e in training) <= 16000  # evaluation frames not counted
    assert run_cli("report", out).returncode == 0
    report = json.loads((out / "report" / "report.json").read_text())
    assert report["phases"]["train_eval"]["episodes"] == 2 * quota
    # the phase's score is its latest round's mean
    expected = sum(e["score"] for e in rounds[2]) / quota
    assert report["phases"]["train_eval"]["final"]["score"]["pong"] == expected
    # DQN 2015 scores the best round's agent, re-evaluated after training in a round's quota more episodes
    means = {k: sum(e["score"] for e in rounds[k]) / quota for k in rounds}
    best_k = max(sorted(means), key=means.get)  # the earliest of equal rounds
    best = [e for e in episodes if e["phase"] == "train_best"]
    assert len(best) == quota and {e["frames_total"] for e in best} == {16000}
    assert {(e["extras"]["best_round"], e["extras"]["best_round_frames"]) for e in best} == {(best_k, 8000 * best_k)}
    assert report["phases"]["train_best"]["final"]["score"]["pong"] == sum(e["score"] for e in best) / quota


def test_an_episode_budget_ends_training_and_survives_kill_minus_9(tmp_path):
    protocol = tmp_path / "ale_short.yaml"  # ALE 2013 (frame skip 5) with 6 training, 4 evaluation episodes
    protocol.write_text("base: ale2013\ntraining_episodes: 6\nevaluation_episodes: 4\n")
    out = tmp_path / "run"
    proc = _start(out, protocol, "10M")
    _kill_when(proc, out, lambda eps: len(eps) >= 2)
    assert run_cli("resume", out, "--no-progress").returncode == 0
    episodes = _episodes(out)
    training = [e for e in episodes if e["phase"] == "train"]
    evaluation = [e for e in episodes if e["phase"] == "train_eval"]
    # the unit stops at the step its 6th training episode ends (2 envs: a 7th may end in that step)
    assert 6 <= len(training) <= 7
    assert len(evaluation) == 4 and {e["extras"]["eval_round"] for e in evaluation} == {1}
    assert all(e["length_frames"] % 5 == 0 for e in episodes)  # frame skip 5
    conn = sqlite3.connect(out / "results.sqlite")
    status, frames_done = conn.execute("SELECT status, frames_done FROM units").fetchone()
    conn.close()
    assert status == "done" and frames_done < 10_000_000  # the episodes, not the frames, ended it
    assert {e["frames_total"] for e in evaluation} == {frames_done}
