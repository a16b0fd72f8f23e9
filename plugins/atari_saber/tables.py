"""The suite's data tables: the 61 games with their baselines, SABER's Rainbow-IQN scores, and the
Atari 100K papers' random/human scores and per-game tables (the end of this module).

The CSVs live in ``data/`` next to this module (shipped as package data):

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


# --- The papers' other tables, as printed (read by ``published.py``) --------------------------------
#
# * ``saber_table7_200m.csv``: SABER Table 7, Rainbow and Rainbow-IQN at 200M frames, scores at 5
#   minutes, at 30 minutes and uncapped (SABER); ``*_std`` columns: Rainbow's standard deviation over
#   5 seeds, printed for 14 games (the paper prints none for Rainbow-IQN there).
# * ``saber_table8_rainbow_iqn_5min.csv`` / ``saber_table9_rainbow_iqn_30min.csv``: SABER Tables 8
#   and 9, Rainbow-IQN at 10M-200M frames, scores at 5 and at 30 minutes; ``frames_<N>_std``: the
#   standard deviation over 5 seeds (14 games).
# * ``rainbow_iqn_saber_training_std.csv``: the standard deviations SABER Table 6 prints beside
#   ``rainbow_iqn_saber_training.csv``'s scores (14 games; none where the score is infinite).
# * ``saber_table4_apex.csv``: SABER Table 4, Rainbow-IQN Ape-X with 10 actors and with one
#   synchronized actor (3 games).
# * ``saber_printed_aggregates.csv``: the aggregates SABER prints (Tables 2 and 3, sections 2.3, 5.1
#   and 6): ``value`` as printed (percentages for ``*_percent``), ``precision`` its last digit.
# * ``ale2013_table{1,2,4,5}_*.csv``: Bellemare et al. 2013, Tables 1 and 2 (selected games, rounded
#   to integers; Table 1 alone has the human column) and Tables 4 and 5 (every game, one decimal).
# * ``ale2013_table3_paired_tests.csv``: Bellemare et al. 2013, Table 3, games on which ``first``
#   is significantly better / worse than ``second`` (Welch's t-test, 99%).
# * ``ale2013_printed_aggregates.csv``: the aggregates Bellemare et al. 2013 print (the "Times Best"
#   rows of Tables 4 and 5, counts in sections 3.1.3 and 3.2.3, a normalized score in 4.1.3).
#
# Games are ale-py ROM ids; "inf" is infinite gameplay; an empty cell is a number the paper does
# not print.

SABER_TABLE7_CSV = DATA / "saber_table7_200m.csv"
SABER_CAPPED_CSV = {
    "score_5min": DATA / "saber_table8_rainbow_iqn_5min.csv",
    "score_30min": DATA / "saber_table9_rainbow_iqn_30min.csv",
}
RAINBOW_IQN_STD_CSV = DATA / "rainbow_iqn_saber_training_std.csv"
SABER_TABLE4_CSV = DATA / "saber_table4_apex.csv"
SABER_AGGREGATES_CSV = DATA / "saber_printed_aggregates.csv"
ALE2013_TABLE_CSV = {
    1: DATA / "ale2013_table1_selected.csv",
    2: DATA / "ale2013_table2_selected.csv",
    4: DATA / "ale2013_table4_learning.csv",
    5: DATA / "ale2013_table5_search.csv",
}
ALE2013_PAIRED_TESTS_CSV = DATA / "ale2013_table3_paired_tests.csv"
ALE2013_AGGREGATES_CSV = DATA / "ale2013_printed_aggregates.csv"


def _columns(path: Path) -> dict[str, dict[str, float]]:
    """A per-game CSV as column -> game -> number, in the file's orders; empty cells are left out."""
    with path.open(newline="") as handle:
        reader = csv.DictReader(handle)
        columns = [c for c in (reader.fieldnames or []) if c != "game"]
        table: dict[str, dict[str, float]] = {c: {} for c in columns}
        for row in reader:
            game = row["game"].strip()
            for column in columns:
                text = (row[column] or "").strip()
                if not text:
                    continue
                value = float(text)  # "inf": infinite gameplay
                if math.isnan(value) or value == -math.inf:
                    raise ValueError(f"{path}: {column} of {game} is {text}, not a score")
                table[column][game] = value
    return table


