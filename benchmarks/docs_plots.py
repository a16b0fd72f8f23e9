"""Drawing and fingerprint helpers shared by the docs' generated pages (``results_pages.py``,
``paper_figures.py``): small multiples of learning curves, score bars beside the published ones,
byte-stable PNGs, and the SHA-256 of the data files a page is drawn from."""

from __future__ import annotations

import argparse
import hashlib
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
#: episodes in the running mean of a learning curve (fewer when a run has few)
WINDOW = 20
DPI = 72
#: a phase with fewer episodes is drawn as its episodes alone, without a running mean
FEW = 15


def running_mean(values: np.ndarray) -> tuple[np.ndarray, int]:
    """The mean of each run of consecutive episodes, and how many make one."""
    window = max(1, min(WINDOW, len(values) // 5))
    return np.convolve(values, np.ones(window) / window, mode="valid"), window


@dataclass
class Panel:
    """One subplot: curves (label, frames, scores), horizontal lines (label, value, style)."""

    title: str
    curves: list[tuple[str, np.ndarray, np.ndarray]]
    lines: list[tuple[str, float, str]] = field(default_factory=list)
    points: list[tuple[str, float, float]] = field(default_factory=list)
    """Scores marked at a frame count (label, frames, score): a run's final score."""


def draw_panels(panels: list[Panel], path: Path, ncols: int = 3, xlabel: str = "frames played") -> None:
    """Small multiples of learning curves: each episode as a faint dot, its running mean as a line,
    the published and final numbers as dashed lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import EngFormatter

    ncols = min(ncols, len(panels))
    nrows = -(-len(panels) // ncols)
    width, height = (4.2, 3.0) if ncols > 1 else (6.5, 4.0)
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False)
    for ax, panel in zip(axes.flat, panels):
        for i, (label, frames, scores) in enumerate(panel.curves):
            color = f"C{i}"
            ax.plot(frames, scores, ".", ms=2, alpha=0.3, color=color)
            if 0 < len(scores) < FEW:
                ax.plot(frames, scores, "o", ms=4, color=color, label=f"{label} ({len(scores)} episodes)")
            elif len(scores):
                mean, window = running_mean(scores)
                ax.plot(frames[window - 1 :], mean, color=color, lw=1.5, label=f"{label} (mean of {window})")
        for j, (label, value, style) in enumerate(panel.lines):
            if value is not None and np.isfinite(value):
                ax.axhline(value, ls=style, lw=1, color=f"C{len(panel.curves) + j}", label=label)
        for k, (label, x, y) in enumerate(panel.points):
            if y is not None and np.isfinite(y):
                ax.plot([x], [y], "D", ms=5, color=f"C{k}", mec="black", label=label)
        ax.xaxis.set_major_formatter(EngFormatter(sep=""))
        ax.set_title(panel.title, fontsize=9)
        ax.set_xlabel(xlabel, fontsize=8)
        ax.set_ylabel("episode return", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=6)
    for ax in list(axes.flat)[len(panels) :]:
        ax.axis("off")
    save(fig, path)


def draw_bars(rows: list[tuple[str, float | None, float | None]], path: Path, title: str) -> None:
    """Each run's score beside the published one, as horizontal bar pairs on a symmetric log scale
    (the games' scales differ by orders of magnitude; a score of 0 stays visible as no bar)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 0.32 * len(rows) + 1.2))
    y = np.arange(len(rows))[::-1]
    ours = [np.nan if v is None else v for _, v, _ in rows]
    theirs = [np.nan if v is None else v for _, _, v in rows]
    ax.barh(y + 0.2, ours, 0.4, label="benchgen")
    ax.barh(y - 0.2, theirs, 0.4, label="published")
    ax.set_yticks(y, [label for label, _, _ in rows], fontsize=7)
    ax.set_xscale("symlog", linthresh=1)
    ax.set_xlabel("raw score (symmetric log scale)", fontsize=8)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    save(fig, path)


def save(fig, path: Path) -> None:
    """Write a figure as a 256-colour PNG (about half the bytes of matplotlib's RGBA) with no
    timestamp or version in it, so that the same figure gives the same bytes; close it."""
    import io

    import matplotlib.pyplot as plt
    from PIL import Image

    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    plt.close(fig)
    buffer.seek(0)
    Image.open(buffer).convert("RGB").quantize(colors=256).save(path, format="PNG")


def fingerprint(paths: list[Path]) -> str:
    """SHA-256 over the data files' paths (relative to the repository) and bytes: what the images
    are drawn from. Scripts are left out, so that an edit of a comment does not make a page stale;
    the page's text, which ``--check`` rebuilds in full, shows any change of its numbers."""
    digest = hashlib.sha256()
    for path in sorted(set(paths)):
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def page_main(
    description: str, out: Path, check: Callable[[Path], list[str]], write: Callable[[Path], None], argv=None
) -> int:
    """The command line both page scripts share: ``--check`` reports what is stale (exit 1) and
    draws nothing; otherwise the pages are written under ``--out``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--check", action="store_true", help="fail if a committed page is stale; draw nothing")
    parser.add_argument("--out", type=Path, default=out)
    args = parser.parse_args(argv)
    if args.check:
        problems = check(args.out)
        for problem in problems:
            print(problem, file=sys.stderr)
        return 1 if problems else 0
    write(args.out)
    return 0
