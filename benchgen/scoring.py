"""Scoring: from raw per-task scores to normalized scores and aggregates.

Raw scores are sacred: everything here computes from them and nothing is stored in their place.

Normalization (SABER eq. 1/2): ``s = (a - r) / |w - r|`` with ``a`` the agent's score, ``r`` the
random score and ``w`` the reference (world record, human beginner, or another agent). Bellemare et
al. 2013 (section 4.1) define the general form ``(s - r_min) / (r_max - r_min)`` with several
choices of the range (the random score alone, a baseline set, the algorithms compared); SABER's
equations are its reference-score case with ``r_min`` the random score. Aggregates follow SABER: the median is the headline, the mean caps infinite gameplay
at 200%, and five classes bin the normalized scores.

Every normalizer lives here: :class:`Scorer` (SABER's, against the random score and a reference
table: world record, human, another agent), :func:`resolve_baseline` (``--baseline``, a table at
one of its checkpoints included), :class:`Normalizer` over a scorer, and
:class:`RangeNormalizer` (Bellemare et al.'s baseline-set and inter-algorithm ranges).
``benchgen compare``, ``benchgen report`` and the suites' published tables use these.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from benchgen.errors import UsageError

#: SABER's score classes: (name, exclusive upper bound as a fraction of the reference)
CLASSES: tuple[tuple[str, float], ...] = (
    ("failing", 0.01),
    ("poor", 0.10),
    ("medium", 0.50),
    ("fair", 1.00),
    ("superhuman", math.inf),
)

#: infinite gameplay counts as this normalized score in the capped mean (SABER: 200%)
INFINITE_CAP = 2.0


def normalize(score: float, random: float, reference: float) -> float:
    """``(score - random) / |reference - random|``; ``inf`` stays ``inf``.

    >>> normalize(150.0, 100.0, 200.0)
    0.5
    >>> normalize(-9000.0, -17000.0, -3000.0)  # lower-is-worse games keep the sign right
    0.5714285714285714
    """
    if math.isinf(score):
        return score
    denom = abs(reference - random)
    if denom == 0:
        raise ValueError("reference equals random score: normalization undefined")
    return (score - random) / denom


def score_class(normalized: float) -> str:
    """SABER class of a normalized score (a fraction: 0.05 = 5%)."""
    for name, upper in CLASSES:
        if normalized < upper:
            return name
    return CLASSES[-1][0]


def capped_mean(values: list[float], cap: float = INFINITE_CAP) -> float:
    """Mean with infinite gameplay (and anything above ``cap`` that is infinite) counted as ``cap``."""
    arr = np.array([cap if math.isinf(v) and v > 0 else v for v in values], dtype=float)
    return float(arr.mean()) if arr.size else float("nan")


def aggregate(normalized: Mapping[str, float]) -> dict:
    """Median, capped mean and class counts of per-task normalized scores."""
    values = list(normalized.values())
    counts = {name: 0 for name, _ in CLASSES}
    for v in values:
        counts[score_class(v)] += 1
    return {
        "n_tasks": len(values),
        "median": float(np.median(values)) if values else float("nan"),
        "mean": capped_mean(values),
        "classes": counts,
    }


@dataclass
class ReferenceScores:
    """Per-task scores of a named baseline (an agent, humans, a world record)."""

    name: str
    """Short name used with ``--baseline`` (e.g. ``human``, a world record, a reference agent)."""
    scores: dict[str, float]
    """task -> raw score (at ``checkpoint`` if the table has several)."""
    description: str = ""
    """One line for reports: who measured it, where it was published."""
    by_checkpoint: dict[str, dict[str, float]] = field(default_factory=dict)
    """Optional: checkpoint label (e.g. '10M') -> task -> raw score."""
    aggregate: float | None = None
    """Optional: the published aggregate score (for tables that give only an aggregate)."""
    aggregate_std: float | None = None
    """Optional: its standard deviation across the paper's runs."""
    source: str = ""
    """Where the numbers are printed: paper and table (e.g. "SABER, Table 6")."""
    view: str = "score"
    """The score view the numbers are in: ``score`` (the whole episode) or one of the suite's
    ``score_views`` (e.g. Atari's ``score_5min``); checked when the table is loaded."""
    protocol: dict[str, Any] = field(default_factory=dict)
    """Optional: protocol values the scores were measured under (e.g. ``{"sticky_action_probability":
    0.25}``); a protocol sweep (``benchgen run --vary``) shows the table beside the condition whose
    swept value matches."""
    spread: dict[str, float] = field(default_factory=dict)
    """Optional: task -> the published standard deviation of the score (over the paper's trials)."""
    random: dict[str, float] = field(default_factory=dict)
    """Optional: task -> the random score normalization against this table uses (the ``r`` of
    ``(a - r) / |w - r|``), for a baseline published with random scores of its own (Atari 100K's
    human scores come with other random scores than SABER's). Empty: the scorer's random scores.
    Only the normalization changes: the table's raw scores are the same either way."""
    interpolate: bool = False
    """Whether ``by_checkpoint`` is a dense learning curve (a score logged at every few thousand
    steps): a run whose budget falls between two checkpoints is then compared with the linear
    interpolation of the two at its own budget. False: only an exact checkpoint is used."""
    runs: dict[str, list[float]] = field(default_factory=dict)
    """Optional: task -> the score of each published run (one number per training run, e.g. each
    run's mean evaluation return), where the authors released their runs one by one; ``scores``
    is then their mean. ``benchgen compare`` places each run among them (its percentile per task)
    and treats them as an agent with runs (aggregates with intervals, probability of improvement,
    performance profile). Empty: only the table's per-task scores are known."""


