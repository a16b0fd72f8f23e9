"""Nothing outside the run (issue 27): no command follows a link or a crafted unit id out of a
run directory to write or delete there, and the files benchgen writes in place (``run.lock``,
``worker.pid``) or renames into place (``sweep.md``) replace a link rather than its target."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from benchgen.results.rundir import RunDir
from tests.conftest import cli_in_process, refused_in_process
from tests.core.conftest import unfinished_copy

UNIT = "train-count-20-s0"


def _snapshot(folder: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(folder)): p.read_bytes() if p.is_file() else None for p in sorted(folder.rglob("*"))}


@pytest.mark.parametrize(
    "linked", [f"units/{UNIT}/checkpoints", f"units/{UNIT}", "units", "tb", f"tb/{UNIT}", "report"]
)
def test_resume_never_writes_or_deletes_through_a_linked_folder(finished_run, tmp_path, capsys, linked):
    """Refused before the resume writes anything, in the run or through the link."""
    run, _ = unfinished_copy(finished_run, tmp_path)
    elsewhere = tmp_path / "elsewhere"
    shutil.move(run / linked, elsewhere)
    (run / linked).symlink_to(elsewhere, target_is_directory=True)
    before, episodes = _snapshot(elsewhere), _episodes(run)
    refused_in_process(capsys, "leads out of the run directory", "resume", run, "--no-progress")
    assert _snapshot(elsewhere) == before and _episodes(run) == episodes


def _episodes(run: Path) -> int:
    with sqlite3.connect(run / "results.sqlite") as conn:
        (count,) = conn.execute("SELECT COUNT(*) FROM episodes").fetchone()
    conn.close()
    return count


def test_a_unit_id_leading_out_of_the_run_isrefused_in_process(finished_run, tmp_path, capsys):
    run, _ = unfinished_copy(finished_run, tmp_path)
    crafted = "../../../escape"
    with sqlite3.connect(run / "results.sqlite") as conn:
        for table in ("units", "episodes", "checkpoints"):
            conn.execute(f"UPDATE {table} SET unit_id = ?", (crafted,))
    conn.close()
    refused_in_process(capsys, "is not a plain name", "resume", run, "--no-progress")
    assert not (run / "units" / crafted).resolve().exists()
    assert not (run / "tb" / crafted).resolve().exists()


@pytest.mark.parametrize("unit_id", ["", ".", "..", "../x", "a/../../b", "/abs", "a//b", "a\0b", "a/."])
def test_unit_ids_that_could_leave_the_units_folder_arerefused_in_process(unit_id):
    from benchgen.errors import UsageError
    from benchgen.results.store import check_unit_id

    for fine in ("train-count-20-s0", "train-ns/Task-v1-s0", "finetune-f100-Sonic:Zone.Act1-s2"):
        assert check_unit_id(fine) == fine  # (a task id with a `/` gives a nested folder, as before)
    with pytest.raises(UsageError, match="is not a plain name"):
        check_unit_id(unit_id)


def test_a_linked_checkpoint_is_unlinked_not_followed(finished_run, tmp_path):
    """A link in a unit's checkpoints folder, where a checkpoint is about to be written, is
    replaced; what it points to is left alone."""
    from benchgen.run.execution.checkpoints import _remove

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("mine")
    link = tmp_path / "000000002000"
    link.symlink_to(elsewhere, target_is_directory=True)
    _remove(link)
    assert not link.exists() and not link.is_symlink() and (elsewhere / "keep.txt").read_text() == "mine"


@pytest.mark.parametrize("linked", ["run.lock", f"units/{UNIT}/worker.pid"])
@pytest.mark.parametrize("victim_in_run", [False, True])
def test_lock_and_pid_files_are_never_written_through_a_link(finished_run, tmp_path, capsys, linked, victim_in_run):
    run, _ = unfinished_copy(finished_run, tmp_path)
    victim = (run if victim_in_run else tmp_path) / "victim.txt"
    victim.write_text("precious")
    (run / linked).unlink(missing_ok=True)
    (run / linked).symlink_to(victim)
    fragment = "is a symbolic link" if victim_in_run else "leads out of the run directory"
    refused_in_process(capsys, fragment, "resume", run, "--no-progress")
    assert victim.read_text() == "precious"


def test_a_linked_worker_pid_of_a_ray_unit_isrefused_in_process(finished_run, tmp_path):
    from benchgen.errors import UsageError

    run, _ = unfinished_copy(finished_run, tmp_path)
    victim = run / "run.json"
    before = victim.read_bytes()
    (run / "units" / UNIT / "worker.pid").symlink_to(victim)
    with pytest.raises(UsageError, match="is a symbolic link"):
        RunDir(run).write_pid_file(UNIT)
    assert victim.read_bytes() == before


def test_sweep_files_replace_a_link_rather_than_its_target(tmp_path, capsys):
    out = tmp_path / "sweep"
    args = ("run", "toy", "random", "--tasks", "count-20", "--frames", "1000", "--vary", "seed_offset=0,1")
    code, err = cli_in_process(capsys, *args, "--out", out, "--no-progress")
    assert code == 0, err
    victims = {}
    for name in ("sweep.md", "sweep_table.json"):
        victims[name] = tmp_path / f"victim-{name}"
        victims[name].write_text("precious")
        (out / name).unlink()
        (out / name).symlink_to(victims[name])
    code, err = cli_in_process(capsys, "resume", out, "--no-progress")
    assert code == 0, err
    for name, victim in victims.items():
        assert victim.read_text() == "precious"
        assert not (out / name).is_symlink() and (out / name).stat().st_size > 0


@pytest.mark.parametrize("name", ["a#b", "a?b", "a%b", "a%20b"])
def test_a_run_whose_folder_name_holds_uri_characters_is_read(finished_run, tmp_path, capsys, name):
    """Issue 27 item 8: the store's read-only ``file:`` URI was not quoted: ``#`` and ``?`` cut the
    path short (opening, and creating, another file beside the run), ``%`` escaped what follows."""
    run = tmp_path / name
    shutil.copytree(finished_run, run)
    store = RunDir(run).store(readonly=True)
    try:
        assert [u.unit_id for u in store.units()] == [UNIT]
    finally:
        store.close()
    code, err = cli_in_process(capsys, "report", run)
    assert code == 0, err
    assert [p.name for p in tmp_path.iterdir()] == [name]  # nothing made beside the run


@pytest.mark.parametrize("crafted", ["../elsewhere", "/tmp/elsewhere", "linked"])
def test_a_sweep_never_resumes_a_run_outside_its_folder(tmp_path, capsys, crafted):
    import json

    out = tmp_path / "sweep"
    args = ("run", "toy", "random", "--tasks", "count-20", "--frames", "1000", "--vary", "seed_offset=0,1")
    code, err = cli_in_process(capsys, *args, "--out", out, "--no-progress")
    assert code == 0, err
    shutil.move(out / "seed_offset=1", tmp_path / "elsewhere")
    (out / "linked").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    sweep = json.loads((out / "sweep.json").read_text())
    sweep["runs"][1] = crafted
    (out / "sweep.json").write_text(json.dumps(sweep))
    before = _snapshot(tmp_path / "elsewhere")
    refused_in_process(capsys, "which is not a folder inside the sweep", "resume", out, "--no-progress")
    assert _snapshot(tmp_path / "elsewhere") == before
