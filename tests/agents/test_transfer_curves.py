"""Transfer curves during joint training (Nichol et al. 2018, Figure 4): `--transfer-every`
evaluates intermediate joint checkpoints zero-shot on every train and test task, `--finetune-at`
fine-tunes every test task from chosen ones; the joint unit keeps those checkpoints (a resumed
one too), each transfer unit starts from the first written at or past its point, and the report
tabulates and plots the four curves from the recorded episodes."""

from __future__ import annotations

import csv
import json
import math
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from benchgen.config import RunConfig
from benchgen.errors import UsageError
from benchgen.registry import get_registry
from benchgen.results import figures
from benchgen.results.report import build_report
from benchgen.results.transfer import CURVES, transfer_rows
from benchgen.run.execution.checkpoints import Saver
from benchgen.run.execution.signals import STOP, StopRequested
from benchgen.run.execution.unit import execute_unit
from benchgen.run.planning.plan import create_run, describe_plan, plan_units, resolve
from tests.conftest import assert_usage_error, run_cli

PLUGINS = "tests.fixture_plugins.toy_suite,tests.fixture_plugins.platformer_suite"
TRAIN, TEST = ["count-20", "count-50"], ["count-80"]
BUDGET = 12000
#: one vector step of the runs below: 2 environments x 4 frames
STEP = 2 * 4
AGENT = {"n_steps": 32, "batch_size": 64}


def _run(out: Path, *extra: str, finetune: bool = True):
    return run_cli(
        "run", "toy", "ppo_joint", "--split", "pair", "--frames", str(BUDGET), *(["--finetune"] if finetune else []),
        "--set", "run.finetune_budget=2000", "--set", "n_steps=32", "--set", "batch_size=64",
        "--set", "run.zeroshot_episodes=2", "--num-envs", "2", "--no-progress", "--out", str(out), *extra,
        plugins=PLUGINS,
    )  # fmt: skip


def _config(**changes) -> RunConfig:
    settings = dict(
        suite="toy", agent="ppo_joint", split="pair", budget=BUDGET, finetune=True, finetune_budget=2000,
        zeroshot_episodes=2, num_envs=2, transfer_every=4000, finetune_at=[6000],
    )  # fmt: skip
    return RunConfig(**{**settings, **changes})


def _read(out: Path):
    conn = sqlite3.connect(out / "results.sqlite")
    conn.row_factory = sqlite3.Row
    units = [dict(r) for r in conn.execute("SELECT * FROM units ORDER BY ordinal")]
    episodes = [dict(r) for r in conn.execute("SELECT * FROM episodes ORDER BY id")]
    checkpoints = [dict(r) for r in conn.execute("SELECT * FROM checkpoints ORDER BY unit_id, frames")]
    conn.close()
    for u in units:
        u["tasks"] = json.loads(u["tasks"])
    return units, episodes, checkpoints


def _point(unit: dict) -> int:
    return int(unit["unit_id"].split("-")[1].removeprefix("f"))


def _check_links(out: Path, units: list[dict], checkpoints: list[dict]) -> dict[str, int]:
    """Every transfer unit starts from the joint unit's first checkpoint at or past its point,
    kept on disk; returns unit id -> the frames of its starting checkpoint."""
    (joint,) = [u for u in units if u["phase"] == "joint"]
    written = [c for c in checkpoints if c["unit_id"] == joint["unit_id"]]
    starts = {}
    for u in units:
        if not u["phase"].startswith("transfer"):
            continue
        first = min((c for c in written if c["frames"] >= _point(u)), key=lambda c: c["frames"])
        assert u["init_checkpoint"] == first["path"], u["unit_id"]
        assert _point(u) <= first["frames"] < _point(u) + STEP  # written at the first vector step past it
        saved = json.loads((out / first["path"] / "checkpoint.json").read_text())  # kept on disk
        assert (saved["unit"], saved["frames"]) == (joint["unit_id"], first["frames"])
        starts[u["unit_id"]] = first["frames"]
    return starts


def _expected_rows(units: list[dict], episodes: list[dict]) -> dict[int, dict[str, float]]:
    """The report's table recomputed from the store: per starting checkpoint, the mean over tasks
    of each unit's mean score (zero-shot, fine-tuning average) and of its last 100 (the toy suite's
    per-task rule: fine-tuning final)."""
    scores: dict[str, list[float]] = {}
    for e in episodes:
        scores.setdefault(e["unit_id"], []).append(e["score"])
    rows: dict[int, dict[str, list[float]]] = {}
    for u in units:
        if u["phase"] == "joint":
            continue
        row = rows.setdefault(int(Path(u["init_checkpoint"]).name), {key: [] for key in CURVES})
        values = scores[u["unit_id"]]
        if u["phase"].endswith("zeroshot"):
            row["zeroshot_train" if u["tasks"][0] in TRAIN else "zeroshot_test"].append(np.mean(values))
        else:
            row["finetune_average"].append(np.mean(values))
            row["finetune_final"].append(np.mean(values[-100:]))
    return {f: {k: float(np.mean(v)) if v else math.nan for k, v in row.items()} for f, row in rows.items()}


