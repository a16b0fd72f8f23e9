"""Reference tables: the shipped SABER Rainbow-IQN table reads as a user reference CSV."""

from __future__ import annotations

import math

import pytest

from benchgen.errors import UsageError
from benchgen.results.compare.references import read_reference_csv, scores_at
from benchgen.scoring import at_checkpoint, parse_checkpoint_label
from tests.conftest import REPO

SABER = REPO / "plugins" / "atari_saber" / "data" / "rainbow_iqn_saber_training.csv"


def test_saber_rainbow_iqn_table():
    table = read_reference_csv(SABER, "rainbow_iqn")
    assert list(table.by_checkpoint) == ["frames_10M", "frames_50M", "frames_100M", "frames_200M"]
    assert len(table.scores) == 61
    assert table.scores == table.by_checkpoint["frames_200M"]
    assert math.isinf(table.by_checkpoint["frames_200M"]["atlantis"])
    assert table.by_checkpoint["frames_10M"]["alien"] == 2740.6
    scores, label = scores_at(table, 50_000_000, "frames")
    assert label == "frames_50M" and scores["alien"] == 1878.1
    assert scores_at(table, 123, "frames")[1] == "frames_200M"
    assert at_checkpoint(table, "10M").scores["alien"] == 2740.6
    with pytest.raises(UsageError, match="no checkpoint '7M'"):
        at_checkpoint(table, "7M")


def test_checkpoint_labels():
    assert parse_checkpoint_label("frames_200M") == ("frames", 200_000_000)
    assert parse_checkpoint_label("timesteps_1M") == ("timesteps", 1_000_000)
    assert parse_checkpoint_label("4000") == (None, 4000)
    assert parse_checkpoint_label("final") is None


def test_bad_reference_files(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("task,whatever\na,1\n")
    with pytest.raises(UsageError, match="needs a task column"):
        read_reference_csv(bad)
    with pytest.raises(UsageError, match="reference file .* does not exist"):
        read_reference_csv(tmp_path / "missing.csv")
