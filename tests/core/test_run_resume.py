"""Runs end to end on the toy suite; resume after a real kill -9 loses and duplicates nothing."""

from __future__ import annotations

import csv
import importlib.metadata
import json
import os
import signal
import sqlite3
import time
from pathlib import Path

from tests.conftest import run_cli, start_cli


def _episodes(run_dir: Path) -> list[dict]:
    conn = sqlite3.connect(run_dir / "results.sqlite")
    conn.row_factory = sqlite3.Row
    rows = [dict(r) for r in conn.execute("SELECT * FROM episodes ORDER BY id")]
    conn.close()
    return rows


def _check_log(rows: list[dict]) -> None:
    by_key: dict[tuple, list[dict]] = {}
    for r in rows:
        by_key.setdefault((r["unit_id"], r["task"]), []).append(r)
    for key, eps in by_key.items():
        numbers = [e["episode"] for e in eps]
        assert numbers == list(range(len(eps))), f"gaps or duplicates in {key}"
        frames = [e["frames_total"] for e in eps]
        assert frames == sorted(frames), f"frame counter went backwards in {key}"


def test_run_records_config_versions_and_exports(tmp_path):
    out = tmp_path / "run"
    proc = run_cli(
        "run",
        "toy",
        "random",
        "--split",
        "pair",
        "--seeds",
        "0,1",
        "--frames",
        "2000",
        "--set",
        "seed_offset=5",
        "--out",
        out,
        "--no-progress",
    )
    assert proc.returncode == 0, proc.stderr
    meta = json.loads((out / "run.json").read_text())
    assert meta["agent_config"] == {"seed_offset": 5}
    assert meta["tasks"] == ["count-20", "count-50", "count-80"]
    assert meta["checkpoints"] == [500, 2000]  # the protocol's 1000/4000 scaled to 2000
    assert any(p["name"] == "tests.fixture_plugins.toy_suite" for p in meta["plugins"])
    assert "gymnasium" in meta["versions"]
    # the suite's own library (Suite.software), beside benchgen's, with its installed version
    assert meta["versions"]["pyyaml"] == importlib.metadata.version("pyyaml")
    rows = _episodes(out)
    _check_log(rows)
    assert {r["seed"] for r in rows} == {0, 1}
    assert (out / "report" / "report.md").is_file() and (out / "report" / "learning_curves.png").is_file()
    assert any(p.name.startswith("events") for p in (out / "tb").rglob("*"))
    assert run_cli("export", out).returncode == 0
    with open(out / "episodes.csv") as handle:
        exported = list(csv.DictReader(handle))
    assert len(exported) == len(rows)
    for col in ("task", "seed", "episode", "frames_total", "length_frames", "score", "score_half", "end_reason"):
        assert col in exported[0]
    assert {r["end_reason"] for r in exported} <= {"game_over", "time_limit"}
    assert run_cli("export", out, "--format", "parquet").returncode == 0
    import pyarrow.parquet as pq

    assert pq.read_table(out / "episodes.parquet").num_rows == len(rows)
    # every unit has checkpoints on disk with the resolved config next to them
    ckpts = list((out / "units").rglob("checkpoint.json"))
    assert ckpts and json.loads(ckpts[0].read_text())["agent_config"] == {"seed_offset": 5}


def test_resume_after_kill_minus_9(tmp_path):
    out = tmp_path / "run"
    budget = 500_000
    proc = start_cli(
        "run",
        "toy",
        "random",
        "--tasks",
        "count-50",
        "--frames",
        str(budget),
        "--out",
        str(out),
        "--no-progress",
        "--num-envs",
        "8",
        "--set",
        "checkpoint_every=50000",
        quiet=True,
    )
    deadline = time.time() + 60
    while time.time() < deadline:
        time.sleep(0.2)
        try:
            if len(_episodes(out)) > 1500:
                break
        except sqlite3.Error:
            continue
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    killed = _episodes(out)
    assert killed, "the killed run recorded episodes"
    conn = sqlite3.connect(out / "results.sqlite")
    status, frames_done = conn.execute("SELECT status, frames_done FROM units").fetchone()
    conn.close()
    assert status == "running" and 0 < frames_done < budget
    assert frames_done == killed[-1]["frames_total"]

    resumed = run_cli("resume", out, "--no-progress")
    assert resumed.returncode == 0, resumed.stderr
    rows = _episodes(out)
    assert rows[: len(killed)] == killed, "episodes recorded before the kill are kept unchanged"
    _check_log(rows)
    assert rows[len(killed)]["frames_total"] > killed[-1]["frames_total"]
    conn = sqlite3.connect(out / "results.sqlite")
    status, frames_done = conn.execute("SELECT status, frames_done FROM units").fetchone()
    conn.close()
    assert status == "done" and frames_done == budget

    # the same run uninterrupted has the same structure
    ref = tmp_path / "ref"
    assert (
        run_cli(
            "run",
            "toy",
            "random",
            "--tasks",
            "count-50",
            "--frames",
            budget,
            "--out",
            ref,
            "--no-progress",
            "--num-envs",
            "8",
        ).returncode
        == 0
    )
    ref_rows = _episodes(ref)
    assert ref_rows[0].keys() == rows[0].keys()
    assert abs(len(ref_rows) - len(rows)) < 0.03 * len(ref_rows)