@cache
def saber_table7() -> dict[str, dict[str, float]]:
    """SABER Table 7: column (``rainbow_5min``, ``rainbow_5min_std``, ..., ``rainbow_iqn_saber``) -> game -> value."""
    return _columns(SABER_TABLE7_CSV)


@cache
def rainbow_iqn_saber_capped(view: str) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, float]]]:
    """SABER Table 8 (``view="score_5min"``) or Table 9 (``"score_30min"``): (scores, standard
    deviations), each checkpoint label ('10M' ... '200M') -> game -> value."""
    columns = _columns(SABER_CAPPED_CSV[view])
    scores = {c.removeprefix("frames_"): v for c, v in columns.items() if not c.endswith("_std")}
    std = {c.removeprefix("frames_").removesuffix("_std"): v for c, v in columns.items() if c.endswith("_std")}
    return scores, std


@cache
def rainbow_iqn_saber_std() -> dict[str, dict[str, float]]:
    """SABER Table 6's standard deviations: checkpoint label -> game -> std (the 14 five-seed games)."""
    return {c.removeprefix("frames_").removesuffix("_std"): v for c, v in _columns(RAINBOW_IQN_STD_CSV).items()}


@cache
def saber_table4() -> dict[str, dict[str, float]]:
    """SABER Table 4: ``ten_actors`` / ``single_actor`` -> game -> raw score."""
    return _columns(SABER_TABLE4_CSV)


@dataclass(frozen=True)
class PrintedAggregate:
    """One aggregate number a paper prints (a row of ``*_printed_aggregates.csv``)."""

    source: str
    """table or section of the paper (``Table 3``, ``section 2.3``)"""
    subject: str
    """whose scores: an agent, a table column, ``world_record``"""
    quantity: str
    """``median_percent``, ``mean_percent``, ``superhuman_count``, ``times_best``, ..."""
    value: float
    """as printed"""
    precision: float
    """the printed number's last digit (0.01 for 2.61)"""
    view: str = ""
    frames: str = ""
    baseline: str = ""
    task: str = ""


def _printed(path: Path, baseline: str = "") -> tuple[PrintedAggregate, ...]:
    """The printed aggregates of a CSV (its leading ``#`` lines a source note); ``baseline``: the
    one every row is normalized with, where the file has no such column."""
    return tuple(
        PrintedAggregate(
            source=row["source"],
            subject=row["subject"],
            quantity=row["quantity"],
            value=float(row["value"]),
            precision=float(row["precision"]),
            view=row.get("view") or "",
            frames=row.get("frames") or "",
            baseline=row.get("baseline") or baseline,
            task=row.get("task") or "",
        )
        for row in _commented_rows(path)
    )


@cache
def saber_printed_aggregates() -> tuple[PrintedAggregate, ...]:
    """The aggregates SABER prints (Tables 2-3, sections 2.3, 5.1, 6)."""
    return _printed(SABER_AGGREGATES_CSV)


@cache
def ale2013_table(number: int) -> dict[str, dict[str, float]]:
    """Bellemare et al. 2013, Table 1, 2, 4 or 5: column -> game -> score (the paper's row order)."""
    return _columns(ALE2013_TABLE_CSV[number])


@cache
def ale2013_paired_tests() -> dict[tuple[str, str], tuple[int, int]]:
    """Bellemare et al. 2013, Table 3: (first, second) -> (games first is better, games it is worse)."""
    with ALE2013_PAIRED_TESTS_CSV.open(newline="") as handle:
        return {
            (row["first"], row["second"]): (int(row["better"]), int(row["worse"])) for row in csv.DictReader(handle)
        }


@cache
def ale2013_printed_aggregates() -> tuple[PrintedAggregate, ...]:
    """The aggregates Bellemare et al. 2013 print (Tables 4-5 "Times Best", sections 3.1.3, 3.2.3, 4.1.3)."""
    return _printed(ALE2013_AGGREGATES_CSV)