@dataclass(frozen=True)
class PublishedAggregate:
    """One aggregate a paper prints, recomputed by benchgen's own scoring from the per-task tables
    it ships (``Suite.published_aggregates``; ``benchgen selfcheck``)."""

    source: str
    """paper and table, e.g. ``SABER, Table 3``"""
    quantity: str
    """what the number is, in the paper's terms"""
    published: float
    """the number as printed"""
    recomputed: float
    """the same quantity from the shipped tables through benchgen's scoring"""
    precision: float
    """the printed precision (0.01 for "3.13"): they match when they differ by at most half of it"""
    known_discrepancy: str = ""
    """why they differ, when the paper itself is inconsistent (documented, not hidden)"""

    @property
    def matches(self) -> bool:
        return abs(self.published - self.recomputed) <= self.precision / 2 + 1e-9


class Scorer:
    """Normalizes and aggregates per-task raw scores for one suite.

    The base class normalizes against ``random`` and the reference table named by ``baseline``;
    a suite plugin subclasses it to add its baselines and its own aggregate (e.g. Sonic's mean).
    """

    #: baseline used when the user does not name one, which a suite's scorer declares (a subclass
    #: sets it, e.g. to its world records); None: the scorer's reference table when it has exactly
    #: one, else none (the user names one with ``--baseline``, or scores stay raw)
    default_baseline: str | None = None

    def __init__(self, random_scores: Mapping[str, float], references: Mapping[str, ReferenceScores]):
        self.random_scores = dict(random_scores)
        self.references = dict(references)
        if self.default_baseline is None and len(self.references) == 1:
            self.default_baseline = next(iter(self.references))

    def task_score(self, episode_scores: list[float]) -> float:
        """Per-task score of a run from its raw episode scores in order (SABER/Machado: mean of
        the last 100 training episodes). Suites with another rule override this."""
        tail = episode_scores[-100:]
        if not tail:
            return float("nan")
        if any(math.isinf(s) for s in tail):
            return math.inf
        return float(np.mean(tail))

    def evaluation_score(self, episode_scores: list[float]) -> float:
        """Per-task score of one evaluation phase from its raw episode scores (Mnih et al. 2015,
        Bellemare et al. 2013: their mean; ``inf`` if any is)."""
        if not episode_scores:
            return float("nan")
        if any(math.isinf(s) for s in episode_scores):
            return math.inf
        return float(np.mean(episode_scores))

    def final_score(self, episode_scores: list[float]) -> float | None:
        """A second per-task score some papers print beside the first (Nichol et al. 2018's
        "Final Score"); None (the default): the suite has none."""
        return None

    def format_table(self, result: dict) -> str:
        """Text rendering of :meth:`score` output for ``benchgen score``; suites whose scores
        are not normalized (no classes) override it."""
        return format_score_table(result)

    def baselines(self) -> list[str]:
        """Names accepted by ``--baseline``."""
        return sorted(self.references)

    def default_baseline_for(self, protocol: Mapping[str, Any]) -> str | None:
        """The baseline runs recorded under ``protocol`` (the suite's ``protocol()`` values, as a run
        directory keeps them) are normalized against when the user names none: a protocol whose
        papers normalize otherwise (Atari 100K: human scores with their own random scores) names
        its own. The default: :attr:`default_baseline` whatever the protocol."""
        return self.default_baseline

    def reference(self, baseline: str | None) -> ReferenceScores:
        """Resolve a baseline name or a CSV path (columns task,score) to a reference table."""
        from benchgen.errors import did_you_mean

        baseline = baseline or self.default_baseline
        if baseline is None:
            raise UsageError(
                f"the suite's scorer has no default baseline; name one with --baseline ({', '.join(self.baselines())})"
            )
        if baseline in self.references:
            return self.references[baseline]
        if baseline.endswith(".csv") or Path(baseline).exists():
            return ReferenceScores(name=Path(baseline).stem, scores=read_score_csv(baseline))
        raise did_you_mean("baseline", baseline, self.baselines(), hint="or pass a CSV file with columns task,score")

    def score(self, raw: Mapping[str, float], baseline: str | None = None) -> dict:
        """Normalize ``raw`` (task -> raw score) and aggregate.

        Tasks without a random score or a reference score are reported raw and left out of the
        aggregates; the result lists them under ``unnormalized``.
        """
        if not self.references and baseline is None:
            return raw_summary(raw)
        ref = self.reference(baseline)
        random_scores = ref.random or self.random_scores
        per_task: dict[str, float] = {}
        unnormalized: dict[str, float] = {}
        for task, value in raw.items():
            r = random_scores.get(task)
            w = ref.scores.get(task)
            if r is None or w is None or (isinstance(w, float) and math.isnan(w)) or w == r:
                unnormalized[task] = value
                continue
            per_task[task] = normalize(value, r, w)
        result = aggregate(per_task)
        result.update(
            baseline=ref.name,
            per_task=per_task,
            per_task_class={t: score_class(v) for t, v in per_task.items()},
            raw=dict(raw),
            unnormalized=unnormalized,
        )
        return result


