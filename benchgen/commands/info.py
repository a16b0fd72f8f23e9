"""``benchgen list``, ``settings``, ``protocols`` and ``plugins``: what is installed and how it
can be run."""

from __future__ import annotations

from benchgen import hookimpl
from benchgen.errors import UsageError


@hookimpl
def benchgen_add_commands(subparsers):
    p = subparsers.add_parser("list", help="suites and agents; with SUITE: its tasks, splits and protocol")
    p.add_argument("suite", nargs="?")
    p.set_defaults(func=cmd_list)

    p = subparsers.add_parser(
        "settings", help="every setting of a run and of AGENT (for --set and --config), with defaults"
    )
    p.add_argument("agent")
    p.add_argument("--suite", help="show AGENT's defaults on this suite (its per-suite defaults applied)")
    p.set_defaults(func=cmd_settings)

    p = subparsers.add_parser("protocols", help="a suite's named protocols side by side, or one with its sources")
    p.add_argument("suite")
    p.add_argument("names", nargs="*", help="presets to show (default all); one name: its values and sources")
    p.set_defaults(func=cmd_protocols)

    p = subparsers.add_parser("plugins", help="installed plugins, their distributions and versions")
    p.set_defaults(func=cmd_plugins)


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
