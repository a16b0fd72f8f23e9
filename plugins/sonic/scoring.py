"""Sonic scoring (Nichol et al. 2018, the test protocol) and the paper's reference tables.

* Per-level score: mean total reward over **all** episodes of the level's 1M-timestep budget
  (learning while playing), not the last 100 episodes as on Atari.
* Aggregate: mean of the per-level scores (over the 11 test levels for the test protocol).
* Final score: mean of the last 100 episodes of a level, shown by ``benchgen report`` beside
  the score. The paper prints a "Final Score" column without saying how many episodes it covers
  (:mod:`benchgen_sonic.paper`); the 100 is benchgen's choice.

Sonic scores are not normalized: the benchmark reward is already on a common 0..10,000 scale
(9000 for reaching the end, up to 1000 bonus), so the scorer holds no normalization tables
(``Scorer.references`` is empty: scored raw). The paper prints per-level tables and their
aggregates (Tables 1-9, shipped as data: :mod:`benchgen_sonic.paper`); each is an
:class:`AggregateReference`, a ``ReferenceScores`` with the per-level scores, their published
standard deviations (``spread``) and the printed aggregate. They are the suite's reference
tables (``SonicSuite.reference_scores``, ``--baseline``, ``benchgen references sonic``):

* ``rainbow``, ``jerk``, ``ppo``, ``ppo_joint``, ``rainbow_joint``, ``human``: the score on the 11
  test levels (Tables 2-7), aggregate and its std from Table 1;
* ``rainbow_final``, ``jerk_final``, ``ppo_final``, ``ppo_joint_final``, ``rainbow_joint_final``:
  the "Final Score" column of Tables 2-6 on the test levels, with its Aggregate row;
* ``rainbow_joint_train``, ``ppo_joint_train``: the jointly trained models on the 47 training
  levels, last 10 episodes (Tables 8 and 9), with their Aggregate rows.

:func:`published_aggregates` recomputes every printed aggregate from the per-level rows through
:class:`SonicScorer` (``benchgen selfcheck sonic``).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass

import numpy as np

from benchgen.scoring import PublishedAggregate, ReferenceScores, Scorer
from benchgen_sonic import paper
from benchgen_sonic.levels import split_tasks

#: how many of a level's last episodes the final score averages (benchgen's choice: the paper does
#: not say how many episodes its test tables' "Final Score" covers)
FINAL_EPISODES = 100

#: the paper's settings for the agents' tables (Sections 3.4-3.5); the human table has none: the
#: paper does not say how its players' games were run
PAPER_PROTOCOL = {"frame_skip": 4, "sticky_prob": 0.25, "max_timesteps": 4500}

#: printed aggregates that differ from the mean of the printed per-level numbers by more than half
#: of the printed precision, with the reason: (table, algorithm, quantity) -> why
KNOWN_DISCREPANCIES: dict[tuple[str, str, str], str] = {
    ("Table 1", "rainbow", "score"): (
        "Table 2's per-level scores average 2748.6545, 0.0545 above the printed 2748.6; being rounded to 0.1 "
        "themselves, their mean may be 0.05 off the authors' unrounded mean: within rounding"
    ),
}


@dataclass
class AggregateReference(ReferenceScores):
    """A table of the paper: per-level scores where it prints them (none for Table 1's
    aggregates) and the aggregate it prints."""

    aggregate: float = math.nan
    """The printed mean of the per-level values (over the 11 test levels, or the 47 training
    levels of Tables 8-9)."""
    aggregate_std: float = math.nan
    """Its printed ``±``: over three runs (Table 8) or two (Table 9), as their captions say; Tables
    1-7 do not say, most likely over the three runs (:mod:`benchgen_sonic.paper`)."""
    quantity: str = "score"
    """``score``, ``final_score`` or ``final_performance`` (:mod:`benchgen_sonic.paper`)."""
    levels: str = "test"
    """``test`` or ``train``: the levels the table covers."""


def _describe(algorithm: str, quantity: str, levels: str, aggregate: float, std: float) -> str:
    who = "humans (one hour per level)" if algorithm == "human" else algorithm
    what = {
        "score": "mean score over all episodes",
        "final_score": '"Final Score" column (end of the budget; episode count not stated)',
        "final_performance": "joint model, last 10 episodes",
    }[quantity]
    count = len(split_tasks(levels))
    return f"{paper.PAPER}: {who}, {what}; mean over the {count} {levels} levels {aggregate:.1f} ± {std:.1f}"


def reference_tables() -> list[AggregateReference]:
    """Table 1 as printed: each baseline's aggregate test score, without per-level scores (those
    are in :func:`paper_tables`, which carry the same aggregates)."""
    return [
        AggregateReference(
            name=agg.algorithm,
            scores={},
            description=_describe(agg.algorithm, agg.quantity, agg.levels, agg.value, agg.std),
            aggregate=agg.value,
            aggregate_std=agg.std,
            source=f"{paper.PAPER}, Table 1",
            protocol={} if agg.algorithm == "human" else dict(PAPER_PROTOCOL),
        )
        for agg in paper.printed_aggregates()
        if agg.table == "Table 1"
    ]


def paper_tables(tasks: Collection[str] | None = None) -> list[AggregateReference]:
    """The paper's per-level tables (Tables 2-9) as reference tables, each with the aggregate it
    prints (Table 1's for the test scores). ``tasks``: keep only these levels (a suite built on
    other levels); the aggregates stay the paper's."""
    rows: dict[str, list[paper.LevelRow]] = {}
    for row in paper.level_rows():
        rows.setdefault(paper.table_name(row.algorithm, row.quantity), []).append(row)
    printed = {
        paper.table_name(agg.algorithm, agg.quantity): agg
        for agg in paper.printed_aggregates()
        if agg.table != "Table 1"
    }
    table1 = {agg.algorithm: agg for agg in paper.printed_aggregates() if agg.table == "Table 1"}
    tables = []
    for name, members in rows.items():
        first = members[0]
        agg = table1[first.algorithm] if first.quantity == "score" else printed[name]
        kept = [row for row in members if tasks is None or row.task in tasks]
        source = f"{paper.PAPER}, {first.table}" + (", aggregate Table 1" if first.quantity == "score" else "")
        tables.append(
            AggregateReference(
                name=name,
                scores={row.task: row.value for row in kept},
                description=_describe(first.algorithm, first.quantity, first.levels, agg.value, agg.std),
                aggregate=agg.value,
                aggregate_std=agg.std,
                source=source,
                protocol={} if first.algorithm == "human" else dict(PAPER_PROTOCOL),
                spread={row.task: row.std for row in kept},
                quantity=first.quantity,
                levels=first.levels,
            )
        )
    return tables