def raw_summary(raw: Mapping[str, float]) -> dict:
    """Aggregates of raw scores, for a suite with no reference to normalize against: the same
    keys as a normalized result, with empty classes (reports then print raw means)."""
    values = list(raw.values())
    return {
        "n_tasks": len(values),
        "median": float(np.median(values)) if values else float("nan"),
        "mean": float(np.mean(values)) if values else float("nan"),
        "classes": {},
        "baseline": "raw",
        "normalization": "none",
        "per_task": dict(raw),
        "per_task_class": {},
        "raw": dict(raw),
        "unnormalized": {},
    }


def format_score_table(result: dict) -> str:
    """Text table of :meth:`Scorer.score` output (``benchgen score``)."""

    def fmt(v: float) -> str:
        return "inf" if math.isinf(v) else f"{v:,.1f}"

    if not result["classes"]:  # raw scores only
        lines = [f"{task:24} {fmt(v):>14}" for task, v in result["raw"].items()]
        lines.append(
            f"\n{result['n_tasks']} tasks, raw scores (no reference to normalize against): "
            f"mean {fmt(result['mean'])}, median {fmt(result['median'])}"
        )
        return "\n".join(lines)
    lines = [f"{'task':24} {'raw':>14} {'normalized':>11}  class"]
    for task, raw in result["raw"].items():
        if task in result["per_task"]:
            norm = result["per_task"][task]
            lines.append(f"{task:24} {fmt(raw):>14} {norm * 100:10.2f}%  {result['per_task_class'][task]}")
        else:
            lines.append(f"{task:24} {fmt(raw):>14} {'-':>11}  (no reference: raw only)")
    lines.append("")
    lines.append(
        f"baseline {result['baseline']}: {result['n_tasks']} tasks normalized; "
        f"median {result['median'] * 100:.2f}%, capped mean {result['mean'] * 100:.2f}%"
    )
    lines.append("classes: " + ", ".join(f"{k} {v}" for k, v in result["classes"].items()))
    if result["unnormalized"]:
        lines.append(f"left out of the aggregates (no reference score): {', '.join(sorted(result['unnormalized']))}")
    return "\n".join(lines)


