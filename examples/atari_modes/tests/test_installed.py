"""The example as users get it after ``pip install``: discovered through its entry point, it adds
its split and Farebrother et al. 2018's reference tables to the first-party atari_saber suite
(``benchgen list``/``references``), and the split runs end to end through the CLI."""

from __future__ import annotations

import json
import sqlite3
from types import SimpleNamespace

import benchgen_atari_modes
from benchgen_atari_modes import farebrother2018

TRAIN = ["breakout", "freeway", "hero", "space_invaders"]
TEST = [
    "breakout:m12d0",
    "freeway:m1d0",
    "freeway:m1d1",
    "freeway:m4d0",
    "hero:m1d0",
    "hero:m2d0",
    "space_invaders:m1d0",
    "space_invaders:m1d1",
    "space_invaders:m9d0",
]
TABLES = {
    "farebrother2018_dqn_transfer": "Farebrother, Machado & Bowling 2018 (Generalization and Regularization in DQN), Table 1",
    "farebrother2018_dqn_scratch": "Farebrother, Machado & Bowling 2018 (Generalization and Regularization in DQN), "
    "Table 5 (appendix B)",
}


def test_discovered_from_its_entry_point_with_distribution_and_version(benchgen):
    proc = benchgen("plugins")
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("atari_modes ")), None)
    assert line is not None, proc.stdout + proc.stderr
    assert line.split()[:4] == [
        "atari_modes",
        "benchgen-atari-modes",
        benchgen_atari_modes.__version__,
        "benchgen_atari_modes",
    ]
    assert line.rstrip().endswith("ok")


def test_the_split_shows_up_under_atari_saber(benchgen):
    listing = benchgen("list", "atari_saber")
    assert listing.returncode == 0, listing.stderr
    line = next((ln for ln in listing.stdout.splitlines() if ln.split()[:1] == ["farebrother_flavors"]), None)
    assert line is not None, listing.stdout
    assert line.split()[1:5] == ["train", "4", "test", "9"]
    # the atari_saber suite's own splits are still there, and the plugin adds no suite of its own
    assert any(ln.split()[:1] == ["machado_flavors"] for ln in listing.stdout.splitlines())
    unknown = benchgen("list", "atari_modes")
    assert unknown.returncode != 0 and "benchgen: error:" in unknown.stderr and "Traceback" not in unknown.stderr


def test_the_reference_tables_appear_with_their_sources(benchgen):
    proc = benchgen("references", "atari_saber")
    assert proc.returncode == 0, proc.stderr
    names = {ln.split("│")[1].strip() for ln in proc.stdout.splitlines() if ln.count("│") > 2}
    assert set(TABLES) <= names
    for name, source in TABLES.items():
        one = benchgen("references", "atari_saber", name)
        assert one.returncode == 0, one.stderr
        assert f"source: {source}; view: score_5min" in " ".join(one.stdout.split())
    rows = {ln.split("│")[1].strip(): ln for ln in one.stdout.splitlines() if ln.count("│") > 2}
    assert set(TRAIN + TEST) <= set(rows)
    cells = [c.strip() for c in rows["hero:m1d0"].split("│")[2:-1]]
    assert cells == ["326.9", "1,425.2", "5,026.8", "1,755.1"]  # 10M, 50M, 100M, std at 50M


def test_the_two_printed_tables_agree_and_cover_the_split():
    """The paper prints DQN-from-scratch at 50M frames twice: Table 1's 'learn scratch' column and
    Table 5's 50M column. Both transcriptions must give the same numbers (mean and std)."""
    transfer = farebrother2018.read_rows(farebrother2018.TRANSFER_CSV)
    scratch = {r["task"]: r for r in farebrother2018.read_rows(farebrother2018.SCRATCH_CSV)}
    assert [r["task"] for r in transfer] == [t for t in scratch if ":" in t]
    for row in transfer:
        assert float(row["learn_scratch"]) == float(scratch[row["task"]]["frames_50M"]), row["task"]
        assert float(row["learn_scratch_std"]) == float(scratch[row["task"]]["std_50M"]), row["task"]
    tables = {t.name: t for t in farebrother2018.tables()}
    assert set(tables) == set(TABLES)
    assert sorted(tables["farebrother2018_dqn_transfer"].scores) == sorted(TEST)
    assert sorted(tables["farebrother2018_dqn_scratch"].scores) == sorted(TRAIN + TEST)
    assert {t.source for t in tables.values()} == set(TABLES.values())


def test_it_adds_nothing_to_other_suites():
    other = SimpleNamespace(name="sonic")
    assert benchgen_atari_modes.benchgen_splits(suite=other) == []
    assert benchgen_atari_modes.benchgen_reference_scores(suite=other) == []


def test_the_split_runs_end_to_end(benchgen, tmp_path):
    out = tmp_path / "random"
    proc = benchgen(
        "run",
        "atari_saber",
        "random",
        "--split",
        "farebrother_flavors",
        "--frames",
        "1000",
        # one emulator per unit, not the suite's 8: building and resetting them is most of a unit's cost
        "--num-envs",
        "1",
        "--out",
        out,
        "--no-progress",
    )
    assert proc.returncode == 0, proc.stderr
    meta = json.loads((out / "run.json").read_text())
    assert meta["split"]["name"] == "farebrother_flavors"
    assert meta["split"]["train"] == TRAIN and meta["split"]["test"] == TEST
    assert any(p["name"] == "atari_modes" and p["distribution"] == "benchgen-atari-modes" for p in meta["plugins"])
    conn = sqlite3.connect(out / "results.sqlite")
    try:
        units = conn.execute("SELECT tasks, status, frames_done FROM units").fetchall()
    finally:
        conn.close()
    assert sorted(task for tasks, _, _ in units for task in json.loads(tasks)) == sorted(TRAIN + TEST)
    assert all(status == "done" and frames >= 1000 for _, status, frames in units), units
    assert (out / "report" / "report.md").is_file()
