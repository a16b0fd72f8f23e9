"""The comparison page renders in headless Chromium: its tables and all its plots.

CI installs Chromium with ``apt-get install -y chromium``; without /usr/bin/chromium the test
skips (it never installs anything).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from benchgen.cli import main

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)


@pytest.mark.skipif(CHROMIUM is None, reason="needs Chromium (/usr/bin/chromium; CI: apt-get install -y chromium)")
def test_page_renders_plots_and_tables_in_chromium(two_agents, tmp_path):
    out = tmp_path / "out"
    assert main(["compare", str(two_agents), "--out", str(out), "--reps", "50", "--curve-points", "4"]) == 0
    page = out / "compare.html"
    text = page.read_text()
    assert "http://" not in text and "https://" not in text, "the page must be self-contained"
    n_images = text.count("<img ")
    assert n_images == 6
    proc = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--disable-dev-shm-usage",
            f"--user-data-dir={tmp_path / 'chromium-profile'}",
            "--virtual-time-budget=10000",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    dom = proc.stdout
    assert "<table" in dom, f"Chromium rendered nothing: {proc.stderr[-2000:]}"
    body = re.search(r"<body([^>]*)>", dom).group(1)
    assert f'data-images-loaded="{n_images}/{n_images}"' in body, body
    assert 'data-rendered="yes"' in body
    for table_id in (
        "runs",
        "aggregates",
        "probability-of-improvement",
        "classes",
        "welch-0",
        "per-task-normalized",
        "per-task-score",
        "per-task-score_half",
    ):
        assert f'id="{table_id}"' in dom, table_id
    aggregates = re.search(r'<table id="aggregates">.*?</table>', dom, re.DOTALL).group(0)
    assert aggregates.count("<tr>") == 1 + 4  # header, two agents, the toy reference agent, the published aggregate
    assert "40.00% [" in aggregates  # agent_a's median with its interval
