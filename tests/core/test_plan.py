"""Planning a run and owning its directory: budgets, the printed plan, validation before
anything is written, a run directory that is a run only when complete, and runs that resume
after they were moved."""

from __future__ import annotations

import dataclasses
import shutil
import sqlite3

import pytest

from benchgen.config import RunConfig
from benchgen.errors import UsageError
from benchgen.registry import get_registry
from benchgen.results.record import RunRecord
from benchgen.results.rundir import RunDir
from benchgen.results.store import Unit
from benchgen.run.planning.plan import create_run, describe_plan, plan_units, resolve
from tests.conftest import assert_usage_error, run_cli


def test_finetuning_budget_scales_with_the_joint_budget():
    """`--frames 20000 --finetune` on a 200M-frame protocol fine-tunes at the scaled budget
    (RunConfig.finetune_budget's docstring), not at 200M frames per test game."""
    registry = get_registry()
    run = RunConfig(suite="atari_saber", agent="ppo_joint", split="ale_train5", budget=20_000, finetune=True)
    units = plan_units(resolve(registry, run, {}))
    finetune = [u for u in units if u.phase == "finetune"]
    assert finetune and {u.budget_frames for u in finetune} == {20_000}
    given = RunConfig(
        suite="atari_saber", agent="ppo_joint", split="ale_train5", budget=20_000, finetune=True, finetune_budget=8_000
    )
    assert {u.budget_frames for u in plan_units(resolve(registry, given, {})) if u.phase == "finetune"} == {8_000}


def test_a_long_joint_budget_leaves_the_finetuning_budget_at_the_protocols(monkeypatch):
    """The paper's command, `benchgen run sonic ppo_joint --finetune --timesteps 100M`: the joint
    unit trains 100M timesteps, each test level is fine-tuned for the Sonic protocol's 1M
    timesteps (Nichol et al. 2018), not 100M; the plan says where the number comes from."""
    registry = get_registry()
    sonic = registry.suite("sonic")
    monkeypatch.setattr(type(sonic), "check_task_available", lambda self, task: None)  # no ROMs needed to plan
    run = RunConfig(suite="sonic", agent="ppo_joint", budget=100_000_000, finetune=True)
    resolved = resolve(registry, run, {"workers": 2})
    units = plan_units(resolved)
    assert {u.budget_frames for u in units if u.phase == "joint"} == {sonic.to_frames(100_000_000)}
    finetune = [u for u in units if u.phase == "finetune"]
    assert len(finetune) == 11 and {u.budget_frames for u in finetune} == {sonic.to_frames(1_000_000)}
    assert "1,000,000 timesteps (11 tasks; the protocol's budget per test task" in describe_plan(resolved, units)
    # Atari: a joint budget above SABER's 200M frames per game leaves fine-tuning at 200M
    atari = RunConfig(suite="atari_saber", agent="ppo_joint", split="ale_train5", budget=400_000_000, finetune=True)
    assert {u.budget_frames for u in plan_units(resolve(registry, atari, {})) if u.phase == "finetune"} == {200_000_000}


def test_the_plan_names_a_scaled_down_finetuning_budget():
    registry = get_registry()
    run = RunConfig(suite="atari_saber", agent="ppo_joint", split="ale_train5", budget=20_000, finetune=True)
    resolved = resolve(registry, run, {})
    assert "scaled down like the joint budget" in describe_plan(resolved, plan_units(resolved))


