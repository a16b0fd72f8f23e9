"""``benchgen export --format wandb``: W&B offline runs that read back to the same episodes and
scores as the CSV export, named as CleanRL's runs are, and written nowhere but the folder named."""

from __future__ import annotations

import csv
import json
import struct
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from tests.conftest import REPO, cli_env, run_cli

pytest.importorskip("wandb")
from wandb.proto import wandb_internal_pb2  # noqa: E402

# Read by hand because the wandb library no longer ships a reader of its offline files (they are
# uploaded by its Go service); the file is LevelDB's log format after a 7-byte W&B header: 32 KiB
# blocks of records, each a 7-byte header (CRC, length, kind: 1 whole, 2 first, 3 middle, 4 last
# piece of one protobuf ``Record``).
_BLOCK = 32 * 1024


def _records(path: Path) -> list[wandb_internal_pb2.Record]:
    data = path.read_bytes()
    assert data[:4] == b":W&B"
    records, pieces, pos = [], [], 7
    while pos + 7 <= len(data):
        left = _BLOCK - pos % _BLOCK
        if left < 7:
            pos += left
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos : pos + 7])
        if kind == 0 and length == 0:  # the zero padding at a block's end
            pos += left
            continue
        pieces.append(data[pos + 7 : pos + 7 + length])
        pos += 7 + length
        if kind in (1, 4):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(b"".join(pieces))
            records.append(record)
            pieces = []
    return records


def _read_wandb_run(path: Path) -> tuple[dict, list[dict]]:
    """A run file's config and its logged rows."""
    config, rows = {}, []
    for record in _records(path):
        kind = record.WhichOneof("record_type")
        if kind == "run":
            config.update({u.key: json.loads(u.value_json) for u in record.run.config.update})
        elif kind == "config":
            config.update({u.key: json.loads(u.value_json) for u in record.config.update})
        elif kind == "history":
            rows.append({i.key or "/".join(i.nested_key): json.loads(i.value_json) for i in record.history.item})
    return config, rows


@pytest.fixture(scope="module")
def toy_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wandb") / "run"
    proc = run_cli("run", "toy", "random", "--split", "pair", "--seeds", "0", "--frames", "1000", "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert run_cli("export", out).returncode == 0
    return out


def test_wandb_runs_read_back_to_the_exported_episodes(toy_run, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    target = tmp_path / "export"
    target.mkdir()
    env = {**cli_env(), "HOME": str(home)}  # a new interpreter: the wandb library's service ends with it
    command = [sys.executable, "-m", "benchgen", "export", str(toy_run), "--format", "wandb", "-o", str(target)]
    proc = subprocess.run(command, capture_output=True, text=True, env=env, cwd=REPO, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert list(home.iterdir()) == [], "the wandb library wrote into the user's home folder"
    assert sorted(p.name for p in target.iterdir()) == ["wandb"]

    with open(toy_run / "episodes.csv") as handle:
        exported = list(csv.DictReader(handle))
    expected: dict[tuple, list[float]] = defaultdict(list)
    for row in exported:
        prefix = "charts" if not row["phase"].endswith(("_eval", "_best")) else row["phase"]
        expected[(row["task"], int(row["seed"]), prefix)].append(float(row["score"]))

    found: dict[tuple, list[float]] = defaultdict(list)
    files = sorted(target.glob("wandb/offline-run-*/run-*.wandb"))
    units = {(r["unit_id"]) for r in exported}
    assert len(files) == len(units)
    frames_per_step = json.loads((toy_run / "run.json").read_text())["frames_per_step"]
    for path in files:
        config, rows = _read_wandb_run(path)
        assert config["exp_name"] == "random" and config["benchgen"]["suite"] == "toy"
        for row in rows:
            for key, value in row.items():
                if key.endswith("/episodic_return"):
                    prefix = key.rsplit("/", 1)[0]
                    found[(config["env_id"], config["seed"], prefix)].append(value)
                    assert row["global_step"] == row[f"{prefix}/frames"] // frames_per_step
    assert {k: sorted(v) for k, v in found.items()} == {k: sorted(v) for k, v in expected.items()}


def test_a_second_export_into_the_same_folder_is_refused(toy_run, tmp_path):
    (tmp_path / "wandb").mkdir()
    proc = run_cli("export", toy_run, "--format", "wandb", "-o", tmp_path)
    assert proc.returncode != 0
    assert "already exists" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
