"""The statistics of a comparison, on (runs x tasks) score matrices (Agarwal et al. 2021).

- Aggregates (median, IQM, mean, optimality gap) with percentile stratified-bootstrap confidence
  intervals, by ``rliable.library.get_interval_estimates`` and ``rliable.metrics``. Infinite
  gameplay counts as ``INFINITE_CAP`` (200%) in every aggregate: SABER caps its mean so, and a
  bootstrap needs finite numbers. The mean is therefore SABER's capped mean.
- Probability of improvement P(X > Y) (Mann-Whitney U / (n m) per task, averaged over tasks),
  with a stratified independent bootstrap.
- Performance profiles: run-score distributions (fraction of (run, task) scores above tau).
- Sample-efficiency curves: the IQM at each of a grid of frame counts.
- Welch's t-test per task (unequal variances, two-sided, 99% confidence by default), as Bellemare
  et al. 2013 count per-game wins and losses. It is not corrected for multiple comparisons.

Intervals are reproducible: rliable draws its bootstrap indices from numpy's global generator,
which is seeded (and restored afterwards) for each estimate from ``seed`` and the estimate's
name, so adding an agent to a comparison does not move another agent's intervals.
"""

from __future__ import annotations

import functools
import math
import warnings
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import scipy.stats
from rliable import library as rly
from rliable import metrics

from benchgen.scoring import INFINITE_CAP

METRICS = ("median", "iqm", "mean", "optimality_gap")
METRIC_TITLES = {"median": "Median", "iqm": "IQM", "mean": "Mean (capped)", "optimality_gap": "Optimality gap"}
_FUNCS = {
    "median": metrics.aggregate_median,
    "iqm": metrics.aggregate_iqm,
    "mean": metrics.aggregate_mean,
    "optimality_gap": metrics.aggregate_optimality_gap,
}


@dataclass
class Estimate:
    """A point estimate and its confidence interval (None where there is none: one run)."""

    value: float
    low: float | None = None
    high: float | None = None

    def as_dict(self) -> dict:
        return {"value": self.value, "ci_low": self.low, "ci_high": self.high}


@contextmanager
def seeded(seed: int, name: str = "") -> Iterator[None]:
    """Seed numpy's global generator (which rliable's bootstrap uses) for one estimate."""
    state = np.random.get_state()
    np.random.seed((int(seed) * 1_000_003 + zlib.crc32(name.encode())) % 2**32)
    try:
        yield
    finally:
        np.random.set_state(state)


def cap_infinite(matrix: np.ndarray, cap: float = INFINITE_CAP) -> np.ndarray:
    """Infinite gameplay (+inf) counted as ``cap``."""
    out = np.array(matrix, dtype=float, copy=True)
    out[np.isposinf(out)] = cap
    return out


def aggregate_point(matrix: np.ndarray, names=METRICS) -> dict[str, float]:
    """Point estimates of the aggregates (no interval): reference rows, single runs."""
    capped = cap_infinite(matrix)
    return {m: float(_FUNCS[m](capped)) for m in names}


def aggregates(
    matrix: np.ndarray, names=METRICS, reps: int = 2000, ci: float = 0.95, seed: int = 0, key: str = ""
) -> dict[str, Estimate]:
    """Aggregates of one (runs x tasks) matrix with stratified-bootstrap CIs (none for one run)."""
    capped = cap_infinite(matrix)
    func = lambda s: np.array([_FUNCS[m](s) for m in names])
    if capped.shape[0] < 2:
        return {m: Estimate(float(v)) for m, v in zip(names, func(capped))}
    with seeded(seed, "aggregates:" + key):
        points, intervals = rly.get_interval_estimates({key: capped}, func, reps=reps, confidence_interval_size=ci)
    return {
        m: Estimate(float(points[key][i]), float(intervals[key][0, i]), float(intervals[key][1, i]))
        for i, m in enumerate(names)
    }


def probability_of_improvement(scores_x: np.ndarray, scores_y: np.ndarray) -> float:
    """P(X > Y): per task, the Mann-Whitney U statistic of X over Y divided by n_x n_y (ties
    count one half), averaged over tasks. Equals ``rliable.metrics.probability_of_improvement``,
    vectorized (the bootstrap calls it thousands of times)."""
    x = np.asarray(scores_x, dtype=float)[:, None, :]
    y = np.asarray(scores_y, dtype=float)[None, :, :]
    per_task = (x > y).mean(axis=(0, 1)) + 0.5 * (x == y).mean(axis=(0, 1))
    return float(per_task.mean())


def improvement(
    matrix_x: np.ndarray, matrix_y: np.ndarray, reps: int = 2000, ci: float = 0.95, seed: int = 0, key: str = ""
) -> Estimate:
    """P(X > Y) with a stratified independent bootstrap interval (runs of X and of Y resampled
    separately, within each task)."""
    x, y = cap_infinite(matrix_x), cap_infinite(matrix_y)
    value = probability_of_improvement(x, y)
    if x.shape[0] < 2 and y.shape[0] < 2:
        return Estimate(value)
    func = lambda a, b: np.array([probability_of_improvement(a, b)])
    with seeded(seed, "poi:" + key):
        _, intervals = rly.get_interval_estimates({key: [x, y]}, func, reps=reps, confidence_interval_size=ci)
    return Estimate(value, float(intervals[key][0, 0]), float(intervals[key][1, 0]))


