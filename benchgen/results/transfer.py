"""Transfer during joint training: Nichol et al. 2018's Figure 4, from a joint run's units.

A joint run with ``--transfer-every`` (and ``--finetune-at``) evaluates intermediate joint
checkpoints zero-shot on every train and test task (phase ``transfer_zeroshot``) and fine-tunes
every test task from chosen ones (``transfer_finetune``); the final checkpoint's are the ordinary
``zeroshot`` and ``finetune`` units. Per seed and joint checkpoint (its frame count, the x-axis of
the figure), four numbers, raw scores as the paper plots them:

* zero-shot, train: the mean over train tasks of each task's mean episode score;
* zero-shot, test: the same over test tasks;
* fine-tuning, average: the mean over test tasks of each fine-tuning unit's mean over all its
  training episodes (what the Sonic protocol scores: the average over the whole test budget);
* fine-tuning, final: the mean over test tasks of each unit's final score, computed as the
  report's fine-tuning tables compute it: the suite's second per-task score when it has one
  (``Scorer.final_score``: Sonic's mean of the last 100 episodes), else its per-task score
  (``Scorer.task_score``: SABER's mean of the last 100 training episodes).

Evaluation episodes a fine-tuning unit plays (``<phase>_eval``, for a protocol with evaluation
rounds) are left out: the curves are of training episodes, as the paper's. The figure is drawn by
``benchgen.results.figures.plot_transfer``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from benchgen.phases import FINE_TUNING, NOT_LEARNING, TRANSFER
from benchgen.results.store import ResultsStore
from benchgen.scoring import Scorer

#: the four curves, in the figure's order: key -> label
CURVES = {
    "zeroshot_train": "Zero-shot, train",
    "zeroshot_test": "Zero-shot, test",
    "finetune_average": "Fine-tuning, average, test",
    "finetune_final": "Fine-tuning, final, test",
}
#: episodes of a fine-tuning unit its final score averages when no scorer is given
FINAL_EPISODES = 100


def _checkpoint_frames(path: str | None) -> int | None:
    name = Path(path).name if path else ""
    return int(name) if name.isdigit() else None


def _mean(values: list[float]) -> float:
    finite = [v for v in values if not math.isinf(v)]
    return float(np.mean(finite)) if finite else math.nan


def final_score(values: list[float], scorer: Scorer | None) -> float:
    """A fine-tuning unit's final score from its training episodes' scores in order: the
    scorer's second per-task score if the suite has one, else its per-task score (as the report's
    fine-tuning tables); without a scorer, the mean of the last :data:`FINAL_EPISODES`."""
    if scorer is None:
        return _mean(values[-FINAL_EPISODES:])
    second = scorer.final_score(values)
    return float(second if second is not None else scorer.task_score(values))


def transfer_rows(
    store: ResultsStore, train: list[str], test: list[str], scorer: Scorer | None = None
) -> list[dict[str, Any]]:
    """One row per (seed, joint checkpoint) that transfer or final units started from, in order:
    ``seed``, ``frames`` (the checkpoint's joint frame count) and the :data:`CURVES` values
    (NaN where no unit of that kind started from the checkpoint or none has finished)."""
    units = {u.unit_id: u for u in store.units()}
    scores: dict[str, list[float]] = {}
    for episode in store.episodes():
        unit = units.get(episode["unit_id"])
        if unit is not None and episode["phase"] == unit.phase:  # training episodes, not evaluation rounds
            scores.setdefault(unit.unit_id, []).append(float(episode["score"]))
    groups: dict[tuple[int, int], dict[str, list[float]]] = {}
    for unit in units.values():
        zeroshot = unit.phase in NOT_LEARNING
        finetune = unit.phase in FINE_TUNING
        frames = _checkpoint_frames(unit.init_checkpoint)
        if not (zeroshot or finetune) or frames is None or unit.status != "done" or not scores.get(unit.unit_id):
            continue
        values = scores[unit.unit_id]
        row = groups.setdefault((unit.seed, frames), {key: [] for key in CURVES})
        task = unit.tasks[0]
        if zeroshot and task in train:
            row["zeroshot_train"].append(_mean(values))
        elif zeroshot and task in test:
            row["zeroshot_test"].append(_mean(values))
        elif finetune:
            row["finetune_average"].append(_mean(values))
            row["finetune_final"].append(final_score(values, scorer))
    return [
        {"seed": seed, "frames": frames, **{key: _mean(v) for key, v in values.items()}}
        for (seed, frames), values in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][0]))
    ]


def has_transfer_units(store: ResultsStore) -> bool:
    """Whether the run planned units from intermediate joint checkpoints."""
    return any(u.phase in TRANSFER for u in store.units())
