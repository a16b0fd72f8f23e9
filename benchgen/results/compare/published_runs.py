"""Published runs one by one: where a reference table carries the per-run scores its per-task
means summarize (``ReferenceScores.runs``), a comparison places each run of each agent among them
and treats them as a proper agent with runs.

- Per task, each run's percentile among the published runs (the mid-rank percentile,
  ``scipy.stats.percentileofscore(kind="mean")``: ties count one half), on raw scores (any
  normalization is monotonic per task, so the percentile is the same either way).
- The published runs' aggregates (median, IQM, mean, optimality gap) with rliable's stratified-
  bootstrap intervals, over the compared tasks the table covers.
- P(agent > published) with a stratified independent bootstrap interval (rliable), per agent.
- The published runs' performance profile with its bootstrap band (rliable).

A (runs x tasks) matrix needs as many runs on every task: where a table has more runs on some
tasks, the first ``min`` of each task's are used for the matrix (said in the output); the
percentiles use all of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.stats

from benchgen.results.compare import stats


@dataclass
class PublishedRuns:
    """One reference table's runs on the compared tasks."""

    name: str
    description: str
    source: str
    raw: dict[str, np.ndarray]
    """task -> every published run's raw score (the compared tasks the table has runs on)"""
    tasks: list[str]
    """the aggregate tasks the table covers, in the comparison's order"""
    matrix: np.ndarray
    """(k x len(tasks)) normalized scores, k = the fewest runs on any of ``tasks``"""


def same_protocol(tables: dict, protocols: list[dict]) -> tuple[dict, list[str]]:
    """The tables whose ``protocol`` values every run recorded alike (a table's runs are placed only
    among runs of the protocol they were measured under: runs of a short-budget protocol say
    nothing about a run of a long one), and the names of the others."""
    placed, elsewhere = {}, []
    for name, table in tables.items():
        if all(all(p.get(k) == v for k, v in table.protocol.items()) for p in protocols):
            placed[name] = table
        else:
            elsewhere.append(name)
    return placed, elsewhere


def gather(tables: dict, tasks: list[str], agg_tasks: list[str], norm) -> dict[str, PublishedRuns]:
    """The tables with per-run scores on any compared task, their runs normalized like the agents'."""
    out = {}
    for name, table in tables.items():
        runs = getattr(table, "runs", None) or {}
        raw = {t: np.asarray(runs[t], dtype=float) for t in tasks if len(runs.get(t, ())) > 0}
        if not raw:
            continue
        covered = [t for t in agg_tasks if t in raw]
        k = min((len(raw[t]) for t in covered), default=0)
        matrix = norm.matrix(np.stack([raw[t][:k] for t in covered], axis=1), covered) if covered else np.zeros((0, 0))
        keep = [j for j in range(len(covered)) if not np.isnan(matrix[:, j]).any()]
        covered, matrix = [covered[j] for j in keep], matrix[:, keep] if keep else np.zeros((0, 0))
        out[name] = PublishedRuns(name, table.description, getattr(table, "source", ""), raw, covered, matrix)
    return out


def section(
    published: dict[str, PublishedRuns],
    raw_rows: dict[str, np.ndarray],
    normalized: dict[str, np.ndarray],
    tasks: list[str],
    agg_tasks: list[str],
    row_names: dict[str, list[str]],
    taus: np.ndarray,
    metric_names,
    reps: int,
    ci: float,
    seed: int,
    at_or_above: bool = False,
) -> dict[str, Any]:
    """The comparison's ``published_runs`` section (module docstring). ``raw_rows``: agent ->
    (runs x ``tasks``) raw scores of the compared view; ``normalized``: agent -> (runs x
    ``agg_tasks``) normalized scores, as the comparison computed them."""
    out: dict[str, Any] = {}
    for name, p in published.items():
        entry: dict[str, Any] = {
            "description": p.description,
            "source": p.source,
            "runs_per_task": {t: int(len(v)) for t, v in p.raw.items()},
            "aggregate_tasks": list(p.tasks),
            "matrix_runs": int(p.matrix.shape[0]),
            "percentiles": {},
            "aggregates": {},
            "agents_on_these_tasks": {},
            "improvement": {},
            "profile": None,
        }
        for lab, matrix in raw_rows.items():
            entry["percentiles"][lab] = {
                t: [float(scipy.stats.percentileofscore(p.raw[t], x, kind="mean")) for x in matrix[:, j]]
                for j, t in enumerate(tasks)
                if t in p.raw
            }
            entry["percentiles"][lab]["rows"] = list(row_names.get(lab, []))
        if p.tasks and p.matrix.shape[0] > 0:
            idx = [agg_tasks.index(t) for t in p.tasks]
            key = f"published:{name}"
            entry["aggregates"] = {
                m: e.as_dict() for m, e in stats.aggregates(p.matrix, metric_names, reps, ci, seed, key).items()
            }
            if len(p.tasks) != len(agg_tasks):  # the agents' own aggregates cover other tasks: these are on the same
                entry["agents_on_these_tasks"] = {
                    lab: {
                        m: e.as_dict()
                        for m, e in stats.aggregates(m_[:, idx], metric_names, reps, ci, seed, f"{lab}@{name}").items()
                    }
                    for lab, m_ in normalized.items()
                }
            entry["improvement"] = {
                lab: stats.improvement(m_[:, idx], p.matrix, reps, ci, seed, f"{lab}>{name}").as_dict()
                for lab, m_ in normalized.items()
            }
            entry["profile"] = {
                k: (None if v is None else [float(x) for x in v])
                for k, v in stats.performance_profile(p.matrix, taus, reps, ci, seed, key, at_or_above).items()
            }
        out[name] = entry
    return out
