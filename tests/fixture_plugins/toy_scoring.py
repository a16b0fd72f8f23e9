"""Scoring for the toy suite, for comparison tests: random and world-record scores, a reference
agent with checkpoints (SABER eq. 2 normalization) and a published aggregate-only baseline."""

from __future__ import annotations

import benchgen
from benchgen.scoring import ReferenceScores, Scorer

RANDOM = {"count-20": 0.0, "count-50": 0.0, "count-80": 0.0}
WORLD_RECORD = ReferenceScores("world_record", {"count-20": 100.0, "count-50": 100.0, "count-80": 100.0})
TOY_REF = ReferenceScores(
    "toy_ref",
    {"count-20": 50.0, "count-50": 25.0, "count-80": 200.0},
    description="scripted reference agent",
    by_checkpoint={
        "1000": {"count-20": 10.0, "count-50": 5.0, "count-80": 40.0},
        "4000": {"count-20": 50.0, "count-50": 25.0, "count-80": 200.0},
    },
)
PAPER = ReferenceScores("paper_agent", {}, description="aggregate-only published baseline")
PAPER.aggregate = 42.0
PAPER.std = 1.5


@benchgen.hookimpl
def benchgen_scorer(suite):
    if suite.name == "toy":
        return Scorer(RANDOM, {"world_record": WORLD_RECORD})
    return None


@benchgen.hookimpl
def benchgen_reference_scores(suite):
    return [TOY_REF, PAPER] if suite.name == "toy" else []