def test_transfer_units_are_planned_per_point_with_the_final_units_budgets(monkeypatch):
    monkeypatch.setenv("BENCHGEN_PLUGINS", PLUGINS)
    r = resolve(get_registry(), _config(seeds=[0, 3]), AGENT)
    units = plan_units(r)
    by_id = {u.unit_id: u for u in units}
    assert len(by_id) == len(units)  # unique ids
    for seed in (0, 3):
        zeroshot = by_id[f"zeroshot-count-80-s{seed}"]
        finetune = by_id[f"finetune-count-80-s{seed}"]
        for point in (4000, 8000):  # multiples of --transfer-every below the budget
            for task in TRAIN + TEST:
                u = by_id[f"transfer_zeroshot-f{point}-{task}-s{seed}"]
                assert (u.phase, u.tasks, u.seed, u.learn) == ("transfer_zeroshot", [task], seed, False)
                assert u.budget_frames == zeroshot.budget_frames and u.init_checkpoint is None
        u = by_id[f"transfer_finetune-f6000-count-80-s{seed}"]
        assert (u.tasks, u.learn, u.budget_frames) == (["count-80"], True, finetune.budget_frames)
    assert sum(u.phase == "transfer_zeroshot" for u in units) == 2 * 2 * 3
    assert sum(u.phase == "transfer_finetune" for u in units) == 2
    # the final checkpoint's units keep their phases: the fine-tune tables mean what they meant
    assert sum(u.phase == "finetune" for u in units) == 2 and sum(u.phase == "zeroshot" for u in units) == 6
    plan = describe_plan(r, units)
    assert "  transfer_zeroshot   12 units x at most 6,000 frames (3 tasks)" in plan
    assert "  transfer_finetune    2 units x 2,000 frames (1 task; run.finetune_budget)" in plan
    assert (
        "  transfer curves: zero-shot from the joint checkpoints at 4,000, 8,000 frames; "
        "fine-tuning from the joint checkpoints at 6,000 frames (each the first written at or past its point)"
    ) in plan.splitlines()
    # without the settings, the plan is what it was
    plain = plan_units(resolve(get_registry(), _config(transfer_every=None, finetune_at=None), AGENT))
    assert {u.phase for u in plain} == {"joint", "zeroshot", "finetune"}


def test_transfer_units_start_from_the_joint_checkpoints_at_their_points(tmp_path):
    out = tmp_path / "run"
    proc = _run(out, "--transfer-every", "4000", "--finetune-at", "6000")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "transfer curves: zero-shot from the joint checkpoints at 4,000, 8,000 frames" in proc.stderr
    units, episodes, checkpoints = _read(out)
    assert {u["status"] for u in units} == {"done"}
    zeroshot = {(_point(u), u["tasks"][0]) for u in units if u["phase"] == "transfer_zeroshot"}
    assert zeroshot == {(p, t) for p in (4000, 8000) for t in TRAIN + TEST}
    assert [(_point(u), u["tasks"]) for u in units if u["phase"] == "transfer_finetune"] == [(6000, TEST)]
    starts = _check_links(out, units, checkpoints)
    for u in units:
        if u["phase"] == "transfer_finetune":  # a fine-tuning unit records where it started
            saved = json.loads((out / u["last_checkpoint"] / "checkpoint.json").read_text())
            assert saved["init_checkpoint"] == u["init_checkpoint"] and u["frames_done"] >= u["budget_frames"]
        if u["phase"] in ("zeroshot", "finetune"):
            assert Path(u["init_checkpoint"]).name == f"{BUDGET:012d}"  # still the final checkpoint
    assert len(set(starts.values())) == 3  # the checkpoints at 4,000, 6,000 and 8,000

    # the report: one row per starting checkpoint (the final one last), means of the recorded episodes
    report = json.loads((out / "report" / "report.json").read_text())
    expected = _expected_rows(units, episodes)
    assert [row["frames"] for row in report["transfer"]] == sorted(expected) == [*sorted(set(starts.values())), BUDGET]
    for row in report["transfer"]:
        assert row["seed"] == 0 and row["joint_budget_units"] == row["frames"]  # the toy budget unit is frames
        for key in CURVES:
            assert row[key] == pytest.approx(expected[row["frames"]][key], nan_ok=True), (row["frames"], key)
    assert not math.isnan(report["transfer"][-1]["finetune_final"])  # the final point has all four
    assert math.isnan(report["transfer"][0]["finetune_average"])  # 4,000: zero-shot only
    markdown = (out / "report" / "report.md").read_text()
    section = markdown[markdown.index("## Transfer during joint training") :]
    assert "| seed | joint frames | Zero-shot, train | Zero-shot, test |" in section
    assert f"| 0 | {BUDGET:,} |" in section and "![transfer during joint training](transfer.png)" in section
    assert (out / "report" / "transfer.png").stat().st_size > 0
    # curves, not phases mixing checkpoints; the final checkpoint's tables are unchanged
    assert set(report["phases"]) == {"joint", "zeroshot", "finetune"}
    assert report["phases"]["zeroshot"]["episodes"] == sum(e["phase"] == "zeroshot" for e in episodes)

    # the export carries every episode with its phase and unit
    assert run_cli("export", out, plugins=PLUGINS).returncode == 0
    with open(out / "episodes.csv") as handle:
        exported = list(csv.DictReader(handle))
    assert [(r["phase"], r["unit_id"]) for r in exported] == [(e["phase"], e["unit_id"]) for e in episodes]
    assert {r["phase"] for r in exported} >= {"transfer_zeroshot", "transfer_finetune"}


