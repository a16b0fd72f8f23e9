"""`benchgen run ... ppo_joint --set workers=N` end to end: data-parallel workers (Ray actors) play
the unit's tasks, the run's process records every worker's episode under the joint unit, the
checkpoints load in the zero-shot units, and a worker killed mid-run is replaced without losing
or doubling a recorded episode: the run ends whole, like a run without the fault."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import run_cli, run_cli_subprocess, start_cli

pytest.importorskip("ray")

PLUGINS = "tests.fixture_plugins.vector_suite"
#: 3 chain tasks over 2 workers: 2 sub-environments each; a round is 2 x 2 x 16 steps x 4 frames
ROUND_FRAMES = 2 * 2 * 16 * 4


def _args(out: Path, budget: int) -> list[str]:
    return [
        "run",
        "chain",
        "ppo_joint",
        "--split",
        "all",
        "--frames",
        str(budget),
        "--set",
        "workers=2",
        "--set",
        "worker_cpus=0.5",
        "--set",
        "policy=MlpPolicy",
        "--set",
        "n_steps=16",
        "--set",
        "batch_size=32",
        "--set",
        "zeroshot_episodes=2",
        "--no-progress",
        "--out",
        str(out),
    ]


def _store(out: Path):
    conn = sqlite3.connect(out / "results.sqlite")
    conn.row_factory = sqlite3.Row
    units = {r["unit_id"]: dict(r) for r in conn.execute("SELECT * FROM units")}
    episodes = [dict(r) for r in conn.execute("SELECT * FROM episodes ORDER BY id")]
    conn.close()
    return units, episodes


def _check_whole(out: Path, budget: int) -> tuple[dict, list]:
    """Every unit done; the joint unit used its budget exactly; every task's episodes are numbered
    0, 1, 2, ... with nothing missing or doubled; the zero-shot units played from its checkpoint."""
    units, episodes = _store(out)
    assert {u["status"] for u in units.values()} == {"done"}
    joint = next(u for u in units.values() if u["phase"] == "joint")
    assert joint["frames_done"] == budget
    mine = [e for e in episodes if e["unit_id"] == joint["unit_id"]]
    assert {e["task"] for e in mine} == {"chain-8", "chain-12", "chain-20"}
    for task in {e["task"] for e in mine}:
        numbers = [e["episode"] for e in mine if e["task"] == task]
        assert numbers == list(range(len(numbers)))
    assert {e["env_index"] for e in mine} == {0, 1, 2, 3}  # 2 workers x 2 sub-environments
    assert max(e["frames_total"] for e in mine) <= budget
    last = out / joint["last_checkpoint"]
    assert (last / "ppo.pt").is_file()
    zeroshot = [u for u in units.values() if u["phase"] == "zeroshot"]
    assert len(zeroshot) == 3 and all(u["init_checkpoint"] == joint["last_checkpoint"] for u in zeroshot)
    return units, mine


def test_a_joint_run_with_two_workers_records_every_workers_episodes(tmp_path, local_ray):
    budget = 6 * ROUND_FRAMES
    # in this process: its unit's workers join the shared Ray instance instead of starting one
    proc = run_cli(*_args(tmp_path / "run", budget), plugins=PLUGINS)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "2 data-parallel workers" in proc.stderr  # the plan says how it trains
    meta = json.loads((tmp_path / "run" / "run.json").read_text())
    assert (meta["agent_config"]["workers"], meta["agent_config"]["worker_cpus"]) == (2, 0.5)
    _check_whole(tmp_path / "run", budget)


def test_more_workers_than_cpus_are_refused_before_anything_is_written(tmp_path):
    args = _args(tmp_path / "run", ROUND_FRAMES)
    args[args.index("worker_cpus=0.5")] = f"worker_cpus={len(os.sched_getaffinity(0))}"
    proc = run_cli_subprocess(*args, plugins=PLUGINS)
    assert proc.returncode == 2 and "need" in proc.stderr and "CPUs" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "run").exists()


def test_a_worker_killed_mid_run_is_replaced_and_the_run_ends_whole(tmp_path, local_ray):
    # rank 1 is killed within a poll (50 ms) of the first round's episodes; a round of these small
    # tasks takes about 0.1 s, so the run is far from its 20th round then. The run is in this
    # process (its workers join the shared Ray instance); a thread watches it and kills the worker
    budget = 20 * ROUND_FRAMES
    out = tmp_path / "run"
    pid_file = out / "units" / "joint-all-s0" / "workers" / "rank1.pid"
    run_ended = threading.Event()
    killed = None

    def kill_rank1_mid_run():
        nonlocal killed
        while not run_ended.is_set():
            try:
                if pid_file.is_file() and (out / "results.sqlite").is_file():
                    _units, episodes = _store(out)
                    if len(episodes) >= 10:  # a few rounds recorded: kill rank 1 mid-run
                        killed = int(pid_file.read_text())
                        os.kill(killed, signal.SIGKILL)
                        return
            except sqlite3.Error:  # the store is being made
                pass
            time.sleep(0.05)

    watcher = threading.Thread(target=kill_rank1_mid_run, daemon=True)
    watcher.start()
    try:
        proc = run_cli(*_args(out, budget), plugins=PLUGINS, timeout=600)
    finally:
        run_ended.set()
        watcher.join()
    stderr = proc.stderr
    assert killed is not None, "the run finished before a worker could be killed; raise the budget"
    assert proc.returncode == 0, stderr[-3000:]
    assert int(pid_file.read_text()) != killed  # rank 1 is a new process
    units, mine = _check_whole(out, budget)
    restarts = _scalar(out / "tb" / "joint-all-s0", "data_parallel/restarts")
    assert max(restarts) == 1.0


#: 4 virtual workers of 1 sub-environment each, all in the run's own process (no Ray): the same
#: 4 env indices and round size as 2 workers of 2
IN_PROCESS = ["--set", "virtual_workers=4", "--set", "envs_per_worker=1"]


@pytest.mark.parametrize("processes", ["two workers", "virtual workers in process"])
def test_sigterm_stops_a_run_with_two_workers_and_resume_ends_it_whole(tmp_path, processes, request):
    """Issue 27 item 6: Ray's own SIGTERM handler (installed when the workers' instance starts)
    aborted the run with exit 134; the run stops like any other instead: a checkpoint, exit 130,
    and a resume that ends the run whole. The same for virtual workers hosted by the run's own
    process, which resume from the round-boundary checkpoint with fresh seeds."""
    budget = 16 * ROUND_FRAMES
    out = tmp_path / "run"
    args = _args(out, budget)
    if processes != "two workers":
        args[args.index("workers=2")] = "workers=0"
        args += IN_PROCESS
    proc = start_cli(*args, plugins=PLUGINS)
    deadline = time.time() + 240
    try:
        while time.time() < deadline and proc.poll() is None:
            try:
                if (out / "results.sqlite").is_file() and _store(out)[1]:  # the workers play: stop now
                    proc.send_signal(signal.SIGTERM)
                    break
            except sqlite3.Error:  # the store is being made
                pass
            time.sleep(0.1)
        _stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr[-3000:]
    assert "benchgen resume" in stderr and "Traceback" not in stderr, stderr[-3000:]
    joint = _store(out)[0]["joint-all-s0"]
    assert joint["status"] == "running" and 0 < joint["frames_done"] < budget
    if processes == "two workers":
        request.getfixturevalue("local_ray")  # the resumed unit's workers join the shared instance
    proc = run_cli("resume", out, "--no-progress", plugins=PLUGINS)  # in this process
    assert proc.returncode == 0, proc.stderr[-3000:]
    _check_whole(out, budget)


def _scalar(directory: Path, tag: str) -> list[float]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(directory))
    acc.Reload()
    return [e.value for e in acc.Scalars(tag)]


def _joint_weights(out: Path) -> dict:
    import torch

    units, _episodes = _store(out)
    joint = next(u for u in units.values() if u["phase"] == "joint")
    assert joint["status"] == "done"
    return torch.load(out / joint["last_checkpoint"] / "ppo.pt", weights_only=True)["policy"]


def test_one_process_and_two_train_the_same_joint_policy(tmp_path, local_ray):
    """Issue 29 item 5: ``virtual_workers`` is the math, ``workers`` the speed. One learned round
    of 4 virtual workers (16 steps each, minibatches of 8, per-minibatch advantage normalization)
    in the run's own process and in 2 Ray processes gives the same weights."""
    import torch

    budget = 4 * 16 * 4  # one round: 4 virtual workers x 1 sub-environment x 16 steps x 4 frames
    weights = {}
    for workers in (0, 2):
        args = _args(tmp_path / f"run{workers}", budget)
        args[args.index("workers=2")] = f"workers={workers}"
        args[args.index("batch_size=32")] = "batch_size=8"
        args += ["--set", "virtual_workers=4"]
        proc = run_cli(*args, plugins=PLUGINS)  # in this process; its workers join the shared Ray
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert "4 virtual workers" in proc.stderr
        weights[workers] = _joint_weights(tmp_path / f"run{workers}")
        _units, episodes = _store(tmp_path / f"run{workers}")
        assert {e["env_index"] for e in episodes if e["phase"] == "joint"} <= {0, 1, 2, 3}
    for key, value in weights[0].items():
        torch.testing.assert_close(value, weights[2][key], rtol=1e-5, atol=1e-6, msg=key)