def published_aggregates() -> list[PublishedAggregate]:
    """Every aggregate the paper prints, recomputed as the mean of its table's per-level values
    by :meth:`SonicScorer.score`: Table 1 (the test scores of Tables 2-7) and the Aggregate rows of
    the final scores (Tables 2-6) and of the training levels (Tables 8-9). The Aggregate score rows
    of Tables 2-7 repeat Table 1 and are not listed twice. The ``±`` is not recomputed: it is
    taken over runs, whose per-level scores the paper does not print."""
    tables = {table.name: table for table in paper_tables()}
    scorer = SonicScorer(tables)
    out = []
    for agg in paper.printed_aggregates():
        if agg.quantity == "score" and agg.table != "Table 1":
            continue
        table = tables[paper.table_name(agg.algorithm, agg.quantity)]
        recomputed = scorer.score(table.scores, baseline=table.name)["mean"]
        count = len(table.scores)
        out.append(
            PublishedAggregate(
                source=f"{paper.PAPER}, {agg.table}",
                quantity=f"{agg.algorithm}: mean {agg.quantity.replace('_', ' ')} over the {count} {agg.levels} levels",
                published=agg.value,
                recomputed=recomputed,
                precision=agg.precision,
                known_discrepancy=KNOWN_DISCREPANCIES.get((agg.table, agg.algorithm, agg.quantity), ""),
            )
        )
    return out