# --- Atari 100K (Kaiser et al. 2020's 26 games, 100K agent steps) ------------------------------------
#
# * ``atari100k_random_human.csv``: the random and human scores every Atari 100K paper normalizes
#   with (SPR Table 1's Random and Human columns; Dopamine's labs/atari_100k/normalization_utils.py),
#   not SABER's random column of ``world_records.csv``.
# * ``atari100k_table_spr2021.csv``: SPR (Schwarzer et al. 2021) Table 1, per-game scores of SimPLe,
#   DER, OTRainbow, CURL, DrQ and SPR.
# * ``atari100k_table_bbf2023.csv``: BBF (Schwarzer et al. 2023), per-game scores of BBF.
# * ``atari100k_printed_aggregates.csv``: the human-normalized means, medians and superhuman counts
#   those papers print.
#
# Each file starts with ``#`` lines saying where its numbers come from.

ATARI100K_RANDOM_HUMAN_CSV = DATA / "atari100k_random_human.csv"
ATARI100K_TABLE_CSV = {
    "spr2021": DATA / "atari100k_table_spr2021.csv",
    "bbf2023": DATA / "atari100k_table_bbf2023.csv",
    "drq_eps2021": DATA / "atari100k_table_drq_eps2021.csv",
}
ATARI100K_AGGREGATES_CSV = DATA / "atari100k_printed_aggregates.csv"
ATARI100K_RUNS_CSV = DATA / "atari100k_runs_agarwal2021.csv"
#: per-run Atari 100K scores: Agarwal et al. 2021's released runs, then BBF's
ATARI100K_RUNS_CSVS = (ATARI100K_RUNS_CSV, DATA / "atari100k_runs_bbf2023.csv")


def _commented_rows(path: Path) -> list[dict[str, str]]:
    """The rows of a CSV whose leading ``#`` lines are its source note."""
    lines = [line for line in path.read_text().splitlines() if not line.startswith("#")]
    return list(csv.DictReader(lines))


def source_note(path: Path) -> str:
    """The leading ``#`` lines of a data CSV, joined: where its numbers come from."""
    lines = path.read_text().splitlines()
    return " ".join(line.lstrip("#").strip() for line in lines if line.startswith("#"))


@cache
def atari100k_random_human() -> dict[str, tuple[float, float]]:
    """Atari 100K's 26 games -> (random score, human score), in Kaiser et al.'s order."""
    return {
        row["game"].strip(): (float(row["random"]), float(row["human"]))
        for row in _commented_rows(ATARI100K_RANDOM_HUMAN_CSV)
    }


@cache
def atari100k_table(name: str) -> dict[str, dict[str, float]]:
    """An Atari 100K paper's per-game table (``spr2021``, ``bbf2023``, ``drq_eps2021``): column ->
    game -> number (a score, or for ``drq_eps2021`` also ``runs_at_zero``, a count of runs)."""
    rows = _commented_rows(ATARI100K_TABLE_CSV[name])
    columns = [c for c in rows[0] if c != "game"]
    table: dict[str, dict[str, float]] = {c: {} for c in columns}
    for row in rows:
        for column in columns:
            value = float(row[column])
            if not math.isfinite(value):
                raise ValueError(f"{ATARI100K_TABLE_CSV[name]}: {column} of {row['game']} is {row[column]}")
            table[column][row["game"].strip()] = value
    return table


@cache
def atari100k_runs() -> dict[str, dict[str, tuple[float, ...]]]:
    """The released per-run Atari 100K scores: agent -> game -> each run's score, in the file's run
    order. Agarwal et al. 2021's (``atari100k_runs_agarwal2021.csv``: ``drq_eps``, ``spr``,
    ``simple``) and BBF's (``atari100k_runs_bbf2023.csv``: ``bbf``)."""
    runs: dict[str, dict[str, list[float]]] = {}
    for path in ATARI100K_RUNS_CSVS:
        for row in _commented_rows(path):
            value = float(row["score"])
            if not math.isfinite(value):
                raise ValueError(f"{path}: {row['agent']} {row['game']} run {row['run']} is {row['score']}")
            games = runs.setdefault(row["agent"].strip(), {})
            scores = games.setdefault(row["game"].strip(), [])
            if int(row["run"]) != len(scores):
                raise ValueError(f"{path}: {row['agent']} {row['game']}: run {row['run']} out of order")
            scores.append(value)
    return {agent: {g: tuple(v) for g, v in games.items()} for agent, games in runs.items()}


@cache
def atari100k_printed_aggregates() -> tuple[PrintedAggregate, ...]:
    """The aggregates the Atari 100K papers print (SPR Table 1, BBF)."""
    return _printed(ATARI100K_AGGREGATES_CSV, baseline="human_atari100k")
