"""The committed results pages and the papers' figures are current with what they are drawn from
(``benchmarks/results_pages.py``, ``benchmarks/paper_figures.py``), without drawing anything: each
script's ``--check`` rebuilds the pages' text, whose fingerprint covers the inputs of every image."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ("results_pages", "paper_figures")
#: the largest image a page may carry
MAX_IMAGE_BYTES = 150_000


@pytest.fixture(scope="module", params=SCRIPTS)
def script(request):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        yield importlib.import_module(request.param)
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))


def test_committed_pages_are_current(script):
    assert script.check(script.OUT) == [], (
        f"run `python benchmarks/{script.__name__}.py` and commit what it writes (a run was added, "
        "re-exported or a shipped table changed)"
    )


def test_a_missing_or_edited_page_is_reported(script, tmp_path):
    assert script.check(tmp_path), "an empty folder should be reported as stale pages"
    for path, text in script.texts(script.build(), tmp_path).items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    figures = script.check(tmp_path)
    assert figures and all(p.endswith("missing") for p in figures), "the figures were not drawn there"
    page = next(p for p in tmp_path.rglob("*.md") if "SHA-256" in p.read_text())
    page.write_text(page.read_text().replace("SHA-256", "sha"))
    assert any(str(page) in p and "stale" in p for p in script.check(tmp_path))


def test_images_are_small(script):
    images = sorted(script.OUT.rglob("*.png"))
    assert images
    assert [p for p in images if p.stat().st_size > MAX_IMAGE_BYTES] == []


def test_the_measurements_page_quotes_the_results_page_as_it_is():
    """docs/measurements/atari100k.md states "so far" how many games and runs DER has, its IQM
    and interval and the published DER means' IQM on the same games: a lane's new run regenerates
    the results page, and that sentence (written by hand) must follow it."""
    import re

    results = (ROOT / "docs" / "results" / "atari100k" / "README.md").read_text()
    games, runs = re.search(r"^## benchgen DER: (\d+) games, (\d+) runs$", results, re.M).groups()
    resampled = r"^\| benchgen DER, games resampled too \| ([\d.]+) \[([\d.]+), ([\d.]+)\]"
    iqm, low, high = re.search(resampled, results, re.M).groups()
    (published,) = re.search(r"^\| DER \(SPR Table 1\), same games, means only \| ([\d.]+) ", results, re.M).groups()
    text = " ".join((ROOT / "docs" / "measurements" / "atari100k.md").read_text().split())
    sentence = re.search(r"So far \(DER: .*? for the published DER means on the same games", text)
    assert sentence, "docs/measurements/atari100k.md lost its 'So far (DER: ...' sentence"
    quoted = re.fullmatch(
        r"So far \(DER: (\d+) games, (\d+) runs, .*?\) benchgen DER's IQM is ([\d.]+) \(([\d.]+)-([\d.]+) with "
        r".*\) against ([\d.]+) for the published DER means on the same games",
        sentence.group(0),
    )
    assert quoted and quoted.groups() == (games, runs, iqm, low, high, published), (
        f"docs/measurements/atari100k.md: update 'So far (DER: ...' to {games} games, {runs} runs, IQM {iqm} "
        f"({low}-{high}), published DER means {published} (docs/results/atari100k/README.md)"
    )