def test_the_plan_is_printed_before_the_run_starts(tmp_path):
    proc = run_cli(
        "run",
        "toy",
        "ppo_joint",
        "--split",
        "pair",
        "--frames",
        "4000",
        "--finetune",
        "--set",
        "run.finetune_budget=1000",
        "--set",
        "n_steps=32",
        "--set",
        "batch_size=32",
        "--set",
        "run.zeroshot_episodes=1",
        "--out",
        tmp_path / "run",
        "--no-progress",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    plan = proc.stderr[: proc.stderr.index("run directory:")]
    assert "plan: ppo_joint on toy, 5 units" in plan
    assert "joint" in plan and "4,000 frames" in plan
    assert "finetune" in plan and "1,000 frames" in plan


def test_plan_flag_prints_the_plan_and_its_cost_and_writes_nothing(tmp_path):
    """`benchgen run ... --plan`: the plan on stdout, exit 0, no run directory (not even the
    default one under runs/), nothing written."""
    proc = run_cli("run", "toy", "random", "--tasks", "count-20", "--frames", "4000", "--plan", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "plan: random on toy, 1 unit" in proc.stdout and "total at most 4,000 frames" in proc.stdout
    assert "wall time: not estimated, no measured speed for random on toy" in proc.stdout
    assert list(tmp_path.iterdir()) == []
    out = tmp_path / "run"
    proc = run_cli("run", "toy", "random", "--tasks", "count-20", "--vary", "seed_offset=0,1", "--plan", "--out", out)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.count("plan: random on toy") == 2 and "condition seed_offset=1" in proc.stdout
    assert not out.exists()
    proc = run_cli("run", "toy", "random", "--tasks", "count-20", "--frames", "0", "--plan", "--out", out)
    assert_usage_error(proc, "budget must be a positive")  # checked like a run


def test_the_plan_states_the_wall_time_from_the_measured_speeds(monkeypatch):
    from benchgen.run.planning import cost
    from benchgen.speeds import Speed

    registry = get_registry()
    monkeypatch.setattr(cost, "speeds", lambda r: [Speed("random", None, 10.0, 1, "a test's number, 2026-11")])
    run = RunConfig(suite="toy", agent="random", tasks=["count-20", "count-50"], budget=72_000)
    resolved = resolve(registry, run, {})
    plan = describe_plan(resolved, plan_units(resolved))
    assert "wall time (estimated): train 2.0 h per unit; 4.0 h in total, one unit after another" in plan
    # on a machine of several cores the plan names the shorter way; with --jobs it takes it
    monkeypatch.setattr(cost, "cpu_count", lambda: 2)
    assert "one unit after another; --jobs 2 runs 2 at once: about 2.0 h if each unit keeps to one core" in (
        describe_plan(resolved, plan_units(resolved))
    )
    both = resolve(registry, dataclasses.replace(run, jobs=2), {})
    assert "2 at once (--jobs) take about 1/2 of it" in describe_plan(both, plan_units(both))
    monkeypatch.setattr(cost, "cpu_count", lambda: 1)
    assert "--jobs" not in describe_plan(resolved, plan_units(resolved))
    assert "from 10 frames/s, random on toy: a test's number, 2026-11" in plan and "warning" not in plan
    day = resolve(registry, RunConfig(suite="toy", agent="random", tasks=["count-20"], budget=900_000), {})
    assert "warning: about 25.0 h of wall time, more than a day" in describe_plan(day, plan_units(day))


def test_saber_rainbow_iqn_plans_warn_of_their_cost():
    """The issue's example: 61 games x 200M frames of Rainbow-IQN is years on this machine."""
    registry = get_registry()
    resolved = resolve(registry, RunConfig(suite="atari_saber", agent="rainbow_iqn"), {})
    plan = describe_plan(resolved, plan_units(resolved))
    assert "wall time (estimated): train " in plan and "warning: about" in plan, plan


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--frames", "1e19"], "more than"),
        (["--seeds", "-1"], "seeds must lie in"),
        (["--seeds", "1e99"], "seeds must lie in"),
        (["--jobs", "0"], "--jobs must be at least 1"),
    ],
)
def test_numbers_are_validated_before_anything_is_written(tmp_path, args, fragment):
    out = tmp_path / "run"
    proc = run_cli("run", "toy", "random", "--tasks", "count-20", *args, "--out", out, "--no-progress")
    assert_usage_error(proc, fragment)
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_a_run_directory_appears_only_complete(tmp_path, monkeypatch):
    """Made under a temporary name and renamed: a failure while writing leaves nothing behind."""
    registry = get_registry()
    resolved = resolve(registry, RunConfig(suite="toy", agent="random", tasks=["count-20"], budget=400), {})
    from benchgen.results import store as store_module

    def broken_add_units(self, units):
        raise OSError("disk full")

    monkeypatch.setattr(store_module.ResultsStore, "add_units", broken_add_units)
    with pytest.raises(UsageError, match=r"cannot create the run directory .* \(disk full\)"):
        create_run(registry, resolved, tmp_path / "run")  # one line for the user, nothing half-made
    assert list(tmp_path.iterdir()) == []
    monkeypatch.undo()
    run_dir = create_run(registry, resolved, tmp_path / "run")
    assert run_dir.is_run() and sorted(p.name for p in tmp_path.iterdir()) == ["run"]
    with pytest.raises(UsageError, match="already holds a run"):
        create_run(registry, resolved, tmp_path / "run")


