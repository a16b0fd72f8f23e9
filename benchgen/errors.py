"""User-facing errors: one line that says what to do, exit code 2, no traceback."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class UsageError(Exception):
    """Bad input from the user. The CLI prints ``benchgen: error: <message>`` and exits 2."""

    exit_code = 2


class PluginError(UsageError):
    """A plugin failed to load or implements an unknown hook."""


def did_you_mean(
    kind: str, name: str, choices: Iterable[str], hint: str = "", listed_by: str = "benchgen list"
) -> UsageError:
    """Build the standard 'unknown X' error with a difflib suggestion; a long list of choices is
    not printed but named by the command that lists it (``listed_by``).

    >>> str(did_you_mean("suite", "pong_sute", ["pong_suite", "maze"]))
    "unknown suite 'pong_sute'; did you mean 'pong_suite'? (known: maze, pong_suite)"
    """
    choices = sorted(set(choices))
    close = difflib.get_close_matches(name, choices, n=1, cutoff=0.5)
    msg = f"unknown {kind} '{name}'"
    if close:
        msg += f"; did you mean '{close[0]}'?"
    if len(choices) <= 12:
        msg += f" (known: {', '.join(choices) if choices else 'none'})"
    else:
        msg += f" ({len(choices)} known; list them with `{listed_by}`)"
    if hint:
        msg += f" {hint}"
    return UsageError(msg)
