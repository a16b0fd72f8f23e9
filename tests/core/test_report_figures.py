"""The papers' figures in ``benchgen report``, from real (small) toy runs: SABER's median
normalized score per seed with its band and the classes per reporting point; Nichol et al.'s
mean instantaneous score; every time view normalized (SABER Table 3)."""

from __future__ import annotations

import json

import matplotlib.image
import numpy as np

from benchgen.results.compare.gather import load_phases
from benchgen.results.figures import frame_grid, instantaneous_mean_curves
from tests.compare.helpers import PLUGINS
from tests.conftest import run_cli

RUN = ("run", "toy", "random", "--tasks", "count-20,count-50", "--seeds", "0,1", "--frames", "20k", "--no-progress")


def _image(path):
    pixels = matplotlib.image.imread(path)
    assert pixels.ndim == 3 and pixels.shape[0] > 100 and pixels.shape[1] > 100
    assert np.ptp(pixels[..., :3]) > 0.5  # something is drawn, not a blank canvas
    return pixels


def test_a_normalized_suite_gets_sabers_curves_classes_and_views(tmp_path):
    out = tmp_path / "run"
    assert run_cli(*RUN, "--out", out, plugins=PLUGINS).returncode == 0
    _image(out / "report" / "median_normalized_train.png")
    _image(out / "report" / "classes_by_checkpoint_train.png")
    report = json.loads((out / "report" / "report.json").read_text())
    views = report["phases"]["train"]["normalized_views"]
    assert set(views) == {"score_half"}  # the toy suite's one time view, normalized like the final score
    median = views["score_half"]["median"] * 100
    assert f"half view: median {median:.2f}%" in (out / "report" / "report.md").read_text()


def test_a_raw_scored_suite_gets_the_mean_instantaneous_score_curve(tmp_path):
    out = tmp_path / "run"
    assert run_cli(*RUN, "--out", out).returncode == 0  # the toy suite alone has no reference: raw scores
    _image(out / "report" / "mean_score_train.png")
    run = load_phases(out, "run")["train"]
    grid = frame_grid(run)
    curves = instantaneous_mean_curves(run, grid)
    # at the last grid point: the mean over tasks of each task's latest episode (no running mean)
    latest = [run.series[(t, 0)][1]["score"][-1] for t in ("count-20", "count-50")]
    assert curves[0][-1] == np.mean(latest)
