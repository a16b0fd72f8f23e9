"""The ``benchgen`` command line.

Every bad input ends in one line ``benchgen: error: ...`` that says what to do, exit code 2, no
traceback, and nothing written to any results store.
"""

from __future__ import annotations

import argparse
import dataclasses
import errno
import json
import math
import os
import sqlite3
import sys
import threading
from pathlib import Path
from typing import Any

from benchgen import __version__, phases
from benchgen.errors import UsageError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line instead of usage + message
        raise UsageError(f"{message} (see `{self.prog} --help`)")


def _csv_list(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of seconds (0 or more), got '{text}'")
    return value


def _progress_flags(p) -> None:
    p.add_argument("--no-progress", action="store_true", help="no progress bar or lines")
    p.add_argument(
        "--progress-every",
        type=_seconds,
        metavar="SECONDS",
        help="without a terminal: seconds between plain progress lines (default 30)",
    )


def _int_list(text: str) -> list[int]:
    """Seeds: ``0,1,2`` (``1e3`` too), never rounded: ``0.7`` or ``inf`` is not a seed."""
    values = []
    for t in _csv_list(text):
        try:
            value = float(t.replace("_", ""))
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or not value.is_integer():
            raise argparse.ArgumentTypeError(f"expected comma-separated whole numbers, got '{t}'")
        values.append(int(value))
    return values


def _out_path(text: str) -> Path:
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path; give a directory name")
    return Path(text)


def _count(text: str) -> int:
    """Budgets: 200M, 10k, 1e6, 1_000_000."""
    t = text.strip().lower().replace("_", "")
    mult = {"k": 1_000, "m": 1_000_000, "g": 1_000_000_000, "b": 1_000_000_000}.get(t[-1:], 1)
    if mult != 1:
        t = t[:-1]
    try:
        value = float(t) * mult
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number (examples: 500000, 10M, 2.5e6)")
    if not math.isfinite(value) or not value.is_integer():
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number")
    return int(value)


def build_parser(registry=None) -> argparse.ArgumentParser:
    parser = _Parser(prog="benchgen", description="Benchmark RL agents on emulated games, by the papers' protocols.")
    parser.add_argument("--version", action="version", version=f"benchgen {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser("list", help="suites and agents; with SUITE: its tasks, splits and protocol")
    p.add_argument("suite", nargs="?")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("settings", help="every setting of a run and of AGENT (for --set and --config), with defaults")
    p.add_argument("agent")
    p.add_argument("--suite", help="show AGENT's defaults on this suite (its per-suite defaults applied)")
    p.set_defaults(func=cmd_settings)

    p = sub.add_parser("protocols", help="a suite's named protocols side by side, or one with its sources")
    p.add_argument("suite")
    p.add_argument("names", nargs="*", help="presets to show (default all); one name: its values and sources")
    p.set_defaults(func=cmd_protocols)

    p = sub.add_parser("plugins", help="installed plugins, their distributions and versions")
    p.set_defaults(func=cmd_plugins)

    p = sub.add_parser("run", help="train/evaluate AGENT on SUITE by the suite's protocol")
    p.add_argument("suite")
    p.add_argument("agent")
    sel = p.add_mutually_exclusive_group()
    sel.add_argument("--tasks", "--games", "--levels", dest="tasks", type=_csv_list, help="comma-separated task names")
    sel.add_argument("--split", help="split name (see `benchgen list SUITE`) or a YAML split file")
    p.add_argument(
        "--protocol",
        help="a named protocol of the suite (`benchgen protocols SUITE`) or a YAML file: base: NAME, then changes",
    )
    p.add_argument("--seeds", type=_int_list, help="comma-separated seeds (default 0)")
    budget = p.add_mutually_exclusive_group()
    budget.add_argument(
        "--frames", type=_count, help="budget per unit in emulator frames (scales the reporting checkpoints)"
    )
    budget.add_argument("--timesteps", type=_count, help="budget per unit in agent timesteps")
    p.add_argument(
        "--checkpoints",
        type=lambda s: [_count(x) for x in _csv_list(s)],
        help="reporting checkpoints in the budget unit",
    )
    p.add_argument("--num-envs", type=int, help="parallel sub-environments per unit")
    p.add_argument(
        "--task-sampling",
        choices=["fixed", "episode"],
        help="joint units: one task per sub-environment, or a new task every episode (default: the agent's)",
    )
    p.add_argument("--out", type=_out_path, help="run directory (default runs/SUITE-AGENT-TIMESTAMP)")
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
        type=_count,
        metavar="N",
        help="joint agents: also evaluate zero-shot the joint checkpoints every N budget units (transfer curves)",
    )
    p.add_argument(
        "--finetune-at",
        type=_int_list,
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
    _progress_flags(p)
    p.add_argument(
        "--plan",
        action="store_true",
        help="print the plan and its estimated wall time, then exit: nothing is built, run or written",
    )
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("evaluate", help="re-evaluate a run's trained agents under another protocol")
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
        type=_out_path,
        help="run directory (default: RUN_DIR-eval-PROTOCOL, RUN_DIR-eval for a suite's only protocol)",
    )
    _progress_flags(p)
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("resume", help="continue a killed run from its last checkpoint")
    p.add_argument("run_dir", type=Path)
    _progress_flags(p)
    p.add_argument(
        "--force",
        action="store_true",
        help="continue although the suite's protocol or the software differs from what the run recorded",
    )
    p.set_defaults(func=cmd_resume)

    p = sub.add_parser("video", help="MP4s of a run's agent playing a task (greedy, full-resolution screen)")
    p.add_argument("run_dir", type=Path)
    p.add_argument("--task", required=True, help="a task the run played")
    p.add_argument(
        "--checkpoint", type=_count, help="frames: the first kept checkpoint at or past it (default: the last)"
    )
    p.add_argument("--episodes", type=int, default=1, help="episodes to film (default 1)")
    p.set_defaults(func=cmd_video)

    p = sub.add_parser("score", help="normalize and aggregate a task,score CSV of raw scores")
    p.add_argument("suite")
    p.add_argument("csv", type=Path)
    p.add_argument(
        "--baseline",
        help="the suite's default, raw, any reference table `benchgen compare` knows (NAME or NAME@CHECKPOINT; "
        "`benchgen references SUITE` lists them), or a CSV file",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_score)

    p = sub.add_parser("export", help="one row per recorded episode")
    p.add_argument("run_dir", type=Path)
    p.add_argument("--format", choices=["csv", "parquet"], default="csv")
    p.add_argument(
        "--output", "-o", type=Path, help="file to write (default RUN_DIR/episodes.FORMAT; '-' = stdout for csv)"
    )
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("report", help="markdown + JSON + plots of a run")
    p.add_argument("run_dir", type=Path)
    p.add_argument("--baseline", help="normalization baseline (default: the suite's)")
    p.add_argument("--force", action="store_true", help="a folder of runs: compare them even if their protocols differ")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser(
        "compare", help="compare agents, seeds and reference agents across runs, with rliable statistics"
    )
    p.add_argument(
        "paths", nargs="+", type=Path, metavar="RUN_DIR_OR_ROOT", help="run directories or folders holding runs"
    )
    p.add_argument(
        "--out", "-o", type=Path, help="output folder (default ROOT/compare for one folder of runs, else ./compare)"
    )
    _add_compare_options(p)
    p.add_argument("--no-html", action="store_true", help="no HTML page")
    p.add_argument("--no-plots", action="store_true", help="no PNG plots (implies a page without plots)")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON instead of a summary")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("new-plugin", help="write a working third-party plugin package (suite, split, tests)")
    p.add_argument("name", help="plugin and suite name (lowercase, e.g. mysuite)")
    p.add_argument("--dir", type=Path, help="directory to create (default ./benchgen-NAME)")
    p.set_defaults(func=cmd_new_plugin)

    p = sub.add_parser("new-agent", help="write a working third-party agent plugin package (agent, config, tests)")
    p.add_argument("name", help="plugin and agent name (lowercase, e.g. myagent)")
    p.add_argument("--dir", type=Path, help="directory to create (default ./benchgen-NAME)")
    p.set_defaults(func=cmd_new_agent)

    from benchgen import cli_references

    cli_references.add_parsers(sub)
    if registry is not None:
        registry.pm.hook.benchgen_add_commands(subparsers=sub)
    return parser


#: ``benchgen compare``'s flag for each CompareOptions field, with what argparse needs beyond the
#: field's default and docstring (which are the help text)
COMPARE_FLAGS: dict[str, tuple[str, dict[str, Any]]] = {
    "baseline": ("--baseline", {}),
    "normalization": ("--normalization", {"choices": ["reference", "random", "baseline-set", "inter-algorithm"]}),
    "baseline_set": ("--baseline-set", {"type": _csv_list}),
    "references": ("--reference", {"action": "append", "metavar": "NAME[=CSV]"}),
    "show_references": ("--no-references", {"action": "store_false"}),
    "phase": (
        "--phase",
        {"choices": ["auto", *phases.SCORED]},
    ),
    "at": ("--at", {"type": _count}),
    "view": ("--view", {}),
    "reps": ("--reps", {"type": int}),
    "ci": ("--ci", {"type": float}),
    "seed": ("--seed", {"type": int}),
    "alpha": ("--alpha", {"type": float}),
    "pairs": ("--pair", {"action": "append", "metavar": "X:Y"}),
    "curve_points": ("--curve-points", {"type": int}),
    "force": ("--force", {"action": "store_true"}),
}


def _add_compare_options(parser) -> None:
    from benchgen.config import field_docs
    from benchgen.results.compare.options import DEFAULTS, CompareOptions

    docs = field_docs(CompareOptions)
    for name, (flag, extra) in COMPARE_FLAGS.items():
        default = getattr(DEFAULTS, name)
        if extra.get("action") == "append":
            default = list(default) if default else None  # argparse appends to the default list
        shown = "" if isinstance(default, bool) or default in (None, []) else f" (default {default})"
        # (a docstring's `%` is text: argparse formats help strings with %)
        parser.add_argument(flag, dest=name, default=default, help=docs[name].replace("%", "%%") + shown, **extra)


# -- commands ------------------------------------------------------------------------------
def cmd_plugins(args) -> int:
    from benchgen.registry import inventory

    _reg, plugins, error = inventory()
    if error:
        print(f"error: {error}")
    for p in plugins:
        status = "ok" if p.error is None else f"FAILED: {p.error}"
        print(f"{p.name:16} {p.distribution} {p.version:10} {p.module:28} {status}")
    if not plugins:
        print("no plugins installed (entry-point group 'benchgen')")
    return 1 if any(p.error for p in plugins) else 0


def cmd_list(args) -> int:
    reg = args.registry
    if args.suite is None:
        width = max([14, *(len(n) for n in [*reg.suites, *reg.agents])])
        print("suites:")
        for name, suite in sorted(reg.suites.items()):
            print(f"  {name:{width}} {len(suite.tasks()):3} tasks  {suite.description}")
        print("agents:")
        for name, spec in sorted(reg.agents.items()):
            kind = " (joint)" if spec.joint else ""
            print(f"  {name:{width}} {spec.description}{kind}")
        return 0
    suite = reg.suite(args.suite)
    print(f"{suite.name}: {suite.description}")
    print(
        f"budget: {suite.default_budget:,} {suite.budget_unit} per task; checkpoints "
        f"{', '.join(f'{c:,}' for c in suite.default_checkpoints)}"
    )
    print("protocol:")
    for key, value in suite.protocol().items():
        print(f"  {key}: {value}")
    presets = suite.protocol_presets()
    if presets:
        print(
            f"named protocols (--protocol NAME; default {suite.default_protocol}; `benchgen protocols {suite.name}`):"
        )
        for name, preset in presets.items():
            print(f"  {name:16} {preset.get('task_score', '')}")
    print("splits:")
    for name, split in sorted(reg.splits(suite).items()):
        print(f"  {name:16} train {len(split.train):3}  test {len(split.test):3}  {split.description}")
    tasks = suite.tasks()
    runnable = [t for t in tasks if suite.task_available(t)]
    print(f"tasks ({len(runnable)} of {len(tasks)} runnable here):")
    for t in tasks:
        mark = "" if t in runnable else "   (not runnable: " + _availability(suite, t) + ")"
        print(f"  {t}{mark}")
    return 0


def cmd_protocols(args) -> int:
    from rich.console import Console
    from rich.table import Table

    from benchgen import protocols

    suite = args.registry.suite(args.suite)
    if len(args.names) == 1:
        table = Table(title=f"{suite.name} protocol {args.names[0]}")
        table.add_column("parameter", no_wrap=True)
        table.add_column(args.names[0])
        table.add_column("source")
        for row in protocols.notes(suite, args.names[0]):
            table.add_row(*row)
    else:
        names, rows = protocols.side_by_side(suite, args.names or None)
        table = Table(title=f"{suite.name} protocols (* = differs)")
        table.add_column("")
        table.add_column("parameter", no_wrap=True)
        for name in names:
            table.add_column(name)
        for param, values, differs in rows:
            table.add_row("*" if differs else "", param, *values, style="bold yellow" if differs else None)
    Console(width=max(160, len(args.names or suite.protocol_presets()) * 28)).print(table)
    return 0


def cmd_settings(args) -> int:
    from benchgen.config import RunConfig, settings_table

    spec = args.registry.agent(args.agent)
    defaults = {}
    if args.suite:  # the suite's tuned settings for all its tasks (a task's own: benchgen run ... --plan)
        from benchgen.tuned import tuned_values

        defaults = tuned_values(args.registry.suite(args.suite), spec.algorithm, joint=spec.joint)
    print("run settings (--set run.KEY=VALUE, or KEY=VALUE when unambiguous):")
    print(settings_table(RunConfig))
    where = f" on {args.suite}" if args.suite else ""
    print(f"\n{spec.name} settings{where} (--set agent.KEY=VALUE, or KEY=VALUE):")
    print(settings_table(spec.config_class, defaults))
    return 0


def _availability(suite, task) -> str:
    try:
        suite.check_task_available(task)
    except UsageError as exc:
        return str(exc)
    return "ok"


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
    from benchgen.run import lifecycle

    return lifecycle.resume(
        args.registry,
        args.run_dir,
        force=args.force,
        progress=not args.no_progress,
        progress_every=args.progress_every,
    )


def cmd_video(args) -> int:
    from benchgen.run.video import record_videos

    for path in record_videos(args.run_dir, args.task, args.checkpoint, args.episodes):
        print(path)
    return 0


def cmd_score(args) -> int:
    from benchgen.scoring import read_score_csv, strict_json

    reg = args.registry
    suite = reg.suite(args.suite)
    raw = read_score_csv(args.csv)
    reg.check_tasks(suite, raw)
    infinite = sorted(task for task, value in raw.items() if value == float("inf"))
    if infinite and not suite.allows_infinite_scores():
        raise UsageError(
            f"{args.csv}: 'inf' for {', '.join(infinite[:3])}{' ...' if len(infinite) > 3 else ''}, but "
            f"{suite.name}'s protocol has no infinite gameplay; give the raw finite score"
        )
    scorer, notes = reg.scorer(suite), []
    if args.baseline is None:
        result = scorer.score(raw)
    else:  # the names compare accepts: the suite's baselines and every reference table plugins ship
        from benchgen.scoring import raw_summary, resolve_baseline

        scorer, name, notes = resolve_baseline(scorer, reg.reference_scores(suite), args.baseline)
        result = scorer.score(raw, name) if name is not None else raw_summary(raw)
    if args.json:
        print(
            json.dumps(
                strict_json({**result, **({"notes": notes} if notes else {})}), default=_json_default, allow_nan=False
            )
        )
    else:
        print(scorer.format_table(result))
        for note in notes:
            print(f"note: {note}")
    return 0


def _json_default(o):
    return str(o)


def cmd_export(args) -> int:
    from benchgen.results.export import export_episodes

    path = export_episodes(args.run_dir, args.format, args.output)
    if path is not None:
        print(f"wrote {path}", file=sys.stderr)
    return 0


def cmd_new_plugin(args) -> int:
    from benchgen.newplugin import create_plugin, installed_suites, names

    target, _files = create_plugin(args.name, args.dir, taken=installed_suites())
    n = names(args.name)
    print(f"wrote plugin {n['dist']} (module {n['module']}, suite {n['name']}) in {target}")
    print("next:")
    print(f"  pip install -e {target}")
    print(f"  pytest {target / 'tests'}")
    print(f"  benchgen plugins && benchgen run {n['name']} random --timesteps 2000")
    print("then replace the scripted corridor by your environment (see docs/plugin_authors.md)")
    return 0


def cmd_new_agent(args) -> int:
    from benchgen.newplugin import create_agent, installed_agents, names

    target, _files = create_agent(args.name, args.dir, taken=installed_agents())
    n = names(args.name, "agent")
    print(f"wrote plugin {n['dist']} (module {n['module']}, agent {n['name']}) in {target}")
    print("next:")
    print(f"  pip install -e {target}")
    print(f"  pytest {target / 'tests'}")
    print(f"  benchgen plugins && benchgen settings {n['name']}")
    print("then replace the action-value rule by your algorithm (see docs/plugin_authors.md, Agents)")
    return 0


def cmd_report(args) -> int:
    from benchgen.results.report import write_report
    from benchgen.results.rundir import RunDir

    if args.run_dir.is_dir() and not RunDir(args.run_dir).meta_file.exists():
        # a results root: compare the runs under it, with the comparison's defaults
        return _compare([args.run_dir], args.registry, {"baseline": args.baseline, "force": args.force})
    print(write_report(args.run_dir, baseline=args.baseline))
    return 0


def cmd_compare(args) -> int:
    from benchgen.results.compare.options import CompareOptions

    pairs = None
    if args.pairs:
        pairs = []
        for text in args.pairs:
            x, sep, y = text.partition(":")
            if not sep or not x or not y:
                raise UsageError(f"--pair {text}: give two agent labels as X:Y")
            pairs.append((x, y))
    options = {f.name: getattr(args, f.name) for f in dataclasses.fields(CompareOptions)}
    options.update(pairs=pairs, references=tuple(args.references or ()))
    return _compare(
        args.paths,
        args.registry,
        options,
        out=args.out,
        plots=not args.no_plots,
        html=not args.no_html,
        as_json=args.json,
    )


def _compare(
    paths: list[Path],
    registry,
    options: dict[str, Any],
    out: Path | None = None,
    plots: bool = True,
    html: bool = True,
    as_json: bool = False,
) -> int:
    """Build, write and summarize a comparison (``compare``, and ``report`` on a folder of runs)."""
    from benchgen.results.compare import build_comparison, write_comparison
    from benchgen.results.compare.render import summary, to_json
    from benchgen.results.rundir import RunDir

    result = build_comparison(paths, registry, **options)
    if out is None:
        one_root = len(paths) == 1 and not RunDir(paths[0]).meta_file.exists()
        out = paths[0] / "compare" if one_root else Path("compare")
    write_comparison(result, out, plots=plots, html=html)
    print(to_json(result) if as_json else summary(result, out))
    return 0


def _quiet_when_folder_gone(args) -> None:
    """A background writer (TensorBoard's) whose folder was removed with the run directory: the
    main thread stops the run with one line saying so; its thread's traceback would be noise."""
    error = args.exc_value
    name = getattr(error, "filename", None)
    if isinstance(error, OSError) and name and not Path(os.fsdecode(name)).parent.exists():
        return
    threading.__excepthook__(args)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] in (["run"], ["resume"]):
        from benchgen.run.signals import install_stop_handler

        # from the first moment: a SIGTERM while plugins load or the run directory is made ends
        # the run cleanly (exit 130, resumable), never half-way with Python's default exit 143
        install_stop_handler()
        threading.excepthook = _quiet_when_folder_gone
    try:
        registry = None
        # these work even with a broken plugin installed
        if argv[:1] not in (["plugins"], ["new-plugin"], ["new-agent"]):
            from benchgen.registry import get_registry

            registry = get_registry()
        parser = build_parser(registry)
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return 2
        args.registry = registry
        return int(args.func(args) or 0)
    except UsageError as exc:
        print(f"benchgen: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except sqlite3.OperationalError as exc:
        # the store is held past the 30 s timeout by another program, or its directory vanished:
        # not a bug to trace back, but a state of the machine to fix; committed episodes are kept
        print(
            f"benchgen: error: the results store failed ({exc}); check that no other program holds the run's "
            "results.sqlite and that the run directory still exists, then resume",
            file=sys.stderr,
        )
        return 2
    except OSError as exc:
        # a read-only or full filesystem, or a folder without permission, wherever a command writes
        # (its output folder, a run, a report): a state of the machine, not a bug to trace back
        if exc.errno not in (errno.EROFS, errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM):
            raise
        where = f"{os.fsdecode(exc.filename)}: " if exc.filename is not None else ""
        print(
            f"benchgen: error: {where}{exc.strerror}; fix the folder's permissions or free space, or pick another place",
            file=sys.stderr,
        )
        return 2
    except KeyboardInterrupt:
        print("benchgen: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