@pytest.mark.parametrize(
    "extra,fragment",
    [
        (["--transfer-every", "12000"], "--transfer-every must lie in (0, 12,000) frames"),
        (["--transfer-every", "0"], "--transfer-every must lie in"),
        (["--finetune-at", "6000,0"], "--finetune-at points must lie in (0, 12,000) frames"),
        (["--finetune-at", "6000,12000"], "--finetune-at points must lie in"),
        (["--set", "run.finetune_at=[-5]"], "--finetune-at points must lie in"),
    ],
)
def test_bad_transfer_settings_are_refused_in_one_line(tmp_path, extra, fragment):
    assert_usage_error(_run(tmp_path / "run", *extra), fragment)
    assert list(tmp_path.iterdir()) == []


def test_finetune_at_needs_finetune_and_a_joint_unit(tmp_path):
    assert_usage_error(
        _run(tmp_path / "run", "--finetune-at", "6000", finetune=False), "--finetune-at needs --finetune"
    )
    proc = run_cli(
        "run", "toy", "ppo", "--tasks", "count-20", "--frames", "1000", "--transfer-every", "500",
        "--out", str(tmp_path / "run"), plugins=PLUGINS,
    )  # fmt: skip
    assert_usage_error(proc, "for joint agents")
    assert list(tmp_path.iterdir()) == []


def test_transfer_settings_are_refused_with_from(tmp_path, monkeypatch):
    """`--from` starts from a checkpoint: there is no joint training to follow (checked in
    process; the CLI's one-line form is the same UsageError, tested above)."""
    monkeypatch.setenv("BENCHGEN_PLUGINS", PLUGINS)
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    (ckpt / "checkpoint.json").write_text("{}")
    for changes in ({"transfer_every": 4000}, {"finetune_at": [6000], "transfer_every": None}):
        with pytest.raises(UsageError, match="drop --from") as info:
            resolve(get_registry(), _config(from_checkpoint=str(ckpt), **changes), AGENT)
        assert "\n" not in str(info.value)
    with pytest.raises(UsageError, match="for joint agents"):
        resolve(get_registry(), RunConfig(suite="toy", agent="ppo", tasks=["count-20"], finetune_at=[5]), {})


