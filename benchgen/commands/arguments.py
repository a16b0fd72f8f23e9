"""What the built-in commands' arguments share: a parser whose errors are one line, and the
argument types (budgets like ``10M``, seed lists, seconds, output paths)."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from benchgen.errors import UsageError


class Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line instead of usage + message
        raise UsageError(f"{message} (see `{self.prog} --help`)")


def csv_list(text: str) -> list[str]:
    """Comma-separated names; refused when none is given (``--tasks ""`` or ``",,,"`` once ran the
    default split, as if the flag were not there)."""
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise argparse.ArgumentTypeError(f"expected comma-separated names, got {text!r}")
    return items


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of seconds (0 or more), got '{text}'")
    return value


def progress_flags(p) -> None:
    p.add_argument("--no-progress", action="store_true", help="no progress bar or lines")
    p.add_argument(
        "--progress-every",
        type=seconds,
        metavar="SECONDS",
        help="without a terminal: seconds between plain progress lines (default 30)",
    )


#: the most numbers one range of :func:`int_list` may hold (``0-1e99`` is a typo, not a plan)
MAX_RANGE = 10_000


def int_list(text: str) -> list[int]:
    """Seeds: ``0,1,2`` (``1e3`` too) and ranges ``0-4`` (both ends in), never rounded: ``0.7``
    or ``inf`` is not a seed."""
    values = []
    for t in csv_list(text):
        first, dash, last = t.partition("-")
        if dash and first.strip():  # a range (a leading "-" is a negative number's)
            low, high = _whole(first, t), _whole(last, t)
            if high < low:
                raise argparse.ArgumentTypeError(f"the range '{t}' runs backwards; write it {high}-{low}")
            if high - low >= MAX_RANGE:
                raise argparse.ArgumentTypeError(f"the range '{t}' holds more than {MAX_RANGE:,} numbers")
            values.extend(range(low, high + 1))
        else:
            values.append(_whole(t, t))
    return values


def _whole(text: str, item: str) -> int:
    """``text`` as a whole number; an error naming ``item`` (the list's element) otherwise."""
    try:
        value = float(text.strip().replace("_", ""))
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or not value.is_integer():
        raise argparse.ArgumentTypeError(f"expected comma-separated whole numbers or ranges (0-4), got '{item}'")
    return int(value)


def out_path(text: str) -> Path:
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path; give a directory name")
    return Path(text)


def count(text: str) -> int:
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
