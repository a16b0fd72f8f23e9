"""The numbers Nichol et al. 2018 ("Gotta Learn Fast") print, shipped as data.

Every number of the paper's Tables 1-9 is in two CSV files under ``data/``, as printed (one
decimal). The per-level rows are in ``data/sonic_paper_tables.csv``, one row per table, level
and quantity:

- ``table``: the paper's table, ``Table 2`` to ``Table 9``;
- ``algorithm``: ``rainbow``, ``jerk``, ``ppo``, ``ppo_joint``, ``rainbow_joint`` or ``human``;
- ``levels``: ``test`` (Appendix C, Tables 2-7) or ``train`` (Appendix D, Tables 8-9);
- ``level``: the level as the paper's "State" column prints it, the save state without its dot
  (``AngelIslandZoneAct2``, ``HiddenPalaceZone``);
- ``task``: the suite's task name for that level (``sonic3k-AngelIslandZone.Act2``);
- ``quantity``: ``score``, ``final_score`` or ``final_performance`` (defined below);
- ``value``: the printed number;
- ``std``: the printed number after its ``±``.

The printed aggregates are in ``data/sonic_baselines.csv`` (columns ``table``, ``algorithm``,
``levels``, ``quantity``, ``value``, ``std``, meaning the same): Table 1's six rows and the
"Aggregate" row that closes each of Tables 2-9 (two numbers for Tables 2-6: score and final
score). Table 1 repeats the Aggregate score of Tables 2-7 to the digit.

The per-level tables (``tests/sonic/test_sonic_paper_tables.py`` reads this list and compares
it with the CSV file, so the two cannot drift apart):

- Table 2: rainbow, 11 test levels, score and final_score
- Table 3: jerk, 11 test levels, score and final_score
- Table 4: ppo, 11 test levels, score and final_score
- Table 5: ppo_joint, 11 test levels, score and final_score
- Table 6: rainbow_joint, 11 test levels, score and final_score
- Table 7: human, 11 test levels, score
- Table 8: rainbow_joint, 47 train levels, final_performance
- Table 9: ppo_joint, 47 train levels, final_performance

Quantities, as the paper defines them:

* ``score``, the "Score" column of Tables 2-7, the benchmark's metric. Section 3.9: a test level
  is played for one million timesteps, and the total reward of every episode in that budget is
  averaged; Table 1 and each table's Aggregate row are the mean of these over the 11 test levels.
  Agents ran three seeds each (Appendix B, Figure 3). The paper does not say what the ``±`` of
  Tables 1-7 is taken over. It is not the spread over levels (Rainbow's 11 scores have a sample
  standard deviation of 1899.2 across levels; Table 1 prints 102.2). Each printed aggregate ``±``
  is at most the mean of the per-level ``±`` of its table, which holds for a standard deviation
  over runs of a mean over levels, so it is most likely the spread over the three runs; it cannot
  be recomputed from the per-level tables and is shipped as printed. Humans (Section 4.1, Table 7):
  four test subjects each played every test level for one hour, after two hours of practice on
  the training levels; Table 7 gives their average score over that hour (about 54,000
  timesteps, far short of the agents' one million).
* ``final_score``, the "Final Score" column of Tables 2-6 (agents only). The paper prints the
  column but never defines it. The only "final" quantity it defines is in the captions of Tables
  8 and 9: performance over the last 10 episodes of each environment; Figure 4 also plots a
  "Fine-tuning, final, test" curve beside the fine-tuning average. Read it as the score near the
  end of the one-million-timestep budget, over a number of last episodes the paper does not
  state. :meth:`benchgen_sonic.scoring.SonicScorer.final_score` averages the last 100 episodes;
  that count is benchgen's choice, not the paper's.
* ``final_performance``, the "Score" column of Tables 8-9: the jointly trained model on each of
  the 47 training levels, over its last 10 episodes there (the captions' words); the ``±`` is the
  standard deviation over three runs (Table 8, joint Rainbow) or two runs (Table 9, joint PPO).
  This is not the test metric (a mean over every episode of a budget) and is measured on the
  training levels, so it is no yardstick for a test-level run.

Provenance: transcribed from the paper's text. Every value and ``±`` of Tables 2-7, per level
and aggregate, was compared with a second, independent transcription of those tables; no number
differs. ``SonicSuite.published_aggregates`` (``benchgen selfcheck sonic``) recomputes every
printed aggregate from the per-level rows through :class:`~benchgen_sonic.scoring.SonicScorer`.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass

from benchgen_sonic.levels import DATA_DIR, LEVELS

PAPER = "Nichol et al. 2018"
#: the per-level rows
LEVELS_FILE = "sonic_paper_tables.csv"
#: the printed aggregates (Table 1 and every table's Aggregate row)
AGGREGATES_FILE = "sonic_baselines.csv"

#: quantity -> the suffix of its reference table's name (``rainbow``, ``rainbow_final``, ...)
TABLE_SUFFIX = {"score": "", "final_score": "_final", "final_performance": "_train"}

#: the paper's "State" spelling (save state without the dot) -> the suite's task name
TASK_OF_LEVEL: dict[str, str] = {level.state.replace(".", ""): level.task for level in LEVELS}


@dataclass(frozen=True)
class LevelRow:
    """One per-level number of Tables 2-9 (a row of ``data/sonic_paper_tables.csv``)."""

    table: str
    algorithm: str
    levels: str
    level: str
    task: str
    quantity: str
    value: float
    std: float


@dataclass(frozen=True)
class PrintedAggregate:
    """One aggregate of the paper as printed (a row of ``data/sonic_baselines.csv``)."""

    table: str
    algorithm: str
    levels: str
    quantity: str
    value: float
    std: float
    precision: float
    """The precision of ``value`` as printed (0.1 for ``2748.6``)."""


def table_name(algorithm: str, quantity: str) -> str:
    """The reference table holding an algorithm's ``quantity``: ``rainbow`` (score), ``rainbow_final``
    (final score), ``ppo_joint_train`` (final performance on the training levels).

    >>> table_name("ppo_joint", "final_performance")
    'ppo_joint_train'
    """
    return algorithm + TABLE_SUFFIX[quantity]


def printed_precision(text: str) -> float:
    """The precision of a number as written: ``"2748.6"`` -> 0.1, ``"12"`` -> 1.

    >>> printed_precision("1904.0")
    0.1
    """
    decimals = len(text.partition(".")[2])
    return 10.0**-decimals if decimals else 1.0


def _rows(name: str) -> list[dict[str, str]]:
    with (DATA_DIR / name).open(newline="") as handle:
        return list(csv.DictReader(handle))


def level_rows() -> list[LevelRow]:
    """Every per-level number of Tables 2-9, in the file's order (the paper's)."""
    return [
        LevelRow(
            table=row["table"],
            algorithm=row["algorithm"],
            levels=row["levels"],
            level=row["level"],
            task=row["task"],
            quantity=row["quantity"],
            value=float(row["value"]),
            std=float(row["std"]),
        )
        for row in _rows(LEVELS_FILE)
    ]


def printed_aggregates() -> list[PrintedAggregate]:
    """Table 1's aggregates and every table's Aggregate row, as printed."""
    return [
        PrintedAggregate(
            table=row["table"],
            algorithm=row["algorithm"],
            levels=row["levels"],
            quantity=row["quantity"],
            value=float(row["value"]),
            std=float(row["std"]),
            precision=printed_precision(row["value"]),
        )
        for row in _rows(AGGREGATES_FILE)
    ]
