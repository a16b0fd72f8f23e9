"""``benchgen new-plugin`` and ``new-agent``: a working third-party plugin package to start from."""

from __future__ import annotations

from pathlib import Path

from benchgen import hookimpl


@hookimpl
def benchgen_add_commands(subparsers):
    p = subparsers.add_parser("new-plugin", help="write a working third-party plugin package (suite, split, tests)")
    p.add_argument("name", help="plugin and suite name (lowercase, e.g. mysuite)")
    p.add_argument("--dir", type=Path, help="directory to create (default ./benchgen-NAME)")
    p.set_defaults(func=cmd_new_plugin)

    p = subparsers.add_parser(
        "new-agent", help="write a working third-party agent plugin package (agent, config, tests)"
    )
    p.add_argument("name", help="plugin and agent name (lowercase, e.g. myagent)")
    p.add_argument("--dir", type=Path, help="directory to create (default ./benchgen-NAME)")
    p.set_defaults(func=cmd_new_agent)


def cmd_new_plugin(args) -> int:
    from benchgen.newplugin import create_plugin, installed_random_agent, installed_suites, names

    target, _files = create_plugin(args.name, args.dir, taken=installed_suites())
    n = names(args.name)
    print(f"wrote plugin {n['dist']} (module {n['module']}, suite {n['name']}) in {target}")
    print("next:")
    print(f"  pip install -e {target}")
    print(f"  pytest {target / 'tests'}")
    print(f"  benchgen plugins && benchgen run {n['name']} {installed_random_agent()} --timesteps 2000")
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
