"""Fuzzing the stored-data readers (issue 47): a finished run's ``run.json``, ``results.sqlite``
and checkpoint are mutated (seeded, so each case is the same every time), and every command that
reads them (report, export, compare, resume, evaluate) either works or says what is wrong in one
line with a non-zero exit; none writes outside the run or the output it was given."""

from __future__ import annotations

import json
import random
import shutil
import sqlite3

import pytest

from tests.conftest import cli_in_process
from tests.core.conftest import FINISHED_UNIT

#: what a mutation puts in place of a value
JUNK = [None, -1, 0, 1.5, True, "", "x", "../../escape", "a/b", [], {}, [1, "a"], {"k": None}, 10**30, -(10**30)]
CASES = 4  # mutations of each kind


def _paths(tree, prefix=()):
    """Every path to a value in a JSON tree."""
    yield prefix
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(tree, list):
        for k, value in enumerate(tree):
            yield from _paths(value, (*prefix, k))


def _mutate_record(run, rng: random.Random) -> None:
    record = json.loads((run / "run.json").read_text())
    path = rng.choice([p for p in _paths(record) if p])
    target = record
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = rng.choice(JUNK)
    (run / "run.json").write_text(json.dumps(record))


def _mutate_store(run, rng: random.Random) -> None:
    with sqlite3.connect(run / "results.sqlite") as conn:
        table = rng.choice(["units", "episodes", "checkpoints"])
        columns = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
        column = rng.choice(columns)
        value = rng.choice(JUNK)
        value = json.dumps(value) if isinstance(value, (list, dict)) else value
        rowid = rng.choice([r[0] for r in conn.execute(f"SELECT rowid FROM {table}")])
        try:
            conn.execute(f"UPDATE {table} SET {column} = ? WHERE rowid = ?", (value, rowid))
        except sqlite3.IntegrityError:  # (a constraint SQLite keeps itself: nothing to read damaged)
            pass
    conn.close()


def _mutate_checkpoint(run, rng: random.Random) -> None:
    checkpoints = run / "units" / FINISHED_UNIT / "checkpoints"
    files = sorted(f for f in max(checkpoints.iterdir()).iterdir())
    target = rng.choice(files)
    data = target.read_bytes()
    how = rng.choice(["truncate", "bytes", "json"])
    if how == "truncate":
        target.write_bytes(data[: rng.randrange(len(data))])
    elif how == "bytes":
        target.write_bytes(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))))
    else:
        target.write_text(json.dumps(rng.choice(JUNK)))


MUTATIONS = {"run.json": _mutate_record, "results.sqlite": _mutate_store, "checkpoint": _mutate_checkpoint}


def _files(folder):
    return {p.relative_to(folder) for p in folder.rglob("*")}


@pytest.mark.parametrize("command", ["report", "export", "compare", "resume", "evaluate"])
@pytest.mark.parametrize("case", range(CASES))
@pytest.mark.parametrize("kind", sorted(MUTATIONS))
def test_a_mutated_run_is_read_or_refused_in_one_line(finished_run, tmp_path, capsys, kind, case, command):
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    MUTATIONS[kind](run, random.Random(f"{kind}-{case}"))
    out = tmp_path / "out"
    args = {
        "report": ("report", run),
        "export": ("export", run, "--output", out),
        "compare": ("compare", run, "--out", out),
        "resume": ("resume", run, "--no-progress"),
        "evaluate": ("evaluate", run, "--episodes", "1", "--no-progress", "--out", out),
    }[command]
    code, err = cli_in_process(capsys, *args)
    assert code == 0 or (code == 2 and len(err) == 1 and err[0].startswith("benchgen: error: ")), err
    assert {p.parts[0] for p in _files(tmp_path)} <= {"run", "out"}  # nothing written beside them