def _parse_score(text: str, where: str) -> float:
    t = text.strip().lower()
    if t in ("inf", "+inf", "infinity"):
        return math.inf
    try:
        value = float(t)
    except ValueError:
        raise UsageError(f"{where}: score '{text}' is not a number (use 'inf' for infinite gameplay)")
    if math.isnan(value):
        raise UsageError(f"{where}: score is NaN; give a number or 'inf'")
    if math.isinf(value):  # '-inf', or a number too large for a float such as 1e400
        raise UsageError(f"{where}: score '{text}' is not a finite number; only 'inf' means infinite gameplay")
    return value


def _score_csv_lines(path: Path) -> tuple[list[str], list[str]]:
    """A score CSV's leading ``#`` comment lines (without the ``#``) and the lines after them."""
    from benchgen.inputs import read_input_text

    lines = read_input_text(path, "score file", expect="a CSV with columns task,score").splitlines()
    count = next((i for i, line in enumerate(lines) if not line.startswith("#")), len(lines))
    return [line[1:].strip() for line in lines[:count]], lines[count:]


def read_score_csv(path: str | Path) -> dict[str, float]:
    """Read ``task,score`` (or ``level,score`` / ``game,score``) rows; one-line errors on bad rows.
    Lines starting with ``#`` above the header are comments (where the scores come from)."""
    from benchgen.inputs import csv_reader

    path = Path(path)
    comments, lines = _score_csv_lines(path)
    reader = csv_reader(lines, str(path))
    cols = reader.fieldnames or []
    key = next((c for c in ("task", "level", "game") if c in cols), None)
    if key is None or "score" not in cols:
        raise UsageError(f"{path}: needs columns task,score (found {','.join(cols) or 'no header'})")
    scores: dict[str, float] = {}
    for lineno, row in enumerate(reader, start=len(comments) + 2):
        task = (row.get(key) or "").strip()
        if not task:
            raise UsageError(f"{path}:{lineno}: empty task name; every row needs task,score")
        if task in scores:
            raise UsageError(f"{path}:{lineno}: task '{task}' appears twice; give one raw score per task")
        scores[task] = _parse_score(row.get("score") or "", f"{path}:{lineno}")
    if not scores:
        raise UsageError(f"{path}: no rows; give one task,score row per task")
    return scores


def read_reference_csv(path: str | Path, name: str) -> ReferenceScores:
    """Reference table ``name`` from a score CSV (see :func:`read_score_csv`); its leading ``#``
    comment lines are the table's description."""
    comments, _ = _score_csv_lines(Path(path))
    return ReferenceScores(name=name, scores=read_score_csv(path), description=" ".join(filter(None, comments)))


