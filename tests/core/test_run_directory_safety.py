"""A run directory cannot be silently broken (issue 18): writers never replace a run's files,
one process owns a run at a time, ``results.sqlite`` alone holds every committed episode once
a run stops, and a damaged store is refused in one line."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys

import pytest

from benchgen.results.rundir import RunDir
from tests.conftest import assert_usage_error, cli_env, refused_in_process, run_cli, run_cli_subprocess, start_cli
from tests.core.conftest import unfinished_copy


@pytest.mark.parametrize("target", ["results.sqlite", "run.json", "results.sqlite-wal", "units/x.csv"])
def test_export_never_replaces_a_file_of_the_run(finished_run, target):
    before = {p: p.read_bytes() for p in finished_run.rglob("*") if p.is_file() and p.parent.name != "report"}
    proc = run_cli("export", finished_run, "-o", finished_run / target)
    assert_usage_error(proc, "is part of run")
    after = {p: p.read_bytes() for p in finished_run.rglob("*") if p.is_file() and p.parent.name != "report"}
    assert after == before


def test_export_to_a_directory_or_parquet_to_stdout_isrefused_in_process(finished_run, tmp_path):
    assert_usage_error(run_cli("export", finished_run, "-o", tmp_path), "is a directory")
    assert_usage_error(run_cli("export", finished_run, "--format", "parquet", "-o", "-"), "standard output")
    assert not (finished_run.parent / "-").exists() and list(tmp_path.iterdir()) == []


def test_results_sqlite_alone_holds_every_episode_after_a_run(finished_run, tmp_path):
    conn = sqlite3.connect(finished_run / "results.sqlite")
    episodes = conn.execute("SELECT COUNT(*) FROM episodes").fetchone()[0]
    conn.close()
    assert episodes > 0
    alone = tmp_path / "copy.sqlite"
    shutil.copy(finished_run / "results.sqlite", alone)  # without the -wal file
    conn = sqlite3.connect(alone)
    assert conn.execute("SELECT COUNT(*) FROM episodes").fetchone()[0] == episodes
    conn.close()


def test_a_second_process_cannot_resume_a_run_in_use(finished_run):
    with RunDir(finished_run).lock():
        proc = run_cli_subprocess("resume", finished_run, "--no-progress")
    assert_usage_error(proc, "is in use by process", str(os.getpid()))
    assert run_cli("resume", finished_run, "--no-progress").returncode == 0  # released with its holder


def test_an_empty_or_damaged_store_isrefused_in_process(finished_run, tmp_path):
    empty = tmp_path / "empty"
    shutil.copytree(finished_run, empty)
    (empty / "results.sqlite").write_bytes(b"")
    assert_usage_error(run_cli("resume", empty, "--no-progress"), "0 bytes")
    assert (empty / "results.sqlite").stat().st_size == 0  # not silently re-created
    damaged = tmp_path / "damaged"
    shutil.copytree(finished_run, damaged)
    (damaged / "results.sqlite").write_bytes(b"not a database" * 100)
    for command in ("resume", "report", "export"):
        assert_usage_error(
            run_cli(command, damaged, *(["--no-progress"] if command == "resume" else [])),
            "not a readable results store",
        )


def test_report_of_an_unfinished_run_marks_what_it_has_not_reached(tmp_path):
    """Issue 18 item 8: the report of a run stopped early names the reporting points it did not
    reach instead of filling them with the last score, and says its scores are provisional."""
    import json

    out = tmp_path / "run"
    proc = run_cli(
        "run",
        "toy",
        "random",
        "--tasks",
        "count-20",
        "--frames",
        "4000",
        "--set",
        "checkpoint_every=1000",
        "--out",
        out,
        "--no-progress",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    store = RunDir(out).store()
    (unit,) = store.units()
    store.update_unit(unit.unit_id, status="running", frames_done=1500)
    store.close()
    proc = run_cli("report", out)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "unfinished" in proc.stdout
    train = json.loads((out / "report" / "report.json").read_text())["phases"]["train"]
    assert list(train["checkpoints"]) == ["1000"] and train["not_reached"] == [4000] and not train["complete"]
    markdown = (out / "report" / "report.md").read_text()
    assert "Reporting points not reached yet: 4,000 frames" in markdown and "**Unfinished**" in markdown


def test_a_store_locked_by_another_program_is_one_line(finished_run, tmp_path, monkeypatch, capsys):
    """Issue 18 item 14: a database lock held past the timeout ends in one line, not a traceback."""
    import sqlite3 as sqlite

    from benchgen.cli import main
    from benchgen.results import store as store_module

    copy = tmp_path / "run"
    shutil.copytree(finished_run, copy)
    store = RunDir(copy).store()
    (unit,) = store.units()
    store.update_unit(unit.unit_id, status="pending")  # work left, so the resume must write
    store.close()
    monkeypatch.setattr(store_module, "LOCK_TIMEOUT_SECONDS", 0.2)
    holder = sqlite.connect(copy / "results.sqlite")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        code = main(["resume", str(copy), "--no-progress"])
    finally:
        holder.rollback()
        holder.close()
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert code == 2 and len(err) == 1 and "the results store failed (database is locked)" in err[0], err


def test_a_run_directory_removed_mid_run_ends_in_one_line(tmp_path):
    """Issue 18 item 14: the run stops at its next checkpoint with one line, and does not
    recreate a partial directory that looks like a run."""
    import time

    out = tmp_path / "run"
    proc = start_cli(
        "run",
        "toy",
        "random",
        "--tasks",
        "count-20",
        "--frames",
        "40000000",
        "--set",
        "checkpoint_every=20000",
        "--out",
        str(out),
        "--no-progress",
    )
    deadline = time.time() + 60
    while not list(out.glob("units/*/checkpoints/*")) and time.time() < deadline:
        time.sleep(0.1)
    for _ in range(50):  # the run may write a file into a folder rmtree is emptying: try again
        shutil.rmtree(out, ignore_errors=True)
        if not out.exists():
            break
        time.sleep(0.02)
    _stdout, stderr = proc.communicate(timeout=120)
    lines = [ln for ln in stderr.splitlines() if ln.strip() and not ln.startswith(("plan:", " ", "run directory:"))]
    assert proc.returncode == 2 and "Traceback" not in stderr, stderr[-2000:]
    assert len(lines) == 1 and "was removed or moved while the run was going" in lines[0], stderr
    assert not (out / "run.json").exists()


class RemovedWhileSaving:
    """An agent whose checkpoint is being written when ``rm -r`` reaches the unit's folder (the
    run's ``run.json`` not yet gone): the race a user's removal mid-run can meet. ``unit_dir``
    None: it saves and removes nothing."""

    def __init__(self, unit_dir):
        self.unit_dir = unit_dir

    def save(self, directory):
        (directory / "model.pt").write_bytes(b"\0" * 100)
        if self.unit_dir is not None:
            shutil.rmtree(self.unit_dir)


@pytest.mark.parametrize("when", ["while the agent saves", "before the checkpoint is renamed into place"])
def test_a_removal_caught_half_way_is_the_same_one_line(finished_run, tmp_path, monkeypatch, when):
    """A run directory being removed can make a checkpoint's write fail before ``run.json`` is
    gone (CI met it: a ``FileNotFoundError`` traceback from the rename); it is the same event and
    gets the same one line, which says how to continue if the folder is in fact still whole."""
    from benchgen.errors import UsageError
    from benchgen.registry import get_registry
    from benchgen.run.execution import checkpoints
    from benchgen.run.planning.plan import resolve_from_meta
    from tests.core.conftest import FINISHED_UNIT

    run, _kept = unfinished_copy(finished_run, tmp_path)
    run_dir = RunDir(run)
    unit_dir = run / "units" / FINISHED_UNIT
    while_saving = when == "while the agent saves"
    agent = RemovedWhileSaving(unit_dir if while_saving else None)
    if not while_saving:
        remove = checkpoints._remove

        def remove_then_lose_the_unit(path, ignore_errors=False):
            remove(path, ignore_errors)
            if not path.name.endswith(".tmp"):  # the final path is cleared just before the rename
                shutil.rmtree(unit_dir)

        monkeypatch.setattr(checkpoints, "_remove", remove_then_lose_the_unit)
    r = resolve_from_meta(get_registry(), run_dir.record())
    store = run_dir.store()
    try:
        with pytest.raises(UsageError) as refused:
            checkpoints.write_checkpoint(agent, r, store, store.unit(FINISHED_UNIT), run_dir, 1500)
    finally:
        store.close()
    message = str(refused.value)
    assert "was removed or moved while the run was going" in message and "\n" not in message
    assert f"benchgen resume {run}" in message and FINISHED_UNIT in message


def test_two_runs_racing_for_one_out_leave_the_winners_run_whole(finished_run, tmp_path, monkeypatch, capsys):
    """Issue 27 item 13: two ``run --out SAME`` started together both find the folder free; the
    one that renames its run into place second is refused in one line (it was an OSError
    traceback), and the first one's run is left as it was, with nothing of the second beside it."""
    from benchgen.results.store import ResultsStore

    out = tmp_path / "run"
    assemble = ResultsStore.add_units

    def the_other_run_lands_meanwhile(self, units):  # between this run's check and its rename
        assemble(self, units)
        shutil.copytree(finished_run, out)

    monkeypatch.setattr(ResultsStore, "add_units", the_other_run_lands_meanwhile)
    before = {p.relative_to(finished_run): p.read_bytes() for p in finished_run.rglob("*") if p.is_file()}
    run = ("run", "toy", "random", "--tasks", "count-20", "--frames", "2000", "--out", out, "--no-progress")
    refused_in_process(capsys, "was just made by another process running the same --out", *run)
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]  # its half-made run is gone


