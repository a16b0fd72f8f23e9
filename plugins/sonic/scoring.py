"""Sonic scoring (Nichol et al. 2018, the test protocol) and the paper's reference scores.

* Per-level score: mean total reward over **all** episodes of the level's 1M-timestep budget
  (learning while playing), not the last 100 episodes as on Atari.
* Aggregate: mean of the per-level scores (over the 11 test levels for the test protocol).
* Final score: mean of the last 100 episodes of a level (the paper's "final performance").

Sonic scores are not normalized: the benchmark reward is already on a common 0..10,000 scale
(9000 for reaching the end, up to 1000 bonus), so the scorer holds no per-task reference tables
(``Scorer.references`` is empty: scored raw). The paper publishes aggregate scores only (mean ±
std over 3 runs, on the test levels): they are :class:`AggregateReference` objects, a
``ReferenceScores`` with no per-level scores and an ``aggregate`` (and its std) instead, the
suite's reference tables (``SonicSuite.reference_scores``), compared with a run's mean by
:meth:`SonicScorer.score`.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from benchgen.scoring import ReferenceScores, Scorer
from benchgen_sonic.levels import DATA_DIR

#: how many of a level's last episodes the final score averages
FINAL_EPISODES = 100


@dataclass
class AggregateReference(ReferenceScores):
    """A published aggregate (mean over the test levels) without per-level scores."""

    aggregate: float = math.nan
    """Mean of the per-level test scores (the paper's metric)."""
    aggregate_std: float = math.nan
    """Its standard deviation (over 3 runs for agents; over players for humans)."""


def reference_tables() -> list[AggregateReference]:
    """The paper's aggregate test scores (``data/sonic_baselines.csv``)."""
    tables = []
    with (DATA_DIR / "sonic_baselines.csv").open(newline="") as handle:
        for row in csv.DictReader(handle):
            mean, std = float(row["aggregate_test_score"]), float(row["std"])
            tables.append(
                AggregateReference(
                    name=row["algorithm"],
                    scores={},
                    description=f"Nichol et al. 2018: mean score over the 11 test levels, {mean:.1f} ± {std:.1f}",
                    aggregate=mean,
                    aggregate_std=std,
                )
            )
    return tables


class SonicScorer(Scorer):
    """Per-level score = mean of all episodes; aggregate = mean over levels."""

    default_baseline = "human"

    def __init__(self, aggregates: Mapping[str, AggregateReference] | None = None):
        super().__init__(random_scores={}, references={})
        #: the published aggregates a run's mean is compared with, by name
        self.aggregates = dict(aggregates) if aggregates is not None else {t.name: t for t in reference_tables()}

    def baselines(self) -> list[str]:
        """Names accepted by ``--baseline`` (besides a CSV file of per-level scores)."""
        return sorted(self.aggregates)

    def reference(self, baseline: str | None) -> ReferenceScores:
        """A published aggregate by name, or a CSV file of per-level scores (task,score)."""
        baseline = baseline or self.default_baseline
        if baseline in self.aggregates:
            return self.aggregates[baseline]
        return super().reference(baseline)

    def task_score(self, episode_scores: list[float]) -> float:
        """Mean over every episode (the paper's per-level test score); NaN without episodes."""
        return float(np.mean(episode_scores)) if episode_scores else math.nan

    def final_score(self, episode_scores: list[float], last: int = FINAL_EPISODES) -> float:
        """Mean of the last ``last`` episodes (the paper's "final performance")."""
        tail = episode_scores[-last:]
        return float(np.mean(tail)) if tail else math.nan

    def score(self, raw: Mapping[str, float], baseline: str | None = None) -> dict:
        """Aggregate per-level scores (task -> score) and compare with a reference.

        Keys: ``n_tasks``, ``mean`` (the Sonic metric), ``median``, ``std`` (over levels),
        ``per_task`` (the per-level scores, unnormalized), ``raw``, ``baseline`` with
        ``baseline_mean``/``baseline_std`` and ``fraction_of_baseline``, ``references`` (every
        published aggregate), ``normalization`` = ``"none"``, and for the keys benchgen's
        normalized-score reports read, ``per_task_class``/``classes`` (empty: Sonic has no score
        classes) and ``unnormalized`` (empty: every level counts).
        """
        ref = self.reference(baseline)
        values = np.array(list(raw.values()), dtype=float)
        mean = float(values.mean()) if values.size else math.nan
        with np.errstate(invalid="ignore"):  # an infinite score has no finite spread: NaN
            std = float(values.std()) if values.size else math.nan
        ref_mean, ref_std = _reference_aggregate(ref, raw)
        return {
            "n_tasks": int(values.size),
            "mean": mean,
            "median": float(np.median(values)) if values.size else math.nan,
            "std": std,
            "per_task": dict(raw),
            "raw": dict(raw),
            "baseline": ref.name,
            "baseline_mean": ref_mean,
            "baseline_std": ref_std,
            "fraction_of_baseline": mean / ref_mean if ref_mean else math.nan,
            "references": {
                name: {"mean": t.aggregate, "std": t.aggregate_std} for name, t in sorted(self.aggregates.items())
            },
            "normalization": "none",  # Sonic scores share one 0..10,000 scale
            "per_task_class": {},
            "classes": {},
            "unnormalized": {},
        }

    def format_table(self, result: dict) -> str:
        """Text table of :meth:`score` output, for ``benchgen score sonic``."""
        lines = [f"{'level':34} {'score':>9}"]
        for task, value in result["per_task"].items():
            lines.append(f"{task:34} {value:9.1f}")
        lines.append("")
        lines.append(
            f"mean over {result['n_tasks']} levels: {result['mean']:.1f} "
            f"(median {result['median']:.1f}, std over levels {result['std']:.1f})"
        )
        lines.append(
            f"baseline {result['baseline']}: {result['baseline_mean']:.1f} ± {result['baseline_std']:.1f}"
            f" -> {result['fraction_of_baseline'] * 100:.1f}% of it"
        )
        lines.append(
            "published (Nichol et al. 2018, test levels): "
            + ", ".join(f"{name} {ref['mean']:.1f} ± {ref['std']:.1f}" for name, ref in result["references"].items())
        )
        return "\n".join(lines)


def _reference_aggregate(ref: ReferenceScores, raw: Mapping[str, float]) -> tuple[float, float]:
    """(mean, std) of a reference: its published aggregate, or the mean of its per-level scores
    over the levels in ``raw`` (a user's CSV of per-level scores)."""
    if isinstance(ref, AggregateReference):
        return ref.aggregate, ref.aggregate_std
    common = [ref.scores[t] for t in raw if t in ref.scores]
    return (float(np.mean(common)) if common else math.nan), math.nan
