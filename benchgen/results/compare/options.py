"""The settings of a comparison, written once: ``benchgen compare``'s options and their defaults,
``benchgen report`` on a folder of runs and :func:`benchgen.results.compare.build_comparison`
all read them from here. Importing this module is cheap (the CLI builds its parser from it)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CompareOptions:
    """The settings of a comparison and their defaults, the one place they are written
    (``benchgen compare``'s options, ``benchgen report`` on a folder of runs, the Python API)."""

    baseline: str | None = None
    """Normalize against: ``raw``; a baseline or reference agent name, or ``NAME@CHECKPOINT`` such
    as ``NAME@10M`` (SABER eq. 2); or a task,score CSV file. Default (None): the suite's
    default baseline, raw if it has none."""
    normalization: str = "reference"
    """How scores are normalized: ``reference`` (``(a - r) / |w - r|`` against ``baseline``: SABER
    eq. 1/2), ``random`` (Bellemare et al. 2013, 4.1.1: ``a / |r|``), ``baseline-set`` (Bellemare et al. 2013, 4.1.2: the per-task range of the tables in
    ``baseline_set``) or ``inter-algorithm`` (4.1.3: the range of the agents compared)."""
    baseline_set: tuple[str, ...] = ()
    """The tables whose per-task range ``baseline-set`` normalization uses: reference table names
    (``benchgen references SUITE``; ``--reference`` ones too) and ``random`` (the suite's random scores)."""
    references: tuple[str, ...] = ()
    """Reference tables added as rows and usable as baselines, each ``NAME=CSV`` (task,score or
    task,frames_10M,...), or the name of one of the suite's shipped tables (``benchgen references
    SUITE``), shown even with ``--no-references``."""
    phase: str = "auto"
    """Phase compared; auto: fine-tuning, else training, else zero-shot."""
    at: int | None = None
    """Compare per-task scores at this checkpoint (budget unit) instead of the end."""
    view: str = "score"
    """Score view of the aggregates (``score`` = final; a suite's time views, see ``Suite.score_views``)."""
    reps: int = 2000
    """Bootstrap replications."""
    ci: float = 0.95
    """Confidence interval size."""
    seed: int = 0
    """Seed of the bootstrap (intervals are reproducible)."""
    force: bool = False
    """Compare runs whose protocols differ (every output is then labelled)."""
    alpha: float = 0.01
    """Significance level of the per-task Welch tests (Bellemare et al. 2013, section 4.3: 99%
    confidence)."""
    pairs: tuple[tuple[str, str], ...] | None = None
    """Agent pairs compared pairwise, each ``X:Y`` (default, None: every pair)."""
    curve_points: int = 20
    """Frame counts on the learning-curve grid."""
    show_references: bool = True
    """Show the suite's published reference agents as rows (``--no-references`` leaves them out)."""


DEFAULTS = CompareOptions()
