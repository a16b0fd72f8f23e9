"""The suite's data tables: the 61 games with their baselines, and SABER's Rainbow-IQN scores.

Both CSVs live in ``data/`` next to this module (shipped as package data):

* ``world_records.csv``: ale-py ROM id, random score, human beginner score (Mnih 2015; empty where
  unknown), world record (TwinGalaxies, July 2019; empty where none: double_dunk,
  elevator_action, tennis), and whether the record was extrapolated from a time/distance record.
* ``rainbow_iqn_saber_training.csv``: SABER Table 6, Rainbow-IQN training scores under the SABER
  protocol at 10M, 50M, 100M and 200M frames ("inf" = infinite gameplay).
* ``machado2018_table1.csv``: Machado et al. 2018 (Revisiting the ALE), Table 1: the Brute,
  Sarsa(lambda) + Blob-PROST and DQN on Bellemare et al.'s five training games, deterministic
  (stickiness 0) and with sticky actions (0.25), 50M frames, mean of the last 100 training
  episodes averaged over trials (24; 5 for DQN), with the standard deviation over trials.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
WORLD_RECORDS_CSV = DATA / "world_records.csv"
RAINBOW_IQN_CSV = DATA / "rainbow_iqn_saber_training.csv"
MACHADO_TABLE1_CSV = DATA / "machado2018_table1.csv"


@dataclass(frozen=True)
class Game:
    """One row of ``world_records.csv``."""

    game: str
    random: float
    human_beginner: float | None
    world_record: float | None
    world_record_extrapolated: bool


def _optional(text: str) -> float | None:
    text = text.strip()
    return float(text) if text else None


@cache
def games() -> tuple[Game, ...]:
    """The 61 games, in the CSV's (alphabetical) order."""
    with WORLD_RECORDS_CSV.open(newline="") as handle:
        return tuple(
            Game(
                game=row["game"].strip(),
                random=float(row["random"]),
                human_beginner=_optional(row["human_beginner"]),
                world_record=_optional(row["world_record"]),
                world_record_extrapolated=row["world_record_extrapolated"].strip() == "yes",
            )
            for row in csv.DictReader(handle)
        )


def game_ids() -> list[str]:
    """ROM ids of the 61 games."""
    return [g.game for g in games()]


def world_record_games() -> list[str]:
    """The 58 games that have a world record (the ones SABER aggregates over)."""
    return [g.game for g in games() if g.world_record is not None]


@cache
def rainbow_iqn_saber() -> dict[str, dict[str, float]]:
    """SABER Table 6: checkpoint label ('10M', '50M', '100M', '200M') -> game -> raw score."""
    with RAINBOW_IQN_CSV.open(newline="") as handle:
        reader = csv.DictReader(handle)
        columns = [c for c in (reader.fieldnames or []) if c.startswith("frames_")]
        table: dict[str, dict[str, float]] = {c.removeprefix("frames_"): {} for c in columns}
        for row in reader:
            for column in columns:
                value = float(row[column])  # float("inf") parses the table's "inf"
                if math.isnan(value):
                    raise ValueError(f"{RAINBOW_IQN_CSV}: NaN score for {row['game']}")
                table[column.removeprefix("frames_")][row["game"].strip()] = value
    return table


@dataclass(frozen=True)
class StickyResult:
    """One cell of Machado et al. 2018, Table 1."""

    game: str
    agent: str
    """``brute``, ``sarsa_blob_prost`` or ``dqn``"""
    sticky_action_probability: float
    mean: float
    std: float
    """standard deviation over trials"""
    trials: int


@cache
def machado2018_table1() -> tuple[StickyResult, ...]:
    """Machado et al. 2018, Table 1, one row per (game, agent, stickiness)."""
    with MACHADO_TABLE1_CSV.open(newline="") as handle:
        return tuple(
            StickyResult(
                game=row["game"],
                agent=row["agent"],
                sticky_action_probability=float(row["sticky_action_probability"]),
                mean=float(row["mean"]),
                std=float(row["std"]),
                trials=int(row["trials"]),
            )
            for row in csv.DictReader(handle)
        )
