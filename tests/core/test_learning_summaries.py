"""The report's learning summaries (Machado et al. 2018, section 3): the last k episodes at several
points, the area under the learning curve and the best policy, side by side, from the run's own
episodes."""

from __future__ import annotations

import json
import math
import sqlite3

import numpy as np
import pytest

from benchgen.results.summaries import learning_summaries
from tests.conftest import run_cli


def test_a_curve_that_plummets_is_told_apart_by_the_last_k_only():
    """Machado et al.'s Figure 1 in miniature: a seed that learns to 10 and collapses to 0 scores
    well on the best policy and on the area, poorly on the last k; a steady seed scores 5 on all."""
    frames = np.arange(1, 301) * 100
    collapse = np.concatenate([np.full(100, 0.0), np.full(100, 10.0), np.full(100, 0.0)])
    steady = np.full(300, 5.0)
    rounds = (np.repeat([10_000, 20_000, 30_000], 2), np.array([0.0, 2.0, 9.0, 11.0, 1.0, 1.0]))
    out = learning_summaries(
        {("a", 0): (frames, collapse), ("b", 0): (frames, steady)},
        {("a", 0): rounds},
        {"10000": 10_000, "20000": 20_000},
        k=100,
    )
    a, b = out["a"], out["b"]
    assert a["last_k"] == {"10000": 0.0, "20000": 10.0, "end": 0.0}
    assert a["auc"] == pytest.approx(10 / 3) and a["best_k"] == 10.0
    assert a["best_round"] == 10.0 and a["last_round"] == 1.0  # the best round, and the agent at the end
    assert b["last_k"]["end"] == b["auc"] == b["best_k"] == 5.0 and "best_round" not in b
    # over seeds: the mean, infinite if a seed's is
    two = learning_summaries({("a", 0): (frames, steady), ("a", 1): (frames, np.append(steady[:-1], math.inf))})
    assert two["a"]["auc"] == math.inf and two["a"]["best_k"] == math.inf


def test_the_report_shows_the_summaries_of_the_runs_episodes(tmp_path):
    out = tmp_path / "run"
    proc = run_cli(
        "run", "toy", "random", "--tasks", "count-20,count-80", "--seeds", "0,1", "--frames", "4000", "--no-progress",
        "--out", out,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    summaries = json.loads((out / "report" / "report.json").read_text())["learning_summaries"]
    conn = sqlite3.connect(out / "results.sqlite")
    try:
        rows = conn.execute("SELECT task, seed, score, frames_total FROM episodes ORDER BY id").fetchall()
    finally:
        conn.close()
    assert summaries["k"] == 100 and set(summaries["tasks"]) == {"count-20", "count-80"}
    for task, got in summaries["tasks"].items():
        per_seed = [[(s, f) for t, seed, s, f in rows if t == task and seed == sd] for sd in (0, 1)]
        auc = np.mean([np.mean([s for s, _ in eps]) for eps in per_seed])
        at_1000 = np.mean([np.mean([s for s, f in eps if f <= 1000][-100:]) for eps in per_seed])
        windows = [[s for s, _ in eps] for eps in per_seed]
        best = np.mean(
            [max(np.mean(w[i : i + min(100, len(w))]) for i in range(len(w) - min(100, len(w)) + 1)) for w in windows]
        )
        assert got["auc"] == pytest.approx(auc) and got["last_k"]["1000"] == pytest.approx(at_1000)
        assert got["best_k"] == pytest.approx(best) and got["last_k"]["end"] <= got["best_k"]
    markdown = (out / "report" / "report.md").read_text()
    assert "## Learning summaries (Machado et al. 2018, section 3)" in markdown
    assert "| task | last 100 at 1,000 frames | last 100 at 4,000 frames | last 100 at the end | area under" in markdown
