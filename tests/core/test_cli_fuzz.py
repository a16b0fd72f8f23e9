"""A table of hostile and careless inputs (issue 18's and more): each ends in exit 2, one line
``benchgen: error: ...``, no traceback, and no file written anywhere under the test's folder
other than the ones the case itself made.

Each case is ``(name, setup, args)``: ``setup(tmp)`` makes the files the case needs and returns
a dict of names to substitute into ``args`` (``{out}`` is always a fresh run directory path).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.conftest import run_cli

RUN = ["run", "toy", "random", "--tasks", "count-20", "--frames", "400", "--no-progress"]


def _nothing(tmp: Path) -> dict:
    return {}


def _binary(tmp: Path) -> dict:
    path = tmp / "binary.yaml"
    path.write_bytes(bytes(range(256)) * 8)
    return {"file": path}


def _unreadable(tmp: Path) -> dict:
    path = tmp / "secret.yaml"
    path.write_text("seed_offset: 1\n")
    path.chmod(0)
    return {"file": path}


def _binary_csv(tmp: Path) -> dict:
    path = tmp / "scores.csv"
    path.write_bytes(b"\xff\xfe\x00\x01" * 100)
    return {"file": path}


def _a_file(tmp: Path) -> dict:
    path = tmp / "plain.txt"
    path.write_text("not a directory")
    return {"file": path}


def _read_only_dir(tmp: Path) -> dict:
    path = tmp / "locked"
    path.mkdir()
    path.chmod(stat.S_IRUSR | stat.S_IXUSR)
    return {"file": path / "run"}


def _scores(tmp: Path, text: str) -> dict:
    path = tmp / "scores.csv"
    path.write_text(text)
    return {"file": path}


CASES = [
    ("binary config", _binary, [*RUN, "--config", "{file}", "--out", "{out}"]),
    ("unreadable config", _unreadable, [*RUN, "--config", "{file}", "--out", "{out}"]),
    ("binary split", _binary, ["run", "toy", "random", "--split", "{file}", "--frames", "400", "--out", "{out}"]),
    (
        "unreadable split",
        _unreadable,
        ["run", "toy", "random", "--split", "{file}", "--frames", "400", "--out", "{out}"],
    ),
    ("binary score csv", _binary_csv, ["score", "toy", "{file}"]),
    ("binary baseline csv", _binary_csv, ["compare", "{out}", "--baseline", "{file}"]),
    ("seeds inf", _nothing, [*RUN, "--seeds", "inf", "--out", "{out}"]),
    ("seeds nan", _nothing, [*RUN, "--seeds", "nan", "--out", "{out}"]),
    ("seeds negative", _nothing, [*RUN, "--seeds", "-1", "--out", "{out}"]),
    ("seeds huge", _nothing, [*RUN, "--seeds", "1e99", "--out", "{out}"]),
    ("seeds fractional", _nothing, [*RUN, "--seeds", "0.7", "--out", "{out}"]),
    ("seeds range backwards", _nothing, [*RUN, "--seeds", "4-0", "--out", "{out}"]),
    ("seeds range huge", _nothing, [*RUN, "--seeds", "0-1e99", "--out", "{out}"]),
    ("seeds range open", _nothing, [*RUN, "--seeds", "3-", "--out", "{out}"]),
    ("frames huge", _nothing, [*RUN[:-3], "--frames", "1e19", "--no-progress", "--out", "{out}"]),
    ("frames inf", _nothing, [*RUN[:-3], "--frames", "inf", "--no-progress", "--out", "{out}"]),
    (
        "tasks twice",
        _nothing,
        ["run", "toy", "random", "--tasks", "count-20,count-20", "--frames", "400", "--out", "{out}"],
    ),
    ("out is a file", _a_file, [*RUN, "--out", "{file}"]),
    ("out under a file", _a_file, [*RUN, "--out", "{file}/run"]),
    ("out read-only", _read_only_dir, [*RUN, "--out", "{file}"]),
    ("out empty", _nothing, [*RUN, "--out", ""]),
    (
        "learning rate inf",
        _nothing,
        ["run", "toy", "ppo", "--tasks", "count-20", "--frames", "400", "--set", "learning_rate=inf", "--out", "{out}"],
    ),
    (
        "device without a GPU",
        _nothing,
        ["run", "toy", "ppo", "--tasks", "count-20", "--frames", "400", "--set", "device=cuda:7", "--out", "{out}"],
    ),
    ("jobs zero", _nothing, [*RUN, "--jobs", "0", "--out", "{out}"]),
    ("num-envs zero", _nothing, [*RUN, "--num-envs", "0", "--out", "{out}"]),
    ("score minus inf", lambda tmp: _scores(tmp, "task,score\ncount-20,-inf\n"), ["score", "toy", "{file}"]),
    ("score overflow", lambda tmp: _scores(tmp, "task,score\ncount-20,1e400\n"), ["score", "toy", "{file}"]),
    ("score nan", lambda tmp: _scores(tmp, "task,score\ncount-20,nan\n"), ["score", "toy", "{file}"]),
    ("resume a file", _a_file, ["resume", "{file}"]),
    ("report nothing", _nothing, ["report", "{out}"]),
]


def _files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*")} if root.exists() else set()


@pytest.mark.parametrize("name, setup, args", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path, name, setup, args):
    if name in ("unreadable config", "unreadable split", "out read-only") and os.geteuid() == 0:
        pytest.skip("root reads and writes whatever the permissions say")
    made = setup(tmp_path)
    before = _files(tmp_path)
    values = {"out": tmp_path / "run", **made}
    proc = run_cli(*[a.format(**values) for a in args], cwd=tmp_path)
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == 2, f"{name}: exit {proc.returncode}\n{proc.stderr[-2000:]}"
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert len(lines) == 1 and lines[0].startswith("benchgen: error: "), proc.stderr[-2000:]
    assert _files(tmp_path) == before, f"{name} wrote {sorted(map(str, _files(tmp_path) - before))}"


def test_an_unknown_setting_names_the_command_that_lists_the_settings(tmp_path):
    proc = run_cli("run", "toy", "ppo", "--tasks", "count-20", "--set", "lr=3", "--out", tmp_path / "run")
    assert proc.returncode == 2 and "benchgen settings ppo --suite toy" in proc.stderr, proc.stderr
    listed = run_cli("settings", "ppo", "--suite", "toy")
    assert listed.returncode == 0, listed.stderr
    assert "learning_rate" in listed.stdout and "seeds" in listed.stdout


def test_seeds_take_ranges_as_well_as_lists(tmp_path):
    """``--seeds 0-4`` (issue 45's command) is seeds 0 to 4, both in; ranges and numbers mix."""
    from benchgen.commands.arguments import int_list

    assert int_list("0-4") == [0, 1, 2, 3, 4] and int_list("0-2, 5,7-7") == [0, 1, 2, 5, 7]
    proc = run_cli(*RUN, "--seeds", "0-2,5", "--plan")
    assert proc.returncode == 0, proc.stderr
    assert "4 units, seeds 0, 1, 2, 5\n" in proc.stdout, proc.stdout
