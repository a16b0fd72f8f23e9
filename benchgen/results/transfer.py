"""Transfer during joint training: Nichol et al. 2018's Figure 4, from a joint run's units.

A joint run with ``--transfer-every`` (and ``--finetune-at``) evaluates intermediate joint
checkpoints zero-shot on every train and test task (phase ``transfer_zeroshot``) and fine-tunes
every test task from chosen ones (``transfer_finetune``); the final checkpoint's are the ordinary
``zeroshot`` and ``finetune`` units. Per seed and joint checkpoint (its frame count, the x-axis of
the figure), four numbers, raw scores as the paper plots them:

* zero-shot, train: the mean over train tasks of each task's mean episode score;
* zero-shot, test: the same over test tasks;
* fine-tuning, average: the mean over test tasks of each fine-tuning unit's mean over all its
  episodes (what the Sonic protocol scores: the average over the whole test budget);
* fine-tuning, final: the same over each unit's last 100 episodes (benchgen's final score).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from benchgen.results.store import ResultsStore

#: phases of the units that evaluate (and fine-tune from) intermediate joint checkpoints
TRANSFER_ZEROSHOT, TRANSFER_FINETUNE = "transfer_zeroshot", "transfer_finetune"

#: the four curves, in the figure's order: key -> label
CURVES = {
    "zeroshot_train": "Zero-shot, train",
    "zeroshot_test": "Zero-shot, test",
    "finetune_average": "Fine-tuning, average, test",
    "finetune_final": "Fine-tuning, final, test",
}
#: episodes of a fine-tuning unit its final score averages
FINAL_EPISODES = 100


def _checkpoint_frames(path: str | None) -> int | None:
    name = Path(path).name if path else ""
    return int(name) if name.isdigit() else None


def _mean(values: list[float]) -> float:
    finite = [v for v in values if not math.isinf(v)]
    return float(np.mean(finite)) if finite else math.nan


def transfer_rows(store: ResultsStore, train: list[str], test: list[str]) -> list[dict[str, Any]]:
    """One row per (seed, joint checkpoint) that transfer or final units started from, in order:
    ``seed``, ``frames`` (the checkpoint's joint frame count) and the :data:`CURVES` values
    (NaN where no unit of that kind started from the checkpoint or none has finished)."""
    scores: dict[str, list[float]] = {}
    for episode in store.episodes():
        scores.setdefault(episode["unit_id"], []).append(float(episode["score"]))
    groups: dict[tuple[int, int], dict[str, list[float]]] = {}
    for unit in store.units():
        zeroshot = unit.phase in ("zeroshot", TRANSFER_ZEROSHOT)
        finetune = unit.phase in ("finetune", TRANSFER_FINETUNE)
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
            row["finetune_final"].append(_mean(values[-FINAL_EPISODES:]))
    return [
        {"seed": seed, "frames": frames, **{key: _mean(v) for key, v in values.items()}}
        for (seed, frames), values in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][0]))
    ]


def has_transfer_units(store: ResultsStore) -> bool:
    return any(u.phase in (TRANSFER_ZEROSHOT, TRANSFER_FINETUNE) for u in store.units())


def plot_transfer(rows: list[dict[str, Any]], to_unit, unit: str, path: Path) -> Path:
    """Figure 4's four curves against joint training (``to_unit(frames)`` in the budget unit):
    the mean over seeds, with the seeds' range as a band when there are several."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    frames = sorted({r["frames"] for r in rows})
    x = [to_unit(f) for f in frames]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for key, label in CURVES.items():
        per_point = [[r[key] for r in rows if r["frames"] == f and not math.isnan(r[key])] for f in frames]
        points = [(xi, v) for xi, v in zip(x, per_point) if v]
        if not points:
            continue
        xs = [p[0] for p in points]
        ax.plot(xs, [np.mean(p[1]) for p in points], marker="o", label=label)
        if any(len(p[1]) > 1 for p in points):
            ax.fill_between(xs, [min(p[1]) for p in points], [max(p[1]) for p in points], alpha=0.2)
    ax.set_xlabel(f"joint training ({unit})")
    ax.set_ylabel("score")
    ax.set_title("Transfer during joint training")
    ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
