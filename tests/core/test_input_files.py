"""The files a user hands benchgen (issue 27 item 9): only regular files are read, up to a size
limit, and YAML within bounds on nesting and aliases; anything else is one line, exit 2, at once
(a FIFO never makes a command wait, ``/dev/zero`` never fills memory)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from benchgen.inputs import MAX_INPUT_BYTES, MAX_YAML_DEPTH
from tests.conftest import refused_in_process

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")


@pytest.fixture(autouse=True)
def _no_hang():
    """A command that waits on a FIFO fails the test after 20 s instead of hanging the suite."""

    def expired(signum, frame):
        raise TimeoutError("the command waited on its input")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def _bomb(levels: int = 7, width: int = 10) -> str:
    """YAML of a few hundred bytes whose last alias expands to width**levels values."""
    lines = [f"l0: &l0 [{', '.join(['x'] * width)}]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * width)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def _fifo(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    os.mkfifo(path)
    return path


def test_a_fifo_given_as_config_file_is_refused_at_once(tmp_path, capsys):
    config = _fifo(tmp_path, "settings.yaml")
    refused_in_process(capsys, "is a FIFO", "run", "toy", "random", "--config", config, "--out", tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_a_fifo_given_as_protocol_file_is_refused_at_once(tmp_path, capsys):
    proto = _fifo(tmp_path, "proto.yaml")
    refused_in_process(capsys, "is a FIFO", "run", "toy", "random", "--protocol", proto, "--out", tmp_path / "run")


def test_a_fifo_given_as_score_csv_is_refused_at_once(tmp_path, capsys):
    refused_in_process(capsys, "is a FIFO", "score", "toy", _fifo(tmp_path, "scores.csv"))


def test_a_split_file_linked_to_a_device_isrefused_in_process(tmp_path, capsys):
    split = tmp_path / "zero.yaml"
    split.symlink_to("/dev/zero")
    refused_in_process(
        capsys, "is a character device", "run", "toy", "random", "--split", split, "--out", tmp_path / "run"
    )


def test_a_file_over_the_size_limit_is_refused_unread(tmp_path, capsys):
    config = tmp_path / "huge.yaml"
    with config.open("wb") as f:
        f.truncate(MAX_INPUT_BYTES + 1)  # sparse: nothing written
    refused_in_process(
        capsys, "larger than 16 MiB", "run", "toy", "random", "--config", config, "--out", tmp_path / "run"
    )


def test_a_yaml_alias_bomb_isrefused_in_process(tmp_path, capsys):
    config = tmp_path / "bomb.yaml"
    config.write_text(_bomb())
    refused_in_process(
        capsys, "through its aliases", "run", "toy", "random", "--config", config, "--out", tmp_path / "run"
    )
    split = tmp_path / "bomb_split.yaml"
    split.write_text(_bomb() + "train: *l6\n")
    refused_in_process(
        capsys, "through its aliases", "run", "toy", "random", "--split", split, "--out", tmp_path / "run"
    )


def test_a_recursive_alias_isrefused_in_process(tmp_path, capsys):
    config = tmp_path / "loop.yaml"
    config.write_text("seed_offset: &a [*a]\n")
    refused_in_process(capsys, "alias inside the collection", "run", "toy", "random", "--config", config)


def test_deeply_nested_yaml_is_refused_not_a_recursion_error(tmp_path, capsys):
    config = tmp_path / "deep.yaml"
    config.write_text("seed_offset: " + "[" * 5000 + "]" * 5000 + "\n")
    refused_in_process(capsys, f"nested more than {MAX_YAML_DEPTH} levels", "run", "toy", "random", "--config", config)
    refused_in_process(
        capsys, "nested more than", "run", "toy", "random", "--set", "seed_offset=" + "[" * 5000 + "]" * 5000
    )


def test_bad_yaml_in_vary_is_one_line(tmp_path, capsys):
    refused_in_process(
        capsys, "does not parse as YAML", "run", "toy", "random", "--vary", "seed_offset=[1,2", "--out", tmp_path
    )


def test_a_binary_reference_csv_is_refused_in_one_line(tmp_path, capsys):
    from tests.compare.helpers import A, make_run

    make_run(tmp_path / "runs" / "a", "agent_a", A)
    binary = tmp_path / "ref.csv"
    binary.write_bytes(bytes(range(256)) * 4)
    refused_in_process(capsys, "is not a text file", "compare", tmp_path / "runs", "--reference", f"mine={binary}")


def test_ordinary_yaml_still_reads(tmp_path):
    from benchgen.inputs import read_yaml

    path = tmp_path / "ok.yaml"
    path.write_text("base: &b {lr: 0.001, sizes: [1, 2]}\nagent: *b\nempty:\n")
    assert read_yaml(path, "config file") == {
        "base": {"lr": 0.001, "sizes": [1, 2]},
        "agent": {"lr": 0.001, "sizes": [1, 2]},
        "empty": None,
    }


@pytest.mark.parametrize(
    ("vary", "fragment"),
    [
        (["--vary", "seed_offset=1,1.0"], "lists a value twice"),  # the same number, twice
        (["--vary", "seed_offset=1,2", "--vary", "seed_offset=3,4"], "--vary given 2 times"),
    ],
)
def test_a_sweep_that_would_run_a_condition_twice_or_drop_one_is_refused(tmp_path, capsys, vary, fragment):
    """Issue 27 item 12: 1 and 1.0 are one condition; a second --vary was silently dropped."""
    refused_in_process(capsys, fragment, "run", "toy", "random", *vary, "--out", tmp_path / "sweep")
    assert not (tmp_path / "sweep").exists()
