"""The ``benchgen`` command line: the entry point. The commands live in :mod:`benchgen.commands`
(a built-in plugin); runs start and resume in :mod:`benchgen.run.lifecycle`.

Every bad input ends in one line ``benchgen: error: ...`` that says what to do, exit code 2, no
traceback, and nothing written to any results store.
"""

from __future__ import annotations

import argparse
import errno
import os
import signal
import sqlite3
import sys
import threading
from pathlib import Path

from benchgen import __version__
from benchgen.commands.arguments import Parser
from benchgen.errors import UsageError


def build_parser(registry=None) -> argparse.ArgumentParser:
    """The ``benchgen`` parser: the built-in commands (:mod:`benchgen.commands`), then those of
    the plugins in ``registry``, all added through the ``benchgen_add_commands`` hook."""
    from benchgen.commands import builtin_plugins

    parser = Parser(prog="benchgen", description="Benchmark RL agents on emulated games, by the papers' protocols.")
    parser.add_argument("--version", action="version", version=f"benchgen {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    builtin_plugins().hook.benchgen_add_commands(subparsers=sub)
    if registry is not None:  # (one line naming a plugin whose hook fails, e.g. adding a second `run`)
        registry.call_each("benchgen_add_commands", subparsers=sub)
    return parser


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
        from benchgen.run.execution.signals import install_stop_handler

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
    except sqlite3.DatabaseError as exc:
        # a page SQLite cannot read, met after the store was opened and checked (a disk error, a
        # file damaged while the run went on): every committed episode before it is in the file
        print(f"benchgen: error: a run's results.sqlite is damaged ({exc}); restore it from a copy", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # the reader of benchgen's output went away (`benchgen settings AGENT | head`): as a Unix tool
        # killed by SIGPIPE, stop quietly; stdout goes to /dev/null so the interpreter's final flush
        # does not raise again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 128 + signal.SIGPIPE
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:  # a name the user gave (or one made from it): one line
            name = os.fsdecode(exc.filename) if exc.filename is not None else "a path"
            shown = name if len(name) <= 80 else f"{name[:60]}...{name[-12:]}"
            print(
                f"benchgen: error: {shown}: a name in it is longer than the file system allows "
                "(255 bytes); give a shorter one",
                file=sys.stderr,
            )
            return 2
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
