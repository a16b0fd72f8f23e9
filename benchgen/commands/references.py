"""``benchgen references`` and ``benchgen selfcheck``: the published numbers a suite ships.

``references SUITE`` lists its reference tables (name, source, score view, protocol, tasks,
checkpoints, aggregate); ``references SUITE NAME`` prints one table. ``selfcheck [SUITE ...]``
recomputes the aggregates the papers print from the per-task tables benchgen ships, through
benchgen's own scoring (``Suite.published_aggregates``), and prints published against recomputed;
it exits 1 if one differs beyond the printed precision without a documented reason.
"""

from __future__ import annotations

import math

from rich.console import Console
from rich.table import Table

from benchgen import hookimpl
from benchgen.errors import did_you_mean
from benchgen.scoring import parse_checkpoint_label


@hookimpl
def benchgen_add_commands(subparsers):
    p = subparsers.add_parser("references", help="a suite's published reference tables, with their sources")
    p.add_argument("suite")
    p.add_argument("name", nargs="?", help="one table: its per-task scores")
    p.set_defaults(func=cmd_references)
    p = subparsers.add_parser("selfcheck", help="recompute the papers' printed aggregates from the shipped tables")
    p.add_argument("suites", nargs="*", help="suites to check (default: every installed suite)")
    p.set_defaults(func=cmd_selfcheck)


def _fmt(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float) and math.isinf(value):
        return "inf"
    return f"{value:,.7g}" if isinstance(value, float) else str(value)


def _checkpoint_summary(ref) -> str:
    """A dense curve's checkpoints in a few words: how many, from where to where."""
    amounts = sorted(p[1] for label in ref.by_checkpoint if (p := parse_checkpoint_label(str(label))))
    if not amounts:
        return "-"
    return f"{len(amounts)} points, {amounts[0]:,} to {amounts[-1]:,} (interpolated between them)"


def cmd_references(args) -> int:
    reg = args.registry
    suite = reg.suite(args.suite)
    tables = reg.reference_scores(suite)
    console = Console(width=160)
    if args.name is not None:
        if args.name not in tables:
            raise did_you_mean(
                f"{suite.name} reference table", args.name, tables, listed_by=f"benchgen references {suite.name}"
            )
        ref = tables[args.name]
        table = Table(title=f"{ref.name}: {ref.description}", caption=f"source: {ref.source or '-'}; view: {ref.view}")
        # a dense curve (hundreds of logged steps) prints its scores and says where the curve is
        labels = list(ref.by_checkpoint) if ref.by_checkpoint and not ref.interpolate else ["score"]
        if ref.interpolate:
            table.caption += f"; a dense curve: {_checkpoint_summary(ref)}"
        table.add_column("task")
        for label in labels:
            table.add_column(label, justify="right")
        if ref.spread:
            table.add_column("std", justify="right")
        tasks = sorted(set(ref.scores) | {t for s in ref.by_checkpoint.values() for t in s})
        for task in tasks:
            cells = [
                _fmt(ref.scores.get(task) if label == "score" else ref.by_checkpoint[label].get(task))
                for label in labels
            ]
            if ref.spread:
                cells.append(_fmt(ref.spread.get(task)))
            table.add_row(task, *cells)
        if ref.aggregate is not None:
            table.add_row("(aggregate)", _fmt(ref.aggregate), *[""] * (len(labels) - 1 + bool(ref.spread)))
        console.print(table)
        return 0
    table = Table(title=f"{suite.name} reference tables (`benchgen references {suite.name} NAME` prints one)")
    for column in ("name", "source", "view", "protocol", "tasks", "checkpoints", "aggregate"):
        table.add_column(column)
    for ref in tables.values():
        protocol = ", ".join(f"{k}={v}" for k, v in ref.protocol.items()) or "-"
        table.add_row(
            ref.name,
            ref.source or ref.description,
            ref.view,
            protocol,
            str(len(ref.scores)),
            _checkpoint_summary(ref) if ref.interpolate else ", ".join(ref.by_checkpoint) or "-",
            _fmt(ref.aggregate),
        )
    console.print(table)
    return 0


def cmd_selfcheck(args) -> int:
    reg = args.registry
    names = args.suites or list(reg.suites)
    suites = [reg.suite(n) for n in names]
    console = Console(width=160)
    failed = checked = 0
    for suite in suites:
        aggregates = suite.published_aggregates()
        if not aggregates:
            if args.suites:
                console.print(f"{suite.name}: ships no published aggregate to recompute")
            continue
        table = Table(title=f"{suite.name}: published vs recomputed from the shipped tables")
        for column in ("source", "quantity", "published", "recomputed", ""):
            table.add_column(column)
        for agg in aggregates:
            checked += 1
            if agg.matches:
                verdict = "match"
            elif agg.known_discrepancy:
                verdict = f"differs (known: {agg.known_discrepancy})"
            else:
                verdict, failed = "DIFFERS", failed + 1
            table.add_row(agg.source, agg.quantity, _fmt(agg.published), _fmt(round(agg.recomputed, 6)), verdict)
        console.print(table)
    console.print(f"{checked} aggregates recomputed, {failed} differ without a documented reason")
    return 1 if failed else 0