def strict_json(value):
    """A copy of ``value`` that strict JSON parsers accept: infinities become the string
    ``"inf"`` / ``"-inf"`` (infinite gameplay), NaN becomes ``null``."""
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return value
    if isinstance(value, dict):
        return {str(k): strict_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict_json(v) for v in value]
    if isinstance(value, np.generic):
        return strict_json(value.item())
    return value


# -- reference tables at a checkpoint -------------------------------------------------------
_CKPT = re.compile(r"^(?:(frames|timesteps|steps)_)?(\d+(?:\.\d+)?)([kmgb]?)$", re.IGNORECASE)
_MULT = {"": 1, "k": 1_000, "m": 1_000_000, "g": 1_000_000_000, "b": 1_000_000_000}


def parse_checkpoint_label(label: str) -> tuple[str | None, int] | None:
    """``'frames_10M'`` -> ``('frames', 10_000_000)``; ``'200M'`` -> ``(None, 200_000_000)``;
    None if ``label`` names no amount.

    >>> parse_checkpoint_label("frames_10M")
    ('frames', 10000000)
    >>> parse_checkpoint_label("2.5k")
    (None, 2500)
    >>> parse_checkpoint_label("final") is None
    True
    """
    m = _CKPT.match(label.strip())
    if not m:
        return None
    unit, number, mult = m.groups()
    if unit == "steps":
        unit = "timesteps"
    return unit, round(float(number) * _MULT[mult.lower()])


def at_checkpoint(table: ReferenceScores, label: str) -> ReferenceScores:
    """``NAME@10M``: the table's scores at one checkpoint, as a table of its own (SABER eq. 2
    against a reference agent at a given training time)."""
    wanted = parse_checkpoint_label(label)
    for key, scores in table.by_checkpoint.items():
        parsed = parse_checkpoint_label(str(key))
        if str(key) == label or (wanted and parsed and parsed[1] == wanted[1]):
            return ReferenceScores(
                name=f"{table.name}@{label}",
                scores=dict(scores),
                description=f"{table.description} at {key}".strip(),
                random=dict(table.random),
            )
    known = ", ".join(map(str, table.by_checkpoint)) or "none"
    raise UsageError(f"reference '{table.name}' has no checkpoint '{label}' (it has: {known})")


# -- normalizers: compare, reports and the published tables use these -----------------------------------------------------------------------------
def resolve_baseline(
    scorer: Scorer, tables: dict[str, ReferenceScores], baseline: str | None
) -> tuple[Scorer, str | None, list[str]]:
    """A copy of the suite's scorer that also knows the reference ``tables`` (published agents,
    user CSVs), and the baseline name to normalize against (None: raw scores).

    ``baseline`` is None (the scorer's default, raw if the suite has none), ``raw``, a baseline or
    reference-agent name, ``NAME@CHECKPOINT`` (a reference agent at one of its checkpoints, such
    as ``NAME@10M``: SABER eq. 2), or a CSV file with columns task,score.
    """
    ext = copy.copy(scorer)
    ext.references = {**tables, **scorer.references}
    if baseline == "raw":
        return ext, None, ["scores are raw (--baseline raw)"]
    if baseline is None:
        default = scorer.references.get(scorer.default_baseline)
        if not scorer.random_scores and not (default is not None and default.random):
            return ext, None, ["the suite has no normalization baselines: scores are raw"]
        try:
            table = ext.reference(None)
        except UsageError:
            return (
                ext,
                None,
                [
                    f"the suite's default baseline '{scorer.default_baseline}' is unavailable: scores are raw"
                    if scorer.default_baseline is not None
                    else "the suite names no default baseline: scores are raw"
                ],
            )
    else:
        try:
            table = ext.reference(baseline)  # a suite's scorer may resolve NAME@CHECKPOINT itself
        except UsageError:
            if "@" not in baseline or Path(baseline).exists():
                raise
            name, _, label = baseline.partition("@")
            table = at_checkpoint(ext.reference(name), label)
    if not scorer.random_scores and not table.random:  # (a table may carry its own: ReferenceScores.random)
        raise UsageError(f"suite has no random scores, so --baseline {baseline} cannot normalize; use --baseline raw")
    notes = []
    infinite = sorted(t for t, w in table.scores.items() if math.isinf(w))
    if infinite:  # SABER eq. 2 needs a finite yardstick: such tasks are reported raw
        table = dataclasses.replace(table, scores={t: w for t, w in table.scores.items() if not math.isinf(w)})
        notes.append(
            f"baseline {table.name} reached infinite gameplay on {', '.join(infinite)}: no finite "
            "yardstick there, so these tasks are reported raw"
        )
    ext.references[table.name] = table
    return ext, table.name, notes