def score_distribution(scores: np.ndarray, taus: np.ndarray, at_or_above: bool = False) -> np.ndarray:
    """Fraction of all (run, task) scores above each tau (rliable's ``score_distributions``,
    vectorized), or at or above it with ``at_or_above``: Bellemare et al. 2013's score
    distribution (section 4.2.3), "the fraction of games on which an algorithm achieves a certain
    normalized score or better".

    >>> score_distribution(np.array([[0.0, 0.5, 1.0]]), np.array([0.5, 1.0])).tolist()
    [0.3333333333333333, 0.0]
    >>> score_distribution(np.array([[0.0, 0.5, 1.0]]), np.array([0.5, 1.0]), at_or_above=True).tolist()
    [0.6666666666666666, 0.3333333333333333]
    """
    s = np.asarray(scores, dtype=float)[..., None]
    t = np.asarray(taus, dtype=float)
    counted = s >= t if at_or_above else s > t
    return counted.reshape(-1, len(t)).mean(axis=0)


def tau_grid(matrices: list[np.ndarray], points: int = 101) -> np.ndarray:
    """Thresholds from 0 to the largest finite score (at least 1: the reference's score)."""
    finite = np.concatenate([m[np.isfinite(m)].ravel() for m in matrices] or [np.zeros(0)])
    top = max(1.0, float(finite.max())) if finite.size else 1.0
    low = min(0.0, float(finite.min())) if finite.size else 0.0
    return np.linspace(low, top, points)


def performance_profile(
    matrix: np.ndarray,
    taus: np.ndarray,
    reps: int = 2000,
    ci: float = 0.95,
    seed: int = 0,
    key: str = "",
    at_or_above: bool = False,
) -> dict[str, np.ndarray | None]:
    """Score distribution over ``taus`` with pointwise bootstrap bands (none for one run), counting
    scores above each threshold, or at or above it (``at_or_above``, see :func:`score_distribution`).
    Infinite gameplay lies above every threshold."""
    m = np.asarray(matrix, dtype=float)
    profile = functools.partial(score_distribution, at_or_above=at_or_above)
    if m.shape[0] < 2:
        return {"profile": profile(m, taus), "ci_low": None, "ci_high": None}
    with seeded(seed, "profile:" + key):
        profiles, cis = rly.create_performance_profile(
            {key: m}, taus, custom_profile_func=profile, reps=reps, confidence_interval_size=ci
        )
    return {"profile": np.asarray(profiles[key]), "ci_low": np.asarray(cis[key][0]), "ci_high": np.asarray(cis[key][1])}


def iqm_curve(
    curves: np.ndarray, reps: int = 2000, ci: float = 0.95, seed: int = 0, key: str = ""
) -> dict[str, np.ndarray]:
    """IQM over (runs x tasks) at each point of a (runs x tasks x points) array, with
    stratified-bootstrap bands; points where some run has no score yet are NaN."""
    c = cap_infinite(curves)
    n_points = c.shape[2]
    value, low, high = (np.full(n_points, np.nan) for _ in range(3))
    ok = np.flatnonzero(~np.isnan(c).any(axis=(0, 1)))
    if ok.size == 0:
        return {"value": value, "ci_low": low, "ci_high": high}
    sub = c[:, :, ok]
    func = lambda s: scipy.stats.trim_mean(s.reshape(-1, s.shape[-1]), 0.25, axis=0)
    value[ok] = func(sub)
    if c.shape[0] >= 2:
        with seeded(seed, "curve:" + key):
            _, intervals = rly.get_interval_estimates({key: sub}, func, reps=reps, confidence_interval_size=ci)
        low[ok], high[ok] = intervals[key][0], intervals[key][1]
    return {"value": value, "ci_low": low, "ci_high": high}


def mean_interval(values: np.ndarray, ci: float = 0.95) -> tuple[float, float, float]:
    """Mean over seeds and its Student-t interval (NaN bounds with fewer than two seeds)."""
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    if v.size == 0:
        return math.nan, math.nan, math.nan
    mean = float(v.mean())
    if v.size < 2 or not np.isfinite(v).all():
        return mean, math.nan, math.nan
    half = float(scipy.stats.t.ppf(0.5 + ci / 2, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size))
    return mean, mean - half, mean + half


def welch(x: np.ndarray, y: np.ndarray, alpha: float = 0.01) -> dict:
    """Welch's t-test of one task's per-seed scores of X against Y (two-sided): ``win`` when
    p < alpha and X's mean is higher, ``loss`` when lower, ``tie`` otherwise; ``n/a`` when a side
    has fewer than two seeds or infinite gameplay."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    x, y = x[~np.isnan(x)], y[~np.isnan(y)]
    out = {
        "n_x": int(x.size),
        "n_y": int(y.size),
        "mean_x": float(x.mean()) if x.size else math.nan,
        "mean_y": float(y.mean()) if y.size else math.nan,
        "t": math.nan,
        "p": math.nan,
    }
    if x.size < 2 or y.size < 2:
        return {**out, "result": "n/a", "why": "fewer than 2 seeds"}
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        return {**out, "result": "n/a", "why": "infinite gameplay"}
    with warnings.catch_warnings():  # constant samples: scipy warns of precision loss, the test stays valid
        warnings.simplefilter("ignore", RuntimeWarning)
        t, p = scipy.stats.ttest_ind(x, y, equal_var=False)
    out.update(t=float(t), p=float(p))
    if math.isnan(p):  # no variance on either side
        same = out["mean_x"] == out["mean_y"]
        return {**out, "result": "tie" if same else "n/a", "why": "" if same else "no variance"}
    if p < alpha:
        return {**out, "result": "win" if out["mean_x"] > out["mean_y"] else "loss", "why": ""}
    return {**out, "result": "tie", "why": ""}
