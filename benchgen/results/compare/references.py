"""Reference score tables for comparisons: published agents (SABER's Rainbow-IQN, the Sonic
paper's baselines) contributed by suite plugins, and users' own CSV files.

A user reference CSV has a task column (``task``, ``game`` or ``level``) and either one ``score``
column or one column per training checkpoint (``frames_10M``, ``frames_200M``, ``timesteps_1M``,
or bare ``10M``): the SABER table shipped with the Atari plugin reads as it is. ``inf`` means
infinite gameplay.
"""

from __future__ import annotations

import bisect
import io
import math
from pathlib import Path

from benchgen.errors import UsageError
from benchgen.inputs import csv_reader, read_input_text
from benchgen.scoring import ReferenceScores, _parse_score, parse_checkpoint_label, read_score_csv


def format_amount(amount: int) -> str:
    """``200_000_000`` -> ``'200M'`` (the way papers name checkpoints).

    >>> format_amount(200_000_000), format_amount(2500), format_amount(1234)
    ('200M', '2.5k', '1234')
    """
    for suffix, mult in (("G", 10**9), ("M", 10**6), ("k", 10**3)):
        if amount >= mult and (amount * 10) % mult == 0:
            value = amount / mult
            return f"{value:g}{suffix}"
    return str(amount)


def read_reference_csv(path: str | Path, name: str | None = None) -> ReferenceScores:
    """Read a user reference table (see the module docstring); one-line errors on bad files."""
    path = Path(path)
    name = name or path.stem
    text = read_input_text(path, "reference file", expect="a CSV with columns task,score")
    reader = csv_reader(io.StringIO(text, newline=""), str(path))
    cols = list(reader.fieldnames or [])
    rows = list(reader)
    if "score" in cols:
        return ReferenceScores(name=name, scores=read_score_csv(path), description=f"user reference {path}")
    key = next((c for c in ("task", "level", "game") if c in cols), None)
    ckpt_cols = [c for c in cols if c != key and parse_checkpoint_label(c) is not None]
    if key is None or not ckpt_cols:
        raise UsageError(
            f"{path}: needs a task column and a 'score' column or checkpoint columns such as "
            f"frames_10M,frames_200M (found {','.join(cols) or 'no header'})"
        )
    ckpt_cols.sort(key=lambda c: parse_checkpoint_label(c)[1])
    by_checkpoint: dict[str, dict[str, float]] = {c: {} for c in ckpt_cols}
    for lineno, row in enumerate(rows, start=2):
        task = (row.get(key) or "").strip()
        if not task:
            raise UsageError(f"{path}:{lineno}: empty task name")
        for c in ckpt_cols:
            text = (row.get(c) or "").strip()
            if text:  # an empty cell: no score at that checkpoint
                by_checkpoint[c][task] = _parse_score(text, f"{path}:{lineno}")
    if not rows:
        raise UsageError(f"{path}: no rows; give one row per task")
    return ReferenceScores(
        name=name,
        scores=dict(by_checkpoint[ckpt_cols[-1]]),
        by_checkpoint=by_checkpoint,
        description=f"user reference {path}",
    )


def parse_reference_option(text: str) -> ReferenceScores:
    """``--reference NAME=FILE.csv`` (or just ``FILE.csv``, named after the file)."""
    name, sep, path = text.partition("=")
    if not sep:
        name, path = Path(text).stem, text
    if not name.strip() or not path.strip():
        raise UsageError(f"--reference {text}: give NAME=FILE.csv")
    return read_reference_csv(path.strip(), name.strip())


def scores_at(table: ReferenceScores, amount: int | None, budget_unit: str) -> tuple[dict[str, float], str]:
    """A table's per-task scores at ``amount`` (in ``budget_unit``) and the label of the column
    used: the checkpoint that matches ``amount`` if the table has one, else its final scores."""
    if amount is not None:
        for label, scores in table.by_checkpoint.items():
            parsed = parse_checkpoint_label(str(label))
            if parsed and parsed[1] == amount and parsed[0] in (None, budget_unit):
                return dict(scores), str(label)
        if table.interpolate:
            between = interpolated(table, amount, budget_unit)
            if between is not None:
                return between
    if table.scores:
        same = [str(k) for k, v in table.by_checkpoint.items() if v == table.scores]
        return dict(table.scores), (same[-1] if same else "final")
    return {}, "none"


def interpolated(table: ReferenceScores, amount: int, budget_unit: str) -> tuple[dict[str, float], str] | None:
    """A dense curve's scores at ``amount``, each task's linearly interpolated between the two
    checkpoints around it (``ReferenceScores.interpolate``), with the label ``~AMOUNT``; None
    outside the logged range."""
    points = sorted(
        (parsed[1], scores)
        for label, scores in table.by_checkpoint.items()
        if (parsed := parse_checkpoint_label(str(label))) and parsed[0] in (None, budget_unit)
    )
    steps = [step for step, _ in points]
    after = bisect.bisect_left(steps, amount)
    if not points or after == 0 or after == len(points):
        return None
    (x0, low), (x1, high) = points[after - 1], points[after]
    share = (amount - x0) / (x1 - x0)
    scores = {t: low[t] + share * (high[t] - low[t]) for t in low if t in high}
    return scores, f"~{amount} (between {x0:,} and {x1:,})"


def published_aggregate(table: ReferenceScores) -> float | None:
    """The aggregate a table publishes (e.g. the Sonic paper's mean test score), if any."""
    value = getattr(table, "aggregate", None)
    if value is None:
        return None
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(value) else value