def test_checkpoint_paths_are_kept_relative_to_the_run():
    run_dir = RunDir("/data/runs/a")
    inside = run_dir.checkpoint_dir("train-x-s0", 1000)
    assert run_dir.relative(inside) == "units/train-x-s0/checkpoints/000000001000"
    assert run_dir.absolute("units/train-x-s0/checkpoints/000000001000") == inside
    assert run_dir.absolute("/elsewhere/ckpt") == RunDir("/").path / "elsewhere" / "ckpt"  # --from stays absolute


def _rewind_to_first_checkpoint(run: RunDir) -> None:
    """Make a finished unit look killed right after its first reporting checkpoint."""
    store = run.store()
    try:
        (unit,) = store.units()
        first = store.checkpoints(unit.unit_id)[0]
        store.update_unit(
            unit.unit_id,
            status="running",
            frames_done=first["frames"],
            last_checkpoint=first["path"],
            last_checkpoint_frames=first["frames"],
        )
    finally:
        store.close()


def test_a_moved_run_resumes_from_its_checkpoint_and_a_missing_one_stops_it(tmp_path):
    first = tmp_path / "first"
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
        first,
        "--no-progress",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    _rewind_to_first_checkpoint(RunDir(first))
    moved = tmp_path / "elsewhere" / "moved"
    moved.parent.mkdir()
    shutil.copytree(first, tmp_path / "broken")
    first.rename(moved)
    proc = run_cli("resume", moved, "--no-progress", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    conn = sqlite3.connect(moved / "results.sqlite")
    assert conn.execute("SELECT status, frames_done FROM units").fetchone() == ("done", 4000)
    conn.close()

    broken = tmp_path / "broken"
    store = RunDir(broken).store()
    (unit,) = store.units()
    store.close()
    shutil.rmtree(RunDir(broken).absolute(unit.last_checkpoint))
    proc = run_cli("resume", broken, "--no-progress")
    assert_usage_error(proc, "last checkpoint", "missing")


def test_units_round_trip_through_the_store(tmp_path):
    record = RunRecord("toy", "random", {"seeds": [0]}, {}, ["a"], None, 400, "frames", 4, [400])
    run = RunDir.create(tmp_path / "run", record, [Unit("train-a-s0", 0, "train", ["a"], 0, 400)])
    store = run.store(readonly=True)
    try:
        assert [u.unit_id for u in store.units()] == ["train-a-s0"]
    finally:
        store.close()
    assert run.record() == record


def test_a_run_whose_agent_uses_a_gpu_is_planned_from_the_speed_measured_on_one(monkeypatch):
    """The Atari suite's speeds hold Rainbow-IQN measured on the CPU and on a GPU: device=auto takes
    the GPU's row where torch sees a CUDA device (faked here: CI has none), the CPU's elsewhere."""
    import torch

    registry = get_registry()
    run = RunConfig(suite="atari_saber", agent="rainbow_iqn", tasks=["breakout"], budget=2_000_000, num_envs=16)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    on_cpu = resolve(registry, run, {})
    plan = describe_plan(on_cpu, plan_units(on_cpu))
    assert "from 36 frames/s" in plan and "measured on 2 CPU cores, no GPU" in plan, plan
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    on_gpu = resolve(registry, run, {})
    plan = describe_plan(on_gpu, plan_units(on_gpu))
    assert "train 13 min per unit" in plan and "from 2,628 frames/s" in plan, plan
    assert "measured on one NVIDIA H100 GPU with 16 CPU cores" in plan and "sub-environment" not in plan, plan
    # a setting that keeps the agent on the CPU keeps the CPU's row, saying nothing of the GPU
    on_cpu_setting = resolve(registry, run, {"device": "cpu"})
    assert "from 36 frames/s" in describe_plan(on_cpu_setting, plan_units(on_cpu_setting))
