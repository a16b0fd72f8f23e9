"""The planner's measured speeds come from the suites that own them (``Suite.measured_speeds``,
:mod:`benchgen.speeds`), and what it needs of an agent from the agent's declared traits
(``AgentSpec.joint_of``, ``AgentSpec.device``, ``AgentSpec.random_play``), not from names."""

from __future__ import annotations

import dataclasses

import pytest

from benchgen.config import RunConfig
from benchgen.errors import UsageError
from benchgen.registry import get_registry
from benchgen.run.planning.cost import describe_cost, find_speed
from benchgen.run.planning.plan import plan_units, resolve
from benchgen.speeds import Speed, read_evaluation_csv, read_speeds_csv
from tests.conftest import run_cli

HEADER = "agent,variant,frames_per_second,num_envs,device,measured\n"


def test_a_speeds_file_is_read_row_by_row(tmp_path):
    path = tmp_path / "speeds.csv"
    path.write_text(HEADER + 'myagent,,125,8,cpu,"task-a, 27K frames, 2026-11-25"\nmyagent,fast,900,1,cuda,on a GPU\n')
    assert read_speeds_csv(path, "pkg/data/speeds.csv") == [
        Speed("myagent", None, 125.0, 8, "task-a, 27K frames, 2026-11-25", "cpu", "pkg/data/speeds.csv"),
        Speed("myagent", "fast", 900.0, 1, "on a GPU", "cuda", "pkg/data/speeds.csv"),
    ]
    path.write_text("# how it was measured\n" + path.read_text())  # as an evaluation file may begin
    assert [s.agent for s in read_speeds_csv(path)] == ["myagent", "myagent"]


def test_a_row_may_name_the_settings_its_speed_depends_on(tmp_path):
    path = tmp_path / "speeds.csv"
    path.write_text(
        HEADER.replace("\n", ",settings\n")
        + "myagent,,125,8,cpu,x,precision=bfloat16; torch_threads=1\nmyagent,,60,8,cpu,y,\n"
    )
    fast, plain = read_speeds_csv(path)
    assert fast.settings == (("precision", "bfloat16"), ("torch_threads", "1")) and plain.settings == ()


def test_the_plan_takes_the_row_measured_with_the_runs_settings_and_says_when_there_is_none(monkeypatch):
    """A speed that depends on a setting (PPO's precision: bfloat16 products ran several times
    float32's rate on one CPU and half of it on another) is taken for the runs that have it; a run
    without a row of its own is planned from another row, with the setting named in the plan."""
    registry = get_registry()
    run = RunConfig(suite="atari_saber", agent="ppo", tasks=["pong"], budget=40_000, num_envs=8)
    float32, bfloat16 = resolve(registry, run, {}), resolve(registry, run, {"precision": "bfloat16"})
    assert float32.agent_config.precision == "float32"
    measured = Speed("ppo", None, 300.0, 8, "in bfloat16", settings=(("precision", "bfloat16"),))
    suite_class = type(float32.suite)
    monkeypatch.setattr(suite_class, "measured_speeds", lambda self: [measured])
    assert "measured with precision=bfloat16 (this run: float32)" in describe_cost(float32, plan_units(float32))[1]
    assert "measured with" not in describe_cost(bfloat16, plan_units(bfloat16))[1]
    own = dataclasses.replace(measured, frames_per_second=100.0, settings=(("precision", "float32"),))
    for rows in ([measured, own], [own, measured]):  # whatever the table's order
        monkeypatch.setattr(suite_class, "measured_speeds", lambda self, rows=rows: rows)
        assert find_speed(float32)[0].frames_per_second == 100 and find_speed(bfloat16)[0].frames_per_second == 300
    missing = dataclasses.replace(measured, settings=(("no_such_setting", "1"),))
    monkeypatch.setattr(suite_class, "measured_speeds", lambda self: [missing])
    assert "measured with no_such_setting=1 (this run: not a setting)" in describe_cost(float32, plan_units(float32))[1]


def test_a_row_may_name_the_processor_it_was_measured_on(tmp_path):
    path = tmp_path / "speeds.csv"
    path.write_text(HEADER.replace("\n", ",processor\n") + "myagent,,125,8,cpu,x, AMD EPYC \nmyagent,,60,8,cpu,y,\n")
    amd, unnamed = read_speeds_csv(path)
    assert (amd.processor, unnamed.processor) == ("AMD EPYC", "")