def _read_only(folder) -> list[str]:
    """A command prefix that runs a command in ``folder``, mounted read-only: an unprivileged
    mount namespace (``unshare``) for root, whom file modes do not stop; the folder without its
    write bits for other users. Skips where neither is possible."""
    if os.geteuid() != 0:
        for path in [folder, *folder.rglob("*")]:
            path.chmod(path.stat().st_mode & ~0o222)
        return ["sh", "-c", 'cd "$0" && exec "$@"', str(folder)]
    mount = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && cd "$0" && exec "$@"'
    prefix = ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", mount, str(folder)]
    try:
        probe = subprocess.run([*prefix, "touch", str(folder / ".probe")], capture_output=True, text=True)
    except FileNotFoundError:
        pytest.skip("no unshare: cannot mount a folder read-only")
    if probe.returncode == 0 or "Read-only file system" not in probe.stderr:
        pytest.skip(f"cannot mount a folder read-only here ({probe.stderr.strip()[:200]})")
    return prefix


def test_resume_in_a_read_only_folder_is_one_line_and_the_run_can_still_be_read(finished_run, tmp_path):
    """Issue 27 item 13: resume (and report, which writes into the run) in a read-only folder is
    refused in one line before anything is written, and the run's results stay readable there (a store in WAL mode cannot be opened
    read-only where its ``-shm`` file cannot be made: it was refused as damaged)."""
    run, _checkpoint = unfinished_copy(finished_run, tmp_path)
    prefix = _read_only(tmp_path)
    before = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    cli = [sys.executable, "-m", "benchgen"]
    proc = subprocess.run(
        [*prefix, *cli, "resume", run, "--no-progress"], capture_output=True, text=True, env=cli_env()
    )
    assert_usage_error(proc, "run.lock", "give a writable run directory")
    proc = subprocess.run([*prefix, *cli, "report", run], capture_output=True, text=True, env=cli_env())
    assert_usage_error(proc, "cannot write", "give a writable place")  # (its cleanup raised over the line)
    for writes_here in (["compare", run], ["new-plugin", "myplug"]):  # their output folder, made in the cwd
        proc = subprocess.run([*prefix, *cli, *writes_here], capture_output=True, text=True, env=cli_env())
        assert_usage_error(proc, "fix the folder")
    proc = subprocess.run([*prefix, *cli, "export", run, "-o", "-"], capture_output=True, text=True, env=cli_env())
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert len(proc.stdout.splitlines()) > 1  # the header and the episodes
    assert {p: p.read_bytes() for p in run.rglob("*") if p.is_file()} == before
