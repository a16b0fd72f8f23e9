"""PNG plots of a comparison, drawn with rliable's plot utilities where it has one.

Every figure of a forced comparison carries the FORCED COMPARISON label in red.
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import numpy as np

from benchgen.results.compare.render import metric_title
from benchgen.scoring import CLASSES

PAIR_SEP = " || "


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _colors(result: dict) -> dict[str, tuple]:
    import seaborn as sns

    keys = list(result["labels"]) + [f"{n} (ref)" for n in result["references"]]
    return dict(zip(keys, sns.color_palette("colorblind", n_colors=max(len(keys), 1))))


def _finish(fig, result: dict, path: Path, rect_top: float = 0.92, dpi: int = 90, tight: bool = True) -> Path:
    plt = _plt()
    if result["forced"]:
        where = {} if tight else {"y": 1 + 0.3 / fig.get_figheight(), "va": "bottom"}  # above the panels
        fig.suptitle(
            "\n".join(textwrap.wrap(result["forced_label"], 110)), color="red", fontsize=9, fontweight="bold", **where
        )
    if tight:
        try:
            fig.tight_layout(rect=(0, 0, 1, rect_top if result["forced"] else 1))
        except Exception:  # noqa: BLE001 - rliable's twin axes sometimes defeat tight_layout
            pass
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    return path


def _ci(e: dict) -> tuple[float, float]:
    lo, hi = e.get("ci_low"), e.get("ci_high")
    return (e["value"], e["value"]) if lo is None or math.isnan(lo) else (lo, hi)


def plot_aggregates(result: dict, path: Path) -> Path:
    from rliable import plot_utils

    metrics = result["metrics"]
    points, intervals = {}, {}
    for lab, a in result["agents"].items():
        points[lab] = np.array([a["aggregates"][m]["value"] for m in metrics])
        intervals[lab] = np.array([_ci(a["aggregates"][m]) for m in metrics]).T
    for name, r in result["references"].items():
        if r["aggregates"]:
            vals = np.array([r["aggregates"][m] for m in metrics])
            points[f"{name} (ref)"], intervals[f"{name} (ref)"] = vals, np.vstack([vals, vals])
    fig, _ = plot_utils.plot_interval_estimates(
        points,
        intervals,
        metric_names=[metric_title(result, m) for m in metrics],
        algorithms=list(points),
        colors=_colors(result),
        xlabel=f"normalized score (1 = {result['baseline']})" if result["normalized"] else "raw score",
        subfigure_width=3.6,
        row_height=0.6,
        xlabel_y_coordinate=-0.75 / (0.6 * len(points)),
    )
    return _finish(fig, result, path, tight=False)  # rliable lays the panels out itself


def plot_improvement(result: dict, path: Path) -> Path:
    from rliable import plot_utils

    plt = _plt()
    est, cis = {}, {}
    for p in result["probability_of_improvement"]:
        key = f"{p['x']}{PAIR_SEP}{p['y']}"
        est[key] = p["value"]
        cis[key] = np.array(_ci(p))
    fig, ax = plt.subplots(figsize=(6, 0.6 * len(est) + 1.6))
    plot_utils.plot_probability_of_improvement(
        est, cis, pair_separator=PAIR_SEP, ax=ax, xticks=[0, 0.25, 0.5, 0.75, 1.0]
    )
    ax.set_xlim(0, 1)
    return _finish(fig, result, path)


def plot_profiles(result: dict, path: Path) -> Path:
    from rliable import plot_utils

    plt = _plt()
    prof = result["performance_profile"]
    taus = np.array(prof["tau"])
    profiles = {lab: np.array(p["profile"]) for lab, p in prof["agents"].items()}
    cis = {
        lab: (np.array(p["ci_low"]), np.array(p["ci_high"]))
        for lab, p in prof["agents"].items()
        if p["ci_low"] is not None
    }
    styles = {lab: "solid" for lab in profiles}
    for name, p in prof["references"].items():
        runs = prof.get("published_runs", {}).get(name)
        profiles[f"{name} (ref)"] = np.array(runs["profile"] if runs else p)
        styles[f"{name} (ref)"] = "dashed"
        if runs and runs["ci_low"] is not None:  # the published runs one by one: a profile with its band
            cis[f"{name} (ref)"] = (np.array(runs["ci_low"]), np.array(runs["ci_high"]))
    fig, ax = plt.subplots(figsize=(8, 4.5))
    xlabel = rf"normalized score $\tau$ (1 = {result['baseline']})" if result["normalized"] else r"raw score $\tau$"
    plot_utils.plot_performance_profiles(
        profiles,
        taus,
        performance_profile_cis=cis,
        ax=ax,
        colors=_colors(result),
        linestyles=styles,
        xlabel=xlabel,
        ylabel=r"fraction of (run, task) scores > $\tau$",
        labelsize="large",
        ticklabelsize="medium",
    )
    ax.legend(fontsize=8, loc="upper right")
    ax.set_title("Performance profiles (score distributions)")
    return _finish(fig, result, path)


def plot_classes(result: dict, path: Path) -> Path:
    plt = _plt()
    names = [n for n, _ in CLASSES]
    series = {lab: a["classes"] for lab, a in result["agents"].items() if a["classes"]}
    series.update({f"{n} (ref)": r["classes"] for n, r in result["references"].items() if r["classes"]})
    colors = _colors(result)
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(names) + 0.4 * len(series)), 4))
    width = 0.8 / max(len(series), 1)
    x = np.arange(len(names))
    for i, (lab, counts) in enumerate(series.items()):
        ax.bar(
            x + (i - (len(series) - 1) / 2) * width, [counts[n] for n in names], width, label=lab, color=colors.get(lab)
        )
    ax.set_xticks(x, [f"{n}\n(< {u * 100:g}%)" if u != math.inf else f"{n}\n(>= 100%)" for n, u in CLASSES])
    ax.set_ylabel("tasks")
    ax.yaxis.set_major_locator(plt.MaxNLocator(integer=True))
    ax.set_title(f"SABER score classes vs {result['baseline']}")
    ax.legend(fontsize=8)
    return _finish(fig, result, path)


def _frames_axis(frames: np.ndarray, unit: str) -> tuple[np.ndarray, str]:
    if frames.max() >= 1e6:
        return frames / 1e6, "emulator frames (millions)"
    return frames, "emulator frames"


def plot_curve_aggregate(result: dict, path: Path) -> Path:
    from rliable import plot_utils

    plt = _plt()
    cur = result["curves"]
    x, xlabel = _frames_axis(np.array(cur["frames"]), result["budget_unit"])
    est = {lab: np.array(c["value"]) for lab, c in cur["aggregate"].items()}
    cis = {lab: (np.array(c["ci_low"]), np.array(c["ci_high"])) for lab, c in cur["aggregate"].items()}
    colors = _colors(result)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ylabel = f"IQM normalized score (1 = {result['baseline']})" if result["normalized"] else "IQM raw score"
    plot_utils.plot_sample_efficiency_curve(
        x,
        est,
        cis,
        algorithms=list(est),
        colors=colors,
        ax=ax,
        xlabel=xlabel,
        ylabel=ylabel,
        labelsize="large",
        ticklabelsize="medium",
    )
    scale = x[-1] / cur["frames"][-1]
    for name, marks in cur["references"].items():
        ax.scatter(
            [m["frames"] * scale for m in marks],
            [m["iqm"] for m in marks],
            marker="*",
            s=120,
            color=colors.get(f"{name} (ref)"),
            label=f"{name} (ref)",
            zorder=5,
        )
    ax.legend(fontsize=8)
    ax.set_title(f"Learning curves: IQM over tasks and seeds, {result['statistics']['ci'] * 100:g}% bootstrap band")
    return _finish(fig, result, path)


def plot_curve_tasks(result: dict, path: Path, max_tasks: int = 64) -> Path:
    plt = _plt()
    cur = result["curves"]
    tasks = result["tasks"][:max_tasks]
    x, xlabel = _frames_axis(np.array(cur["frames"]), result["budget_unit"])
    scale = x[-1] / cur["frames"][-1]
    cols = min(4, len(tasks))
    nrows = math.ceil(len(tasks) / cols)
    # no layout engine and shared x ticks: with 61 tasks, matplotlib's text layout dominates the time
    top_in, bottom_in, width = 0.35, 0.6, 3.4 * cols + 0.8
    height = 2.2 * nrows + top_in + bottom_in
    fig, axes = plt.subplots(nrows, cols, figsize=(width, height), squeeze=False, sharex=True)
    fig.subplots_adjust(
        left=0.8 / width, right=0.98, bottom=bottom_in / height, top=1 - top_in / height, hspace=0.35, wspace=0.28
    )
    colors = _colors(result)
    for ax, task in zip(axes.ravel(), tasks):
        for lab, per in cur["tasks"].items():
            c = per[task]
            ax.plot(x, c["mean"], color=colors[lab], label=lab, lw=1.5, marker="o", ms=2)
            ax.fill_between(
                x, np.array(c["ci_low"], dtype=float), np.array(c["ci_high"], dtype=float), color=colors[lab], alpha=0.2
            )
        for name, marks in cur["references"].items():
            pts = [
                (m["frames"] * scale, m["tasks"][task])
                for m in marks
                if task in m["tasks"] and math.isfinite(m["tasks"][task])
            ]
            if pts:
                ax.scatter(
                    *zip(*pts), marker="*", s=60, color=colors.get(f"{name} (ref)"), label=f"{name} (ref)", zorder=5
                )
        ax.set_title(task, fontsize=9, pad=2)
        ax.tick_params(labelsize=7)
        ax.yaxis.set_major_locator(plt.MaxNLocator(4))
    for ax in axes.ravel()[len(tasks) :]:
        ax.axis("off")
    axes.ravel()[0].legend(fontsize=7)
    fig.supxlabel(xlabel, fontsize=9)
    fig.supylabel(f"raw score (mean over seeds, {result['statistics']['ci'] * 100:g}% t-interval)", fontsize=9)
    return _finish(fig, result, path, dpi=90 if len(tasks) <= 16 else 60, tight=False)


def write_plots(result: dict, out_dir: Path) -> list[Path]:
    """Every plot that applies to the comparison, as PNG files in ``out_dir``."""
    out_dir = Path(out_dir)
    paths = [plot_aggregates(result, out_dir / "aggregates.png")]
    if result["probability_of_improvement"]:
        paths.append(plot_improvement(result, out_dir / "probability_of_improvement.png"))
    paths.append(plot_profiles(result, out_dir / "performance_profiles.png"))
    if result["normalized"] and any(a["classes"] for a in result["agents"].values()):
        paths.append(plot_classes(result, out_dir / "classes.png"))
    paths.append(plot_curve_aggregate(result, out_dir / "learning_curves.png"))
    paths.append(plot_curve_tasks(result, out_dir / "learning_curves_tasks.png"))
    return paths
