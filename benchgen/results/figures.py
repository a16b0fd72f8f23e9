"""The papers' own figures of one run, drawn by ``benchgen report``.

* SABER Figures 3, 5 and 6: the median normalized score over tasks against training frames, one
  line per seed and their mean with a one-standard-deviation band over seeds
  (:func:`median_normalized_curves`, for suites whose scorer normalizes);
* Nichol et al. 2018, Figure 3: the mean over tasks of the *instantaneous* episode score (the
  latest finished episode's, not a running mean) against timesteps, per seed and as a mean with
  its band (:func:`instantaneous_mean_curves`, for suites scored on their own scale);
* SABER's score classes at each reporting point (:func:`classes_by_checkpoint`);
* Nichol et al. 2018, Figure 4: zero-shot and fine-tuning scores of the checkpoints of joint
  training against its progress (:func:`plot_transfer`, from ``benchgen.results.transfer``'s rows).

Each curve is computed on a grid of frame counts from the run's raw episodes, through the same
per-task scoring as ``report`` and ``compare`` (``Run.score``).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from benchgen.results.compare.gather import Run
from benchgen.results.transfer import CURVES
from benchgen.scoring import CLASSES

#: points on the frame grid of a curve
GRID_POINTS = 40


def frame_grid(run: Run, points: int = GRID_POINTS) -> np.ndarray:
    """Evenly spaced frame counts from the first finished episode to the last."""
    ends = np.concatenate([frames for frames, _ in run.series.values()]) if run.series else np.zeros(0)
    if not ends.size:
        return ends
    return np.unique(np.linspace(ends.min(), ends.max(), points).round().astype(np.int64))


def median_normalized_curves(run: Run, scorer, baseline: str | None, grid: np.ndarray) -> dict[int, np.ndarray]:
    """seed -> the median over tasks of the normalized per-task score at each grid point (NaN
    until every normalizable task has an episode)."""
    out = {}
    for seed in run.seeds:
        tasks = sorted(run.tasks(seed))
        values = []
        for g in grid:
            raw = {t: run.score(scorer, t, seed, "score", int(g)) for t in tasks}
            if any(math.isnan(v) for v in raw.values()):
                values.append(math.nan)
                continue
            result = scorer.score(raw, baseline)
            values.append(result["median"] if result.get("n_tasks") else math.nan)
        out[seed] = np.asarray(values, dtype=float)
    return out


def instantaneous_mean_curves(run: Run, grid: np.ndarray) -> dict[int, np.ndarray]:
    """seed -> the mean over tasks of each task's latest finished episode score at each grid
    point (NaN until every task has one; infinite scores are left out of the mean)."""
    out = {}
    for seed in run.seeds:
        tasks = sorted(run.tasks(seed))
        values = []
        for g in grid:
            latest = []
            for t in tasks:
                frames, views = run.series[(t, seed)]
                k = int(np.searchsorted(frames, g, side="right"))
                latest.append(views["score"][k - 1] if k else math.nan)
            finite = [v for v in latest if math.isfinite(v)]
            values.append(float(np.mean(finite)) if finite and not any(math.isnan(v) for v in latest) else math.nan)
        out[seed] = np.asarray(values, dtype=float)
    return out


def classes_by_checkpoint(section: dict, scorer, baseline: str | None) -> dict[str, dict[str, int]]:
    """Reporting point -> SABER class -> tasks, from a report section's per-checkpoint scores."""
    out = {}
    for checkpoint, views in section.get("checkpoints", {}).items():
        result = scorer.score(views["score"], baseline)
        if result.get("classes"):
            out[checkpoint] = dict(result["classes"])
    return out


def plot_seed_curves(grid, curves: dict[int, np.ndarray], title: str, ylabel: str, xlabel: str, path: Path) -> Path:
    """One thin line per seed, their mean and a one-standard-deviation band (SABER's style)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    stack = np.vstack(list(curves.values()))
    for seed, values in curves.items():
        ax.plot(grid, values, lw=0.8, alpha=0.6, label=f"seed {seed}")
    with np.errstate(invalid="ignore"), _quiet_nan_warnings():
        mean = np.nanmean(stack, axis=0)
        std = np.nanstd(stack, axis=0)
    ax.plot(grid, mean, color="black", lw=2, label="mean over seeds")
    if len(curves) > 1:
        ax.fill_between(grid, mean - std, mean + std, color="gray", alpha=0.3, label="+/- 1 std over seeds")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    return _save(fig, ax, title, path)


def plot_classes_by_checkpoint(counts: dict[str, dict[str, int]], title: str, unit: str, path: Path) -> Path:
    """Grouped bars: for each reporting point, the number of tasks in each SABER class."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [n for n, _ in CLASSES]
    fig, ax = plt.subplots(figsize=(7, 4))
    width = 0.8 / max(1, len(counts))
    x = np.arange(len(names))
    for i, (checkpoint, classes) in enumerate(counts.items()):
        ax.bar(x + i * width, [classes.get(n, 0) for n in names], width, label=f"{int(checkpoint):,} {unit}")
    ax.set_xticks(x + width * (len(counts) - 1) / 2, names)
    ax.set_ylabel("tasks")
    return _save(fig, ax, title, path)


def _save(fig, ax, title: str, path: Path) -> Path:
    """Title and legend a figure, write it to ``path`` and close it."""
    import matplotlib.pyplot as plt

    ax.set_title(title)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def plot_transfer(rows: list[dict], unit: str, path: Path) -> Path:
    """Figure 4's four curves (:data:`benchgen.results.transfer.CURVES`) against joint training:
    each row's ``x`` (the joint checkpoint in the budget unit) and curve values, one row per seed
    and checkpoint; the mean over seeds, with a one-standard-deviation band when several seeds
    have the point. Raw scores, as the paper plots them."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = sorted({r["x"] for r in rows})
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for key, label in CURVES.items():
        per_x = {x: [r[key] for r in rows if r["x"] == x and math.isfinite(r[key])] for x in xs}
        x = [p for p in xs if per_x[p]]
        if not x:
            continue
        mean = np.array([np.mean(per_x[p]) for p in x])
        (line,) = ax.plot(x, mean, marker="o", label=label)
        if any(len(per_x[p]) > 1 for p in x):
            std = np.array([np.std(per_x[p]) for p in x])
            ax.fill_between(x, mean - std, mean + std, color=line.get_color(), alpha=0.2)
    seeds = len({r["seed"] for r in rows})
    ax.set_xlabel(f"joint training ({unit})")
    ax.set_ylabel("score" + (f" (mean over {seeds} seeds, +/- 1 std)" if seeds > 1 else ""))
    ax.set_title("Transfer during joint training")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


class _quiet_nan_warnings:
    """numpy warns on all-NaN columns (grid points before every task has an episode)."""

    def __enter__(self):
        import warnings

        self._ctx = warnings.catch_warnings()
        self._ctx.__enter__()
        warnings.simplefilter("ignore", RuntimeWarning)

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)
