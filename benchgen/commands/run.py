"""``benchgen run``, ``evaluate`` and ``resume``: the command-line face of
:mod:`benchgen.run.lifecycle`, which starts and resumes every run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchgen import hookimpl
from benchgen.commands import arguments


@hookimpl
def benchgen_add_commands(subparsers):
    p = subparsers.add_parser("run", help="train/evaluate AGENT on SUITE by the suite's protocol")
    p.add_argument("suite")
    p.add_argument("agent")
    sel = p.add_mutually_exclusive_group()
    sel.add_argument(
        "--tasks", "--games", "--levels", dest="tasks", type=arguments.csv_list, help="comma-separated task names"
    )
    sel.add_argument("--split", help="split name (see `benchgen list SUITE`) or a YAML split file")
    p.add_argument(
        "--protocol",
        help="a named protocol of the suite (`benchgen protocols SUITE`) or a YAML file: base: NAME, then changes",
    )
    p.add_argument("--seeds", type=arguments.int_list, help="comma-separated seeds or ranges: 0,1,2 or 0-4 (default 0)")
    budget = p.add_mutually_exclusive_group()
    budget.add_argument(
        "--frames", type=arguments.count, help="budget per unit in emulator frames (scales the reporting checkpoints)"
    )
    budget.add_argument("--timesteps", type=arguments.count, help="budget per unit in agent timesteps")
    p.add_argument(
        "--checkpoints",
        type=lambda s: [arguments.count(x) for x in arguments.csv_list(s)],
        help="reporting checkpoints in the budget unit",
    )
    p.add_argument("--num-envs", type=int, help="parallel sub-environments per unit")
    p.add_argument(
        "--task-sampling",
        choices=["fixed", "episode"],
        help="joint units: one task per sub-environment, or a new task every episode (default: the agent's)",
    )
    p.add_argument("--out", type=arguments.out_path, help="run directory (default runs/SUITE-AGENT-TIMESTAMP)")
    p.add_argument("--config", type=Path, help="YAML file of run/agent settings")
    p.add_argument(
        "--set", dest="set_pairs", action="append", default=[], metavar="KEY=VALUE", help="override a setting"
    )
    p.add_argument(
        "--finetune", action="store_true", help="joint agents: fine-tune on every test task after joint training"
    )
    p.add_argument("--from", dest="from_checkpoint", help="joint agents: start from this joint checkpoint directory")
    p.add_argument(
        "--transfer-every",
        type=arguments.count,
        metavar="N",
        help="joint agents: also evaluate zero-shot the joint checkpoints every N budget units (transfer curves)",
    )
    p.add_argument(
        "--finetune-at",
        type=arguments.int_list,
        metavar="P1,P2",
        help="joint agents with --finetune: also fine-tune from the joint checkpoints at these points",
    )
    p.add_argument("--executor", choices=["local", "ray"], help="where units run (default local)")
    p.add_argument("--jobs", type=int, help="local executor: units at once")
    p.add_argument(
        "--address",
        dest="ray_address",
        help="Ray cluster address (auto = the cluster `ray start` runs here; default: a fresh local instance)",
    )
    p.add_argument(
        "--vary",
        metavar="PARAM=V1,V2",
        action="append",
        help="a sweep: one run per value of a protocol parameter or agent setting, in one folder, side by side "
        "(one --vary per run)",
    )
    arguments.progress_flags(p)
    p.add_argument(
        "--plan",
        action="store_true",
        help="print the plan and its estimated wall time, then exit: nothing is built, run or written",
    )
    p.set_defaults(func=cmd_run)

    p = subparsers.add_parser("evaluate", help="re-evaluate a run's trained agents under another protocol")
    p.add_argument("run_dir", type=Path, help="the run whose agents (last checkpoints) are evaluated")
    p.add_argument(
        "--protocol",
        help="a named protocol of the run's suite, or a YAML file (default: the run's own protocol, or the "
        "suite's only one)",
    )
    p.add_argument("--episodes", type=int, help="episodes per task (default: the protocol's evaluation, else 100)")
    p.add_argument("--num-envs", type=int, help="parallel sub-environments per unit")
    p.add_argument(
        "--out",
        type=arguments.out_path,
        help="run directory (default: RUN_DIR-eval-PROTOCOL, RUN_DIR-eval for a suite's only protocol)",
    )
    arguments.progress_flags(p)
    p.set_defaults(func=cmd_evaluate)

    p = subparsers.add_parser("resume", help="continue a killed run from its last checkpoint")
    p.add_argument("run_dir", type=Path)
    arguments.progress_flags(p)
    p.add_argument(
        "--force",
        action="store_true",
        help="continue although the suite's protocol or the software differs from what the run recorded",
    )
    p.add_argument(
        "--set",
        dest="set_pairs",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="change how the agent runs from here on (device, torch_threads, ...: its execution settings), "
        "recorded in run.json",
    )
    p.set_defaults(func=cmd_resume)


def _run_config(args, registry):
    from benchgen.config import RunConfig, build_dataclass, load_config_file, parse_set_pairs, split_overrides

    spec = registry.agent(args.agent)
    suite = registry.suite(args.suite)
    overrides: dict[str, Any] = {}
    if args.config:
        overrides.update(load_config_file(args.config))
    set_pairs = parse_set_pairs(args.set_pairs)
    overrides.update(set_pairs)
    run_over, agent_over = split_overrides(
        overrides, spec.config_class, "--config/--set", listed_by=f"benchgen settings {spec.name} --suite {suite.name}"
    )
    run_over.update(suite=suite.name, agent=spec.name)
    if args.tasks is not None:
        run_over["tasks"] = args.tasks
    if args.split is not None:
        run_over["split"] = args.split
    if args.protocol is not None:
        run_over["protocol"] = args.protocol
    if args.seeds is not None:
        run_over["seeds"] = args.seeds
    if args.frames is not None:
        run_over["budget"] = suite.budget_from_frames(args.frames)
    if args.timesteps is not None:
        run_over["budget"] = suite.from_timesteps(args.timesteps)
    for key in (
        "checkpoints",
        "num_envs",
        "task_sampling",
        "from_checkpoint",
        "transfer_every",
        "finetune_at",
        "executor",
        "jobs",
        "ray_address",
    ):
        value = getattr(args, key)
        if value is not None:
            run_over[key] = value
    if args.finetune:
        run_over["finetune"] = True
    if args.no_progress:
        run_over["progress"] = False
    if args.progress_every is not None:
        run_over["progress_every"] = args.progress_every
    run = build_dataclass(RunConfig, run_over, "run config")
    given = {key.removeprefix("agent.") for key in set_pairs}
    sources = {key: "--set" if key in given else f"--config {args.config}" for key in agent_over}
    return run, agent_over, sources


def cmd_run(args) -> int:
    from benchgen.run import lifecycle

    reg = args.registry
    run, agent_over, sources = _run_config(args, reg)
    if args.vary:
        return lifecycle.sweep(reg, run, agent_over, sources, args.vary, args.out, plan_only=args.plan)
    resolved = lifecycle.plan(reg, run, agent_over, sources=sources)
    if args.plan:  # checked like a run (resolve), but no agent is built and nothing is written
        print(lifecycle.describe(resolved))
        return 0
    return lifecycle.start(reg, resolved, args.out)


def cmd_evaluate(args) -> int:
    from benchgen.run import lifecycle

    return lifecycle.evaluate(
        args.registry,
        args.run_dir,
        args.protocol,
        args.episodes,
        args.num_envs,
        args.out,
        progress=not args.no_progress,
        progress_every=args.progress_every,
    )


def cmd_resume(args) -> int:
    from benchgen.config import parse_set_pairs
    from benchgen.run import lifecycle

    return lifecycle.resume(
        args.registry,
        args.run_dir,
        force=args.force,
        progress=not args.no_progress,
        progress_every=args.progress_every,
        settings=parse_set_pairs(args.set_pairs),
    )
