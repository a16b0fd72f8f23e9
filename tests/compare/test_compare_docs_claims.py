"""What docs/compare.md claims about compare's defaults is what compare does."""

from __future__ import annotations

import re
from pathlib import Path

from benchgen.results.compare.options import CompareOptions

DOC = Path(__file__).resolve().parents[2] / "docs" / "compare.md"


def test_the_welch_tests_confidence_is_bellemare_et_als_99_percent_in_code_and_docs():
    assert CompareOptions().alpha == 0.01  # Bellemare et al. 2013, section 4.3: 99% confidence
    text = DOC.read_text()
    assert re.search(r"\[--alpha ([0-9.]+)\]", text).group(1) == "0.01"
    assert "default 0.01" in text and "99%" in text
