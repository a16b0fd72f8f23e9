"""The summaries of a learning curve that Machado et al. 2018 (section 3, "Summarizing Learning
Performance") compare, side by side for one run's tasks, so that their Figure 1 argument can be
checked on one's own runs.

Per task, each the mean over the run's seeds (``inf`` if a seed's is infinite):

* **last k** (their proposal): the mean score of the last ``k`` = 100 training episodes finished by
  each reporting point and at the end, "the average performance of the last k episodes" at
  several points of training;
* **area under the learning curve** (Stadie et al. 2015): the mean score of all training episodes,
  the agent's average performance during training;
* **best k in a row**: the highest mean of ``k`` consecutive training episodes, the best policy as
  read off the learning curve;
* **best evaluation round** (Mnih et al. 2015's "evaluation of the best policy"), for protocols
  that evaluate in rounds: the highest round mean, with the **last round** beside it;
* **best round re-evaluated**, for protocols that score the best policy found
  (``EvaluationSchedule.best_policy``): the mean of the episodes the best round's agent played
  again after training, the independent evaluation Machado et al. ask for.

The two "best" numbers are biased upwards (the maximum of noisy estimates): Machado et al. ask
for a second, independent evaluation of the best policy before quoting it. A policy that learns
and then plummets scores well on both "best" summaries and on the area, and poorly on the last k.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

#: Machado et al.'s k (the episodes of their benchmark tables, section 3)
K = 100

#: (task, seed) -> (frames_total of each episode, scores of the episodes), in episode order
Series = Mapping[tuple[str, int], tuple[np.ndarray, np.ndarray]]


def _mean_over_seeds(values: list[float]) -> float:
    values = [v for v in values if not math.isnan(v)]
    if not values:
        return math.nan
    return math.inf if any(math.isinf(v) for v in values) else float(np.mean(values))


def last_k(scores: np.ndarray, frames: np.ndarray, upto: int | None = None, k: int = K) -> float:
    """Mean of the last ``k`` episodes finished by frame ``upto`` (all if None); NaN before any.

    >>> last_k(np.arange(1.0, 6.0), np.array([10, 20, 30, 40, 50]), upto=35, k=2)
    2.5
    """
    n = len(frames) if upto is None else int(np.searchsorted(frames, upto, side="right"))
    return float(np.mean(scores[max(0, n - k) : n])) if n else math.nan


def best_k_in_a_row(scores: np.ndarray, k: int = K) -> float:
    """The highest mean of ``k`` consecutive episodes (of all of them, if fewer than ``k``).

    >>> best_k_in_a_row(np.array([1.0, 5.0, 3.0, 0.0]), k=2)
    4.0
    """
    if not len(scores):
        return math.nan
    if math.isinf(float(np.max(scores))):
        return math.inf
    k = min(k, len(scores))
    sums = np.convolve(scores, np.ones(k), mode="valid")
    return float(np.max(sums) / k)


def round_means(scores: np.ndarray, frames: np.ndarray) -> list[tuple[int, float]]:
    """(frame counter, mean score) of each evaluation round, in order: a round's episodes share
    the counter at which it began (``benchgen.run.evaluation.rounds``)."""
    return [(int(f), float(np.mean(scores[frames == f]))) for f in np.unique(frames)]


def learning_summaries(
    training: Series,
    evaluation: Series | None = None,
    points: Mapping[str, int] | None = None,
    k: int = K,
    reevaluated: Series | None = None,
) -> dict[str, dict]:
    """task -> the summaries of the module docstring: ``last_k`` (reporting point label -> score,
    ``"end"`` last), ``auc``, ``best_k``, with ``evaluation`` rounds ``best_round`` and
    ``last_round``, and with the ``reevaluated`` best round's episodes ``best_reevaluated``.
    ``points``: reporting point label -> frame count (those reached only)."""
    points = dict(points or {})
    by_task: dict[str, dict[str, list[float]]] = {}
    for (task, _seed), (frames, scores) in sorted(training.items()):
        frames, scores = np.asarray(frames), np.asarray(scores, dtype=float)
        row = by_task.setdefault(task, {})
        for label, frame in [*points.items(), ("end", None)]:
            row.setdefault(f"last_k@{label}", []).append(last_k(scores, frames, frame, k))
        row.setdefault("auc", []).append(float(np.mean(scores)) if len(scores) else math.nan)
        row.setdefault("best_k", []).append(best_k_in_a_row(scores, k))
    for (task, _seed), (frames, scores) in sorted((evaluation or {}).items()):
        means = round_means(np.asarray(scores, dtype=float), np.asarray(frames))
        row = by_task.setdefault(task, {})
        row.setdefault("best_round", []).append(max(m for _, m in means) if means else math.nan)
        row.setdefault("last_round", []).append(means[-1][1] if means else math.nan)
    for (task, _seed), (_frames, scores) in sorted((reevaluated or {}).items()):
        scores = np.asarray(scores, dtype=float)
        value = (math.inf if np.isinf(scores).any() else float(np.mean(scores))) if len(scores) else math.nan
        by_task.setdefault(task, {}).setdefault("best_reevaluated", []).append(value)
    out: dict[str, dict] = {}
    for task, row in by_task.items():
        summary: dict = {"last_k": {}}
        for key, values in row.items():
            if key.startswith("last_k@"):
                summary["last_k"][key.removeprefix("last_k@")] = _mean_over_seeds(values)
            else:
                summary[key] = _mean_over_seeds(values)
        out[task] = summary
    return out


def markdown(summaries: dict, unit: str) -> list[str]:
    """The report's section: one row per task, the summaries side by side."""
    tasks = summaries["tasks"]
    if not tasks:
        return []
    k = summaries["k"]
    labels = list(dict.fromkeys(label for row in tasks.values() for label in row["last_k"]))
    rounds = any("best_round" in row for row in tasks.values())
    again = any("best_reevaluated" in row for row in tasks.values())
    head = [*(f"last {k} at {'the end' if lab == 'end' else f'{int(lab):,} {unit}'}" for lab in labels)]
    head += ["area under the curve", f"best {k} in a row (biased)"]
    head += ["best evaluation round (biased)", "last evaluation round"] if rounds else []
    head += ["best round re-evaluated"] if again else []
    out = [
        "",
        "## Learning summaries (Machado et al. 2018, section 3)",
        "",
        f"Per task, mean over seeds: the mean of the last {k} training episodes at each reporting point "
        "(their proposal), the area under the learning curve (the mean of all training episodes), and the "
        "best policy as read off the curve"
        + (" and as the best evaluation round" if rounds else "")
        + ". The best-policy numbers are biased upwards; an agent that learns and then collapses scores "
        "well on them and on the area, and poorly on the last episodes."
        + (
            " The best round's agent re-evaluated after training (new episodes, the task score of this "
            "protocol) is the independent evaluation Machado et al. ask for."
            if again
            else ""
        ),
        "",
        "| task | " + " | ".join(head) + " |",
        "|---|" + "---|" * len(head),
    ]

    def fmt(v: float) -> str:
        return "-" if v is None or math.isnan(v) else ("inf" if math.isinf(v) else f"{v:,.1f}")

    for task, row in sorted(tasks.items()):
        cells = [fmt(row["last_k"].get(lab, math.nan)) for lab in labels]
        cells += [fmt(row.get("auc", math.nan)), fmt(row.get("best_k", math.nan))]
        cells += [fmt(row.get("best_round", math.nan)), fmt(row.get("last_round", math.nan))] if rounds else []
        cells += [fmt(row.get("best_reevaluated", math.nan))] if again else []
        out.append(f"| {task} | " + " | ".join(cells) + " |")
    return out
