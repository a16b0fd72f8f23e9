"""``benchgen score --baseline`` knows the names ``benchgen compare --baseline`` knows (issue 29 item
7): the suite's own baselines and every reference table its plugins ship (SABER's Table 7
``rainbow_saber``, the ALE 2013 tables, Machado et al.'s Table 1...), as ``NAME`` or
``NAME@CHECKPOINT``. One list of names, resolved by ``benchgen.scoring.resolve_baseline`` for both."""

from __future__ import annotations

import contextlib
import io
import json

import pytest

import benchgen_atari_saber
from benchgen.cli import main
from benchgen.testing import build_registry
from tests.conftest import assert_usage_error, run_cli

REGISTRY = build_registry(benchgen_atari_saber, include_agents=False)
SUITE = REGISTRY.suite("atari_saber")
RAW = {"pong": 10.0, "breakout": 100.0, "alien": 2000.0, "freeway": 21.0, "seaquest": 1500.0}


@pytest.fixture
def scores_csv(tmp_path):
    path = tmp_path / "scores.csv"
    path.write_text("task,score\n" + "".join(f"{t},{v}\n" for t, v in RAW.items()))
    return path


def _score(*args) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["score", "atari_saber", *map(str, args)])
    return code, out.getvalue()


def test_score_normalizes_by_saber_table_7_rainbow(scores_csv):
    code, out = _score(scores_csv, "--baseline", "rainbow_saber", "--json")
    assert code == 0
    result = json.loads(out)
    table = REGISTRY.reference_scores(SUITE)["rainbow_saber"]
    random = REGISTRY.scorer(SUITE).random_scores
    assert result["baseline"] == "rainbow_saber"
    for task, value in result["per_task"].items():  # SABER eq. 2 with Rainbow as the reference
        w, r = table.scores[task], random[task]
        assert value == pytest.approx((RAW[task] - r) / abs(w - r))
    assert set(result["per_task"]) == {t for t in RAW if t in table.scores}


def test_every_table_compare_accepts_is_a_score_baseline(scores_csv):
    names = sorted(REGISTRY.reference_scores(SUITE))
    assert {"rainbow_saber", "ale2013_bass", "machado2018_dqn_sticky", "world_record"} <= set(names)
    for name in names:
        code, out = _score(scores_csv, "--baseline", name, "--json")
        assert code == 0 and json.loads(out)["baseline"] == name, name
    code, out = _score(scores_csv, "--baseline", "rainbow_iqn_saber_5min@10M", "--json")  # a checkpoint column
    assert code == 0 and json.loads(out)["baseline"] == "rainbow_iqn_saber_5min@10M"
    code, out = _score(scores_csv, "--baseline", "raw")
    assert code == 0 and "raw scores" in out


def test_an_unknown_baseline_is_one_line_naming_the_nearest_table(scores_csv):
    proc = run_cli("score", "atari_saber", scores_csv, "--baseline", "rainbow_sabre", plugins=None)
    assert_usage_error(proc, "unknown baseline 'rainbow_sabre'", "did you mean 'rainbow_saber'")