def test_a_joint_unit_stopped_between_points_keeps_its_checkpoints_on_resume(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHGEN_PLUGINS", PLUGINS)
    monkeypatch.setattr(STOP, "requested", False)
    registry = get_registry()
    r = resolve(registry, _config(), AGENT)
    out = tmp_path / "run"
    run_dir = create_run(registry, r, out)
    (joint_id,) = [u.unit_id for u in plan_units(r) if u.phase == "joint"]
    save = Saver.__call__

    def save_then_stop(self):  # a SIGTERM once the joint unit played past 6,000 frames
        path = save(self)
        if self.recorder.frames_done >= 6500:
            STOP.requested = True
        return path

    monkeypatch.setattr(Saver, "__call__", save_then_stop)
    with pytest.raises(StopRequested):
        execute_unit(run_dir, r, joint_id)
    monkeypatch.setattr(Saver, "__call__", save)
    STOP.requested = False
    _, stopped_episodes, stopped = _read(out)
    kept = {c["frames"]: c["path"] for c in stopped}
    at_4000 = min(f for f in kept if f >= 4000)
    at_6000 = min(f for f in kept if f >= 6000)
    stop_frames = max(kept)
    assert at_6000 < stop_frames < 8000 and (out / kept[at_4000]).is_dir() and (out / kept[at_6000]).is_dir()

    proc = run_cli("resume", out, "--no-progress", plugins=PLUGINS)
    assert proc.returncode == 0, proc.stderr[-3000:]
    units, episodes, checkpoints = _read(out)
    assert {u["status"] for u in units} == {"done"}
    assert episodes[: len(stopped_episodes)] == stopped_episodes
    joint = [e for e in episodes if e["unit_id"] == joint_id]
    for task in TRAIN:
        numbers = [e["episode"] for e in joint if e["task"] == task]
        assert numbers == list(range(len(numbers)))  # nothing lost or played twice
    starts = _check_links(out, units, checkpoints)  # the checkpoints kept before the stop are still there
    by_point = {_point(u): starts[u["unit_id"]] for u in units if u["unit_id"] in starts}
    assert by_point[4000] == at_4000 and by_point[6000] == at_6000 and by_point[8000] > stop_frames
    report = json.loads((out / "report" / "report.json").read_text())
    assert [row["frames"] for row in report["transfer"]] == [at_4000, at_6000, by_point[8000], BUDGET]


class _SecondScore:
    """A scorer with a second per-task score (like Sonic's), to tell the rules apart."""

    def task_score(self, values):
        return float(np.mean(values))

    def final_score(self, values):
        return float(np.mean(values[-3:]))


def test_rows_score_training_episodes_by_the_suites_rule(tmp_path, monkeypatch):
    """Fine-tuning final is the suite's final per-task score (its second one if it has one, else
    its per-task rule), fine-tuning average the mean of all training episodes; evaluation rounds
    (``<phase>_eval`` episodes) are in neither, and the report leaves their phases out."""
    monkeypatch.setenv("BENCHGEN_PLUGINS", PLUGINS)
    registry = get_registry()
    r = resolve(registry, _config(transfer_every=None, finetune_at=[6000]), AGENT)
    run_dir = create_run(registry, r, tmp_path / "run")
    units = {u.unit_id: u for u in plan_units(r)}
    store = run_dir.store()
    joint = units["joint-pair-s0"]
    at = {point: run_dir.relative(run_dir.checkpoint_dir(joint.unit_id, point)) for point in (6008, BUDGET)}
    training = [float(s) for s in range(120)]  # mean 59.5; last 100: 69.5; last 3: 118
    scores = {"finetune-count-80-s0": training, "transfer_finetune-f6000-count-80-s0": training[:10]}
    scores |= {f"zeroshot-{t}-s0": [float(i), float(i) + 2] for i, t in enumerate(TRAIN + TEST)}
    for uid, values in scores.items():
        unit = units[uid]
        records = [
            dict(task=unit.tasks[0], episode=i, env_index=0, frames_total=8 * (i + 1), length_frames=8, score=v,
                 end_reason="game_over")
            for i, v in enumerate(values)
        ]  # fmt: skip
        if unit.learn:  # an evaluation round: not a training episode
            records.append(dict(records[-1], episode=len(values), score=1e6, phase=unit.phase + "_eval"))
        store.record_episodes(unit, records, 8 * len(values))  # an evaluation round adds no training frames
        store.set_init_checkpoint([uid], at[6008] if "transfer" in uid else at[BUDGET])
        store.update_unit(uid, status="done")
    try:
        rows = transfer_rows(store, TRAIN, TEST, registry.scorer(r.suite))
        second = transfer_rows(store, TRAIN, TEST, _SecondScore())
    finally:
        store.close()
    assert [(row["frames"], row["finetune_average"], row["finetune_final"]) for row in rows] == [
        (6008, 4.5, 4.5),
        (BUDGET, 59.5, 69.5),  # the toy suite's rule: the mean of the last 100
    ]
    assert rows[1]["zeroshot_train"] == pytest.approx(np.mean([1.0, 2.0])) and rows[1]["zeroshot_test"] == 3.0
    assert [row["finetune_final"] for row in second] == [8.0, 118.0]
    report = build_report(run_dir.path)  # phases of transfer evaluation rounds are curves too, not tables
    assert "transfer_finetune_eval" not in report["phases"] and "finetune_eval" in report["phases"]
    assert [row["finetune_final"] for row in report["transfer"]] == [4.5, 69.5]


def test_the_figure_averages_seeds_and_skips_missing_points(tmp_path):
    rows = [
        {"seed": s, "x": x, **{key: (math.nan if key.startswith("finetune") and x == 40 else x + s) for key in CURVES}}
        for s in (0, 1)
        for x in (40, 80, 120)
    ]
    path = figures.plot_transfer(rows, "timesteps", tmp_path / "report" / "transfer.png")
    assert path.is_file() and path.stat().st_size > 0
