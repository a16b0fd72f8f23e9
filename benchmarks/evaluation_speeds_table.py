"""The part the evaluation-speed scripts share (``atari100k_evaluation_speeds.py``,
``procgen_evaluation_speeds.py``): a suite's ``data/evaluation_speeds.csv`` written from measured
rows under a header saying how they were measured, or checked against what the committed runs give
(``--check``: a run was added and the table not regenerated)."""

from __future__ import annotations

import argparse
import csv
import io
import sys
from collections.abc import Callable
from pathlib import Path


def render(rows: list[dict], header: str) -> str:
    """The table: ``header`` (``#`` lines) and the rows as CSV."""
    buf = io.StringIO()
    buf.write(header)
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]) if rows else ["agent"], lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def main(
    argv: list[str] | None,
    description: str,
    measure: Callable[[Path], list[dict]],
    header: str,
    results: Path,
    out: Path,
    script: str,
) -> int:
    """The command line of an evaluation-speed script: measure the CSVs under ``--results`` and
    write ``--out``, or with ``--check`` return 1 when ``--out`` differs from what they give."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--results", type=Path, default=results)
    parser.add_argument("--out", type=Path, default=out)
    parser.add_argument("--check", action="store_true", help="fail when the committed file is stale")
    args = parser.parse_args(argv)
    text = render(measure(args.results), header)
    if args.check:
        if not args.out.exists() or args.out.read_text() != text:
            print(f"{args.out} is stale: run python benchmarks/{script}", file=sys.stderr)
            return 1
        return 0
    args.out.write_text(text)
    print(f"wrote {args.out}")
    return 0