def test_sigterm_saves_and_resume_completes(tmp_path):
    out = tmp_path / "run"
    proc = start_cli(
        "run",
        "toy",
        "random",
        "--tasks",
        "count-80",
        "--frames",
        "2000000",
        "--num-envs",
        "8",
        "--out",
        str(out),
        "--no-progress",
    )
    deadline = time.time() + 60
    while time.time() < deadline and not (out / "results.sqlite").exists():
        time.sleep(0.1)
    time.sleep(1.5)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "benchgen resume" in err
    conn = sqlite3.connect(out / "results.sqlite")
    frames_done, last_ckpt = conn.execute("SELECT frames_done, last_checkpoint_frames FROM units").fetchone()
    conn.close()
    assert last_ckpt == frames_done, "a stop saves a checkpoint at the exact frame count"
    assert run_cli("resume", out, "--no-progress").returncode == 0
    _check_log(_episodes(out))


def test_checkpoint_retention_keeps_latest_and_reporting_checkpoints(tmp_path):
    out = tmp_path / "run"
    proc = run_cli(
        "run",
        "toy",
        "random",
        "--tasks",
        "count-20",
        "--frames",
        "8000",
        "--checkpoints",
        "2000,6000",
        "--out",
        out,
        "--no-progress",
        "--num-envs",
        "1",
    )
    assert proc.returncode == 0, proc.stderr
    kept = sorted(int(p.name) for p in (out / "units" / "train-count-20-s0" / "checkpoints").iterdir())
    # saved every budget/20 = 400 frames; kept: the two reporting checkpoints and the final one
    assert kept == [2000, 6000, 8000]


def test_resume_set_changes_how_the_agent_runs_and_refuses_what_it_learns(tmp_path):
    """A run resumed on another machine may take another thread count or device (``execution_setting``
    fields), recorded in run.json where the units' processes rebuild the run from; a setting of
    what the agent learns is refused in one line and the run left as it was."""
    from benchgen.registry import get_registry
    from benchgen.results.rundir import RunDir
    from benchgen.run.planning.plan import resolve_from_meta

    out = tmp_path / "run"
    proc = run_cli(
        "run", "gymnasium", "dqn", "--tasks", "CartPole-v1", "--timesteps", "500", "--out", out, "--no-progress"
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    before = (out / "run.json").read_bytes()
    refused = run_cli("resume", out, "--set", "learning_rate=0.1", "--no-progress")
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1
    assert "keeps the learning_rate it started with" in refused.stderr and "torch_threads" in refused.stderr
    assert (out / "run.json").read_bytes() == before
    assert (
        run_cli("resume", out, "--set", "torch_threads=1", "--set", "agent.device=cpu", "--no-progress").returncode == 0
    )
    meta = json.loads((out / "run.json").read_text())
    ((change,),) = [[c["changes"]] for c in meta["settings_changes"]]
    assert change == {"torch_threads": {"recorded": 0, "now": 1}, "device": {"recorded": "auto", "now": "cpu"}}
    assert meta["agent_config_sources"]["torch_threads"] == "resume --set"
    # the report says so: the agent config it shows is the one the run ended with
    report = (out / "report" / "report.md").read_text()
    assert "Resumed with changes" in report and ", resume --set: torch_threads 0 -> 1; device auto -> cpu" in report
    resolved = resolve_from_meta(get_registry(), RunDir(out).record())
    assert (resolved.agent_config.torch_threads, resolved.agent_config.device) == (1, "cpu")
    assert run_cli("resume", out, "--set", "torch_threads=1", "--no-progress").returncode == 0
    assert len(json.loads((out / "run.json").read_text())["settings_changes"]) == 1, "no change, no entry"


def test_a_setting_added_since_a_run_started_is_recorded_when_the_resume_takes_its_default(tmp_path):
    """A run recorded before its agent had a setting resumes with the setting's default; run.json
    and the report say so (from when, and that nothing was recorded before), and a value set on
    that resume is one change, not two."""
    out = tmp_path / "run"
    proc = run_cli(
        "run", "gymnasium", "dqn", "--tasks", "CartPole-v1", "--timesteps", "500", "--out", out, "--no-progress"
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    meta_file = out / "run.json"

    def recorded_without(*names):
        meta = json.loads(meta_file.read_text())
        for name in names:
            del meta["agent_config"][name], meta["agent_config_sources"][name]
        meta_file.write_text(json.dumps(meta))

    recorded_without("flush_denormals", "log_every_updates")
    assert run_cli("resume", out, "--set", "log_every_updates=50", "--no-progress").returncode == 0
    meta = json.loads(meta_file.read_text())
    set_on_resume, added = meta["settings_changes"]
    assert set_on_resume["changes"] == {"log_every_updates": {"recorded": None, "now": 50}}
    assert added["changes"] == {"flush_denormals": {"recorded": None, "now": True}}
    assert meta["agent_config"]["flush_denormals"] is True
    assert meta["agent_config_sources"]["flush_denormals"] == added["source"]
    report = (out / "report" / "report.md").read_text()
    assert "resume --set: log_every_updates (not recorded) -> 50" in report
    assert f"{added['source']}: flush_denormals (not recorded) -> True" in report
    assert run_cli("resume", out, "--no-progress").returncode == 0
    assert len(json.loads(meta_file.read_text())["settings_changes"]) == 2, "recorded now: no new entry"