class SonicScorer(Scorer):
    """Per-level score = mean of all episodes; aggregate = mean over levels."""

    default_baseline = "human"

    def __init__(self, aggregates: Mapping[str, ReferenceScores] | None = None):
        super().__init__(random_scores={}, references={})
        #: the paper's tables a run is compared with (``--baseline``), by name
        self.aggregates = dict(aggregates) if aggregates is not None else {t.name: t for t in paper_tables()}

    def baselines(self) -> list[str]:
        """Names accepted by ``--baseline`` (besides a CSV file of per-level scores)."""
        return sorted(self.aggregates)

    def reference(self, baseline: str | None) -> ReferenceScores:
        """One of the paper's tables by name, or a CSV file of per-level scores (task,score)."""
        baseline = baseline or self.default_baseline
        if baseline in self.aggregates:
            return self.aggregates[baseline]
        return super().reference(baseline)

    def task_score(self, episode_scores: list[float]) -> float:
        """Mean over every episode (the paper's per-level test score); NaN without episodes."""
        return float(np.mean(episode_scores)) if episode_scores else math.nan

    def final_score(self, episode_scores: list[float], last: int = FINAL_EPISODES) -> float:
        """Mean of the last ``last`` episodes (shown by ``benchgen report``; the count is benchgen's
        choice, see :data:`FINAL_EPISODES`); NaN without episodes."""
        tail = episode_scores[-last:]
        return float(np.mean(tail)) if tail else math.nan

    def score(self, raw: Mapping[str, float], baseline: str | None = None) -> dict:
        """Aggregate per-level scores (task -> score) and compare with a reference.

        Keys: ``n_tasks``, ``mean`` (the Sonic metric), ``median``, ``std`` (over levels),
        ``per_task`` (the per-level scores, unnormalized), ``raw``, ``baseline`` with
        ``baseline_mean``/``baseline_std``, ``baseline_basis`` (what the baseline number is) and
        ``fraction_of_baseline``, ``references`` (every printed aggregate of the paper's tables),
        ``normalization`` = ``"none"``, and for the keys benchgen's normalized-score reports read,
        ``per_task_class``/``classes`` (empty: Sonic has no score classes) and ``unnormalized``
        (empty: every level counts).

        The baseline is the table's printed aggregate when the scores cover exactly its levels, or
        none of them (a mean of other levels, e.g. a quick run); when they share only some levels
        with it, it is the table's mean over those shared levels (no std), and
        ``fraction_of_baseline`` compares the scores' mean over the same levels.
        """
        ref = self.reference(baseline)
        values = np.array(list(raw.values()), dtype=float)
        mean = float(values.mean()) if values.size else math.nan
        with np.errstate(invalid="ignore"):  # an infinite score has no finite spread: NaN
            std = float(values.std()) if values.size else math.nan
        ref_mean, ref_std, shared, basis = _reference_aggregate(ref, raw)
        own_mean = float(np.mean([raw[t] for t in shared])) if shared else mean
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
            "baseline_basis": basis,
            "fraction_of_baseline": own_mean / ref_mean if ref_mean else math.nan,
            "references": {
                name: {
                    "mean": t.aggregate,
                    "std": t.aggregate_std,
                    "quantity": t.quantity,
                    "levels": t.levels,
                    "source": t.source,
                }
                for name, t in sorted(self.aggregates.items())
                if isinstance(t, AggregateReference)
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
        spread = "" if math.isnan(result["baseline_std"]) else f" ± {result['baseline_std']:.1f}"
        lines.append(
            f"baseline {result['baseline']} ({result['baseline_basis']}): {result['baseline_mean']:.1f}{spread}"
            f" -> {result['fraction_of_baseline'] * 100:.1f}% of it"
        )
        test_scores = {
            name: ref
            for name, ref in result["references"].items()
            if (ref["quantity"], ref["levels"]) == ("score", "test")
        }
        lines.append(
            f"published ({paper.PAPER}, Table 1, mean score over the 11 test levels): "
            + ", ".join(f"{name} {ref['mean']:.1f} ± {ref['std']:.1f}" for name, ref in test_scores.items())
        )
        return "\n".join(lines)


def _reference_aggregate(ref: ReferenceScores, raw: Mapping[str, float]) -> tuple[float, float, list[str], str]:
    """(mean, std, shared levels, what it is) of the baseline a run is compared with: the table's
    printed aggregate when ``raw`` covers exactly its levels or none of them, else the mean of its
    per-level scores over the levels it shares with ``raw`` (a user's CSV has no aggregate: always
    that mean)."""
    shared = [t for t in raw if t in ref.scores]
    printed = ref.aggregate if ref.aggregate is not None and not math.isnan(ref.aggregate) else None
    if printed is not None and (not shared or set(raw) == set(ref.scores)):
        std = math.nan if ref.aggregate_std is None else ref.aggregate_std
        return printed, std, shared, f"printed aggregate, {ref.source or 'published'}"
    mean = float(np.mean([ref.scores[t] for t in shared])) if shared else math.nan
    return mean, math.nan, shared, f"its mean over the {len(shared)} levels it shares with these scores"