class Normalizer:
    """Raw per-task scores -> the scorer's normalized scores (``(a - r) / |w - r|``), through
    ``Scorer.score`` so a suite's own rules apply; tasks it cannot normalize come back NaN."""

    #: SABER's score classes apply (they are defined on reference-normalized scores)
    classes = True

    def __init__(self, scorer: Scorer, baseline: str | None):
        self.scorer = scorer
        self.baseline = baseline

    @property
    def active(self) -> bool:
        return self.baseline is not None

    def row(self, raw: dict[str, float]) -> dict[str, float]:
        if not self.active:
            return dict(raw)
        finite_or_inf = {t: v for t, v in raw.items() if not (isinstance(v, float) and math.isnan(v))}
        return self.scorer.score(finite_or_inf, self.baseline)["per_task"]

    def matrix(self, raw: np.ndarray, tasks: list[str]) -> np.ndarray:
        """Normalize a (rows x tasks [x points]) array."""
        if not self.active:
            return raw.astype(float).copy()
        flat = raw.reshape(raw.shape[0], raw.shape[1], -1)
        out = np.full(flat.shape, np.nan)
        for i in range(flat.shape[0]):
            for k in range(flat.shape[2]):
                norm = self.row({t: float(flat[i, j, k]) for j, t in enumerate(tasks)})
                for j, t in enumerate(tasks):
                    out[i, j, k] = norm.get(t, np.nan)
        return out.reshape(raw.shape)

    def normalizable(self, tasks: list[str]) -> list[str]:
        """Tasks the baseline covers (all of them in raw mode)."""
        if not self.active:
            return list(tasks)
        probe = self.scorer.score({t: 0.0 for t in tasks}, self.baseline)["per_task"]
        return [t for t in tasks if t in probe]


class RangeNormalizer(Normalizer):
    """Bellemare et al. 2013, section 4.1: ``(s - r_min) / (r_max - r_min)`` per task, with the
    range taken from a *baseline set* of reference scores (4.1.2: e.g. Random, Const and Perturb)
    or from the *algorithms compared* themselves (4.1.3: 0 = the worst of them, 1 = the best).
    Tasks whose range is empty (all scores equal) cannot be normalized and are left out."""

    classes = False

    def __init__(self, ranges: dict[str, tuple[float, float]], label: str):
        super().__init__(None, label)
        self.ranges = {t: (lo, hi) for t, (lo, hi) in ranges.items() if math.isfinite(lo) and hi > lo}

    def row(self, raw: dict[str, float]) -> dict[str, float]:
        out = {}
        for task, value in raw.items():
            if task in self.ranges and not math.isnan(value):
                lo, hi = self.ranges[task]
                out[task] = value if math.isinf(value) else (value - lo) / (hi - lo)
        return out

    def normalizable(self, tasks: list[str]) -> list[str]:
        return [t for t in tasks if t in self.ranges]


def score_ranges(tables: list[dict[str, float]]) -> dict[str, tuple[float, float]]:
    """Per task, the (lowest, highest) finite score over ``tables``."""
    values: dict[str, list[float]] = defaultdict(list)
    for table in tables:
        for task, value in table.items():
            if math.isfinite(value):
                values[task].append(float(value))
    return {t: (min(v), max(v)) for t, v in values.items()}