def test_the_plan_takes_the_row_measured_on_this_machines_processor_and_says_when_there_is_none(monkeypatch):
    """One agent ran a game 2-3x slower on one 2-core machine than on another (an Intel Xeon host
    against an AMD EPYC): the planner takes the row of this machine's processor, then a row that
    names none, then one of another processor, saying so; the plan names both processors."""
    from benchgen import machine
    from benchgen.run.planning import cost

    registry = get_registry()
    run = RunConfig(suite="atari_saber", agent="rainbow", tasks=["pong"], protocol="atari100k")
    resolved = resolve(registry, run, {"variant": "der"})
    intel = Speed("rainbow", "der", 150.0, 1, "on the Intel host", processor="Intel(R) Xeon(R)")
    amd = dataclasses.replace(intel, frames_per_second=260.0, measured="on the AMD host", processor="AMD EPYC")
    unnamed = dataclasses.replace(intel, frames_per_second=200.0, measured="somewhere", processor="")
    suite_class = type(resolved.suite)

    def on(name: str, rows: list[Speed]) -> tuple[float, str]:
        monkeypatch.setattr(machine, "processor_name", lambda: name)
        monkeypatch.setattr(cost, "processor_name", lambda: name)
        monkeypatch.setattr(suite_class, "measured_speeds", lambda self: rows)
        return find_speed(resolved)[0].frames_per_second, describe_cost(resolved, plan_units(resolved))[1]

    for rows in ([intel, amd, unnamed], [unnamed, amd, intel]):  # whatever the table's order
        assert on("Intel(R) Xeon(R) Processor", rows)[0] == 150
        speed, line = on("AMD EPYC 7R13 Processor", rows)
        assert speed == 260 and ", AMD EPYC (this machine: " in line and ", AMD EPYC 7R13 Processor)" in line
        assert "another processor" not in line
        assert on("ARM Neoverse-V2", rows)[0] == 200
    speed, line = on("ARM Neoverse-V2", [intel, amd])
    assert speed == 150 and "; measured on another processor (Intel(R) Xeon(R))" in line, line
    speed, line = on("", [unnamed])  # a system that names no processor
    assert speed == 200 and "another processor" not in line and line.count("cores)") == 1
    # planning for another machine (the results pages plan each run for the processor it ran on)
    monkeypatch.setenv("BENCHGEN_PLAN_PROCESSOR", "AMD EPYC 7R13 Processor")
    speed, line = on("Intel(R) Xeon(R) Processor", [intel, amd])
    assert speed == 260 and "(planned for AMD EPYC 7R13 Processor: $BENCHGEN_PLAN_PROCESSOR)" in line, line


def test_this_machines_processor_is_read_from_proc_cpuinfo(monkeypatch, tmp_path):
    from benchgen import machine

    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7R13 Processor\n\n")
    monkeypatch.setattr(machine, "CPUINFO", cpuinfo)
    machine.processor_name.cache_clear()
    try:
        assert machine.processor_name() == "AMD EPYC 7R13 Processor"
        assert machine.same_processor("amd epyc") and not machine.same_processor("Intel(R) Xeon(R)")
        assert not machine.same_processor(" ")
        cpuinfo.unlink()  # no /proc: the standard library's answer (often empty on Linux)
        machine.processor_name.cache_clear()
        assert machine.processor_name() == __import__("platform").processor().strip()
    finally:
        machine.processor_name.cache_clear()


def test_a_joint_agent_is_planned_from_the_speed_of_the_agent_it_is_the_joint_version_of():
    registry = get_registry()
    run = RunConfig(suite="atari_saber", agent="ppo_joint", split="ale_train5", budget=40_000)
    resolved = resolve(registry, run, {})
    lines = describe_cost(resolved, plan_units(resolved))
    assert "ppo_joint's units at ppo's single-task speed" in lines[1], lines
    assert "shipped table (benchgen_atari_saber/data/speeds.csv, no calibration)" in lines[1], lines
    # without the declared trait there is nothing to fall back on: no estimate, never a guess
    alone = dataclasses.replace(resolved, spec=dataclasses.replace(resolved.spec, joint_of=""))
    assert find_speed(alone) is None


def test_the_device_is_the_agents_answer():
    """The planner asks ``AgentSpec.device``; an agent that declares none is planned on the CPU."""
    registry = get_registry()
    run = RunConfig(suite="atari_saber", agent="rainbow_iqn", tasks=["breakout"], budget=2_000_000, num_envs=16)
    resolved = resolve(registry, run, {"device": "cpu"})
    on_gpu = dataclasses.replace(resolved, spec=dataclasses.replace(resolved.spec, device=lambda config: "cuda"))
    assert find_speed(on_gpu)[0].frames_per_second == 2628
    no_answer = dataclasses.replace(resolved, spec=dataclasses.replace(resolved.spec, device=None))
    assert find_speed(no_answer)[0].frames_per_second == 36


