"""Farebrother, Machado and Bowling 2018 ("Generalization and Regularization in DQN",
arXiv:1810.00123): their published DQN scores on game flavors, as reference tables of the
atari_saber suite.

Two tables, both transcribed from the paper's LaTeX source into ``data/``:

* ``farebrother2018_dqn_transfer`` (``data/farebrother2018_table1_transfer.csv``, Table 1, "Direct
  policy evaluation"): DQN trained 50M frames on a game's default flavor, its policy then played on
  another flavor. The number a generalizing agent trained on the ``farebrother_flavors`` split's
  train tasks is compared with on its test tasks.
* ``farebrother2018_dqn_scratch`` (``data/farebrother2018_table5_dqn.csv``, Table 5 in appendix B):
  DQN trained from scratch on each flavor, at 10M, 50M (the default) and 100M frames.

Protocol (the paper's appendix B, following Machado et al. 2018): sticky actions 0.25, all 18
actions, no lives signal, the score of an epsilon-greedy policy over 100 episodes, mean of 5 runs
(the std over runs is the table's spread). Episodes follow Machado et al.'s 5-minute cap, the
atari_saber suite's ``score_5min`` view, as atari_saber's own Machado et al. tables do.
"""

from __future__ import annotations

import csv
from pathlib import Path

from benchgen.scoring import ReferenceScores

DATA = Path(__file__).parent / "data"
TRANSFER_CSV = DATA / "farebrother2018_table1_transfer.csv"
SCRATCH_CSV = DATA / "farebrother2018_table5_dqn.csv"
PAPER = "Farebrother, Machado & Bowling 2018 (Generalization and Regularization in DQN)"
PROTOCOL = {"sticky_action_probability": 0.25}
#: Table 5's checkpoints, in frames; the table's plain scores are at SCRATCH_DEFAULT
CHECKPOINTS = ("10M", "50M", "100M")
SCRATCH_DEFAULT = "50M"


def read_rows(path: Path) -> list[dict[str, str]]:
    """The CSV's rows (its leading ``#`` lines describe the table and are skipped)."""
    with path.open(newline="") as handle:
        return list(csv.DictReader(line for line in handle if not line.startswith("#")))


def transfer_table() -> ReferenceScores:
    """Table 1's evaluation column: trained on the default flavor, played on the listed one."""
    rows = read_rows(TRANSFER_CSV)
    return ReferenceScores(
        name="farebrother2018_dqn_transfer",
        scores={r["task"]: float(r["evaluation"]) for r in rows},
        description=f"{PAPER}: DQN trained 50M frames on the game's default flavor, evaluated on this flavor "
        "(100 episodes, mean of 5 runs, std over runs)",
        source=f"{PAPER}, Table 1",
        view="score_5min",
        protocol=dict(PROTOCOL),
        spread={r["task"]: float(r["evaluation_std"]) for r in rows},
    )


def scratch_table() -> ReferenceScores:
    """Table 5: DQN trained on each flavor itself, at three checkpoints."""
    rows = read_rows(SCRATCH_CSV)
    by_checkpoint = {label: {r["task"]: float(r[f"frames_{label}"]) for r in rows} for label in CHECKPOINTS}
    return ReferenceScores(
        name="farebrother2018_dqn_scratch",
        scores=dict(by_checkpoint[SCRATCH_DEFAULT]),
        description=f"{PAPER}: DQN trained from scratch on each flavor, 10M-100M frames ({SCRATCH_DEFAULT} by "
        "default; 100 episodes, mean of 5 runs, std over runs)",
        by_checkpoint=by_checkpoint,
        source=f"{PAPER}, Table 5 (appendix B)",
        view="score_5min",
        protocol=dict(PROTOCOL),
        spread={r["task"]: float(r[f"std_{SCRATCH_DEFAULT}"]) for r in rows},
    )


def tables() -> list[ReferenceScores]:
    return [transfer_table(), scratch_table()]
