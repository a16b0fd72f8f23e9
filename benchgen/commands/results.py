"""``benchgen video``, ``score``, ``export``, ``report`` and ``compare``: what a run or a table of
scores says, read back."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from benchgen import hookimpl, phases
from benchgen.commands import arguments
from benchgen.errors import UsageError


@hookimpl
def benchgen_add_commands(subparsers):
    p = subparsers.add_parser("video", help="MP4s of a run's agent playing a task (greedy, full-resolution screen)")
    p.add_argument("run_dir", type=Path)
    p.add_argument("--task", required=True, help="a task the run played")
    p.add_argument(
        "--checkpoint", type=arguments.count, help="frames: the first kept checkpoint at or past it (default: the last)"
    )
    p.add_argument("--episodes", type=int, default=1, help="episodes to film (default 1)")
    p.set_defaults(func=cmd_video)

    p = subparsers.add_parser("score", help="normalize and aggregate a task,score CSV of raw scores")
    p.add_argument("suite")
    p.add_argument("csv", type=Path)
    p.add_argument(
        "--baseline",
        help="the suite's default, raw, any reference table `benchgen compare` knows (NAME or NAME@CHECKPOINT; "
        "`benchgen references SUITE` lists them), or a CSV file",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_score)

    p = subparsers.add_parser("export", help="one row per recorded episode")
    p.add_argument("run_dir", type=Path)
    p.add_argument(
        "--format",
        choices=["csv", "parquet", "wandb"],
        default="csv",
        help="wandb: one Weights & Biases offline run per unit, named as CleanRL's runs are "
        "(upload later with `wandb sync OUTPUT/wandb`)",
    )
    p.add_argument(
        "--output",
        "-o",
        type=Path,
        help="file to write (default RUN_DIR/episodes.FORMAT; '-' = stdout for csv); for wandb the folder "
        "that gets the wandb/ folder (default RUN_DIR)",
    )
    p.set_defaults(func=cmd_export)

    p = subparsers.add_parser("report", help="markdown + JSON + plots of a run")
    p.add_argument("run_dir", type=Path)
    p.add_argument("--baseline", help="normalization baseline (default: the suite's)")
    p.add_argument("--force", action="store_true", help="a folder of runs: compare them even if their protocols differ")
    p.set_defaults(func=cmd_report)

    p = subparsers.add_parser(
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


#: ``benchgen compare``'s flag for each CompareOptions field, with what argparse needs beyond the
#: field's default and docstring (which are the help text)
COMPARE_FLAGS: dict[str, tuple[str, dict[str, Any]]] = {
    "baseline": ("--baseline", {}),
    "normalization": ("--normalization", {"choices": ["reference", "random", "baseline-set", "inter-algorithm"]}),
    "baseline_set": ("--baseline-set", {"type": arguments.csv_list}),
    "references": ("--reference", {"action": "append", "metavar": "NAME[=CSV]"}),
    "show_references": ("--no-references", {"action": "store_false"}),
    "phase": (
        "--phase",
        {"choices": ["auto", *phases.SCORED]},
    ),
    "at": ("--at", {"type": arguments.count}),
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


def cmd_video(args) -> int:
    from benchgen.run.evaluation.video import record_videos

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

    if args.format == "wandb":
        from benchgen.results.wandb_offline import export_wandb

        path = export_wandb(args.run_dir, args.output)
    else:
        path = export_episodes(args.run_dir, args.format, args.output)
    if path is not None:
        print(f"wrote {path}", file=sys.stderr)
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
