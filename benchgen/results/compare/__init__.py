"""``benchgen compare``: agents, seeds and reference agents side by side, with sound statistics.

Runs of several agents and seeds on one suite become a (runs x tasks) score matrix per agent
(each (run directory, seed) pair is a row), normalized by the suite's scorer (or raw). The
comparison reports, with rliable (Agarwal et al. 2021): median, IQM, capped mean and optimality
gap with stratified-bootstrap confidence intervals; the probability of improvement between
agents; performance profiles; SABER's score classes side by side; per-task tables in every time
view the suite records; learning curves at matching frame counts; Welch's t-test per task
between agents (Bellemare et al. 2013's wins and losses). Published reference agents (from the
suite plugin's ``benchgen_reference_scores``) and users' own CSVs appear as rows without
intervals, and any of them can be the normalization baseline (SABER eq. 2).

Runs whose protocol parameters differ are refused, naming the parameters, unless forced; a
forced comparison says so in every output.

Modules: ``gather`` (runs, protocol check, normalization), ``references`` (reference tables),
``stats`` (the statistics), ``options`` (the settings and their defaults), ``build`` (the comparison as a dict), ``render`` (markdown, JSON),
``plots`` (PNG), ``html`` (the self-contained page).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def build_comparison(paths, registry=None, **options) -> dict[str, Any]:
    """See :func:`benchgen.results.compare.build.build_comparison` (imported when first used: the
    statistics libraries take a second to load, and the CLI imports this package for its options)."""
    from benchgen.results.compare.build import build_comparison as build

    return build(paths, registry, **options)


def write_comparison(result: dict[str, Any], out_dir: str | Path, plots: bool = True, html: bool = True) -> list[Path]:
    """Write compare.json, compare.md, the PNG plots and compare.html into ``out_dir``."""
    from benchgen.results.compare import render

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    images = []
    if plots:
        from benchgen.results.compare.plots import write_plots

        images = write_plots(result, out)
    written = [out / "compare.json", out / "compare.md"]
    written[0].write_text(render.to_json(result))
    written[1].write_text(render.to_markdown(result, [p.name for p in images]))
    if html:
        from benchgen.results.compare.html import to_html

        (out / "compare.html").write_text(to_html(result, images))
        written.append(out / "compare.html")
    return written + images


def compare(
    paths, out_dir: str | Path, registry=None, plots: bool = True, html: bool = True, **options
) -> dict[str, Any]:
    """Build a comparison of the runs under ``paths`` and write it to ``out_dir`` (see
    ``build_comparison`` for the options). Returns the comparison dict."""
    result = build_comparison(paths, registry, **options)
    write_comparison(result, out_dir, plots=plots, html=html)
    return result


__all__ = ["build_comparison", "compare", "write_comparison"]
