"""Transfer curves during joint training (Nichol et al. 2018, Figure 4): `--transfer-every`
evaluates intermediate joint checkpoints zero-shot on every train and test task, `--finetune-at`
fine-tunes every test task from chosen ones; the joint unit keeps those checkpoints, each
transfer unit starts from the one at or past its point, and the report tabulates and plots the
four curves from the recorded episodes."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import assert_usage_error, run_cli

PLUGINS = "tests.fixture_plugins.toy_suite,tests.fixture_plugins.platformer_suite"
TRAIN, TEST = ["count-20", "count-50"], ["count-80"]


def _run(out: Path, *extra: str):
    return run_cli(
        "run", "toy", "ppo_joint", "--split", "pair", "--frames", "12000", "--finetune",
        "--set", "run.finetune_budget=2000", "--set", "n_steps=32", "--set", "batch_size=64",
        "--set", "run.zeroshot_episodes=2", "--num-envs", "2", "--no-progress", "--out", str(out), *extra,
        plugins=PLUGINS,
    )  # fmt: skip


def test_transfer_units_start_from_the_joint_checkpoints_at_their_points(tmp_path):
    out = tmp_path / "run"
    proc = _run(out, "--transfer-every", "4000", "--finetune-at", "6000")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "transfer_zeroshot" in proc.stderr and "transfer_finetune" in proc.stderr  # the plan
    conn = sqlite3.connect(out / "results.sqlite")
    conn.row_factory = sqlite3.Row
    units = [dict(r) for r in conn.execute("SELECT * FROM units ORDER BY ordinal")]
    episodes = [dict(r) for r in conn.execute("SELECT unit_id, score FROM episodes ORDER BY id")]
    conn.close()
    assert {u["status"] for u in units} == {"done"}
    zeroshot = {
        (u["unit_id"].split("-")[1], json.loads(u["tasks"])[0]) for u in units if u["phase"] == "transfer_zeroshot"
    }
    assert zeroshot == {(f"f{p}", t) for p in (4000, 8000) for t in TRAIN + TEST}
    finetune = [u for u in units if u["phase"] == "transfer_finetune"]
    assert [json.loads(u["tasks"]) for u in finetune] == [TEST]
    for u in units:
        if u["phase"].startswith("transfer"):
            point = int(u["unit_id"].split("-")[1][1:])
            start = Path(u["init_checkpoint"])
            assert (out / start).is_dir()  # kept on disk by the joint unit
            assert point <= int(start.name) < point + 2 * 32 * 4  # the first written at or past the point
    # the report: one row per joint checkpoint, means of the recorded episodes
    report = json.loads((out / "report" / "report.json").read_text())
    rows = {row["frames"]: row for row in report["transfer"]}
    by_unit: dict[str, list[float]] = {}
    for e in episodes:
        by_unit.setdefault(e["unit_id"], []).append(e["score"])
    for u in units:
        if u["phase"] in ("transfer_zeroshot", "zeroshot") and json.loads(u["tasks"])[0] in TEST:
            assert rows[int(Path(u["init_checkpoint"]).name)]["zeroshot_test"] == pytest.approx(
                np.mean(by_unit[u["unit_id"]])
            )
        if u["phase"] in ("transfer_finetune", "finetune"):
            row = rows[int(Path(u["init_checkpoint"]).name)]
            assert row["finetune_average"] == pytest.approx(np.mean(by_unit[u["unit_id"]]))
            assert row["finetune_final"] == pytest.approx(np.mean(by_unit[u["unit_id"]][-100:]))
    train_means = [
        np.mean(by_unit[u["unit_id"]]) for u in units if u["phase"] == "zeroshot" and json.loads(u["tasks"])[0] in TRAIN
    ]
    assert rows[12000]["zeroshot_train"] == pytest.approx(np.mean(train_means))  # the final checkpoint's point
    assert len(rows) == 4  # 4000, ~6000, 8000 and the final 12000
    assert (out / "report" / "transfer.png").is_file()
    assert "## Transfer during joint training" in (out / "report" / "report.md").read_text()
    assert "transfer_zeroshot" not in report["phases"]  # curves, not a phase mixing checkpoints


@pytest.mark.parametrize(
    "extra,fragment",
    [
        (["--transfer-every", "12000"], "--transfer-every must lie in"),
        (["--finetune-at", "0"], "--finetune-at points must lie in"),
    ],
)
def test_bad_transfer_settings_are_refused_in_one_line(tmp_path, extra, fragment):
    assert_usage_error(_run(tmp_path / "run", *extra), fragment)
    assert not (tmp_path / "run").exists()


def test_transfer_settings_need_a_joint_agent(tmp_path):
    proc = run_cli(
        "run", "toy", "ppo", "--tasks", "count-20", "--frames", "1000", "--transfer-every", "500",
        "--out", str(tmp_path / "run"), plugins=PLUGINS,
    )  # fmt: skip
    assert_usage_error(proc, "for joint agents")