def test_a_joint_of_needs_a_joint_agent_and_random_play_is_declared():
    spec = get_registry().agent("ppo")
    with pytest.raises(TypeError, match="joint_of"):
        dataclasses.replace(spec, name="x", joint_of="ppo")
    assert get_registry().random_play_agent() == "random"


def test_the_plan_counts_evaluation_from_the_suites_measured_episodes():
    """The Atari 100K plan of one DER game (benchmarks/atari100k_runs.sh) counts its 100 evaluation
    episodes from the shipped row: a trained agent's Breakout episodes run long, the evaluation
    outlasts the training (issue 45)."""
    from benchgen.run.planning.cost import duration, find_evaluation

    proc = run_cli(
        "run", "atari_saber", "rainbow", "--protocol", "atari100k", "--tasks", "breakout", "--seeds", "0",
        "--set", "variant=der", "--plan",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    registry = get_registry()
    run = RunConfig(suite="atari_saber", agent="rainbow", tasks=["breakout"], protocol="atari100k")
    resolved = resolve(registry, run, {"variant": "der"})
    row = find_evaluation(resolved, "breakout")
    assert row is not None and row.variant == "der" and row.table == "benchgen_atari_saber/data/evaluation_speeds.csv"
    evaluation = 100 * row.episode_frames / row.frames_per_second
    training = 400_000 / find_speed(resolved)[0].frames_per_second
    assert f"train {duration(training)} per unit, train_eval {duration(evaluation)} per unit; " in proc.stdout
    assert f"; {duration(training + evaluation)} in total, one unit after another" in proc.stdout
    assert (
        f"breakout {row.episode_frames:,.0f} frames an episode at {row.frames_per_second:,.0f} frames/s" in proc.stdout
    )
    assert "not estimated" not in proc.stdout


def test_a_task_without_a_measured_evaluation_is_not_estimated():
    registry = get_registry()
    # (Space Invaders is not one of Atari 100K's 26 games: the lanes never measure its evaluation)
    run = RunConfig(suite="atari_saber", agent="rainbow", tasks=["space_invaders"], protocol="atari100k")
    resolved = resolve(registry, run, {"variant": "der"})
    lines = describe_cost(resolved, plan_units(resolved))
    assert "train_eval not estimated;" in lines[0] and "(without the evaluation not estimated)" in lines[0], lines
    assert lines[2].startswith(
        "    evaluation not estimated for space_invaders: no measured evaluation of rainbow variant=der"
    )
    # a protocol without evaluation rounds plans as before
    saber = resolve(registry, dataclasses.replace(run, protocol=None), {"variant": "der"})
    assert "eval" not in " ".join(describe_cost(saber, plan_units(saber)))


EVAL_HEADER = "# how it was measured\nagent,variant,task,episode_frames,frames_per_second,measured\n"


@pytest.mark.parametrize(
    "read, text, fragment",
    [
        (read_speeds_csv, "agent,frames_per_second\nmyagent,1\n", "needs the columns"),
        (read_speeds_csv, HEADER + "myagent,,fast,1,cpu,x\n", ":2: malformed speed row"),
        (read_speeds_csv, HEADER + "myagent,,10,1,tpu,x\n", ":2: device must be one of cpu, cuda"),
        (read_speeds_csv, HEADER + "myagent,,0,1,cpu,x\n", ":2: a row needs an agent, frames_per_second > 0"),
        (
            read_speeds_csv,
            HEADER.replace("\n", ",settings\n") + "myagent,,10,1,cpu,x,precision\n",
            ":2: malformed speed row .settings item 'precision' is not NAME=VALUE",
        ),
        # leading lines that say how the table was measured count in the line numbers
        (
            read_speeds_csv,
            "# measured with\n# a script\n" + HEADER + "myagent,,0,1,cpu,x\n",
            ":4: a row needs an agent",
        ),
        (read_evaluation_csv, "agent,task\nmyagent,a\n", "needs the columns"),
        (read_evaluation_csv, EVAL_HEADER + "myagent,,a,long,10,x\n", ":3: malformed evaluation row"),
        (
            read_evaluation_csv,
            EVAL_HEADER + "myagent,,a,100,0,x\n",
            ":3: a row needs an agent, a task, episode_frames > 0",
        ),
    ],
    ids=lambda v: v.__name__ if callable(v) else "",
)
def test_a_malformed_measured_table_is_one_line_naming_it(tmp_path, read, text, fragment):
    """A speeds or evaluation table a plugin ships wrong is one line naming the file and the line."""
    path = tmp_path / "table.csv"
    path.write_text(text)
    with pytest.raises(UsageError, match=fragment) as info:
        read(path)
    assert "\n" not in str(info.value)
