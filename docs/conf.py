"""Sphinx configuration of benchgen's documentation site (``docs/``).

Build it from the repository root with ``python -m sphinx -W --keep-going -b html docs docs/_build``;
``tests/docs/test_site.py`` builds it the same way, so a broken link or reference fails the tests.
The pages are Markdown (MyST); the reference pages are generated from the code at every build
(``_ext/benchgen_reference.py``).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

project = "benchgen"
author = "the benchgen developers"
extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "benchgen_reference"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_ext", "**/scores/**"]

# every heading down to ### gets an anchor, so links to a section are checked like links to a page
myst_heading_anchors = 4
myst_enable_extensions = ["colon_fence"]
# a reference Sphinx cannot resolve is a warning, and the build treats warnings as errors: a
# docstring naming a benchgen module, class or function that does not exist fails the build. Names
# outside benchgen (the standard library, numpy, gymnasium) are not checked: their inventories
# would be fetched from the network.
nitpicky = True
nitpick_ignore_regex = [(r"py:.*", r"(?!benchgen\.).*")]

html_theme = "furo"
html_title = "benchgen"
autodoc_member_order = "bysource"
# a method without a docstring of its own shows none, rather than its base class's (gymnasium's)
autodoc_inherit_docstrings = False


def _drop_empty_patterns(app, docname, source):
    """The tutorials, results and papers pages are listed by pattern in the home page's tables of
    contents (``docs/index.md``), as their authors and scripts add them; a pattern that matches no
    page yet (none that an earlier pattern has not taken) is left out rather than failing the
    build, as Sphinx's warning for it cannot be suppressed by its type."""
    if docname != root_doc:
        return
    srcdir = Path(app.srcdir)
    taken: set[Path] = set()
    kept = []
    in_toctree = False
    for line in source[0].splitlines():
        if line.startswith("```"):
            in_toctree = line.startswith("```{toctree}")
        elif in_toctree and any(c in line for c in "*[") and not line.startswith(":"):
            pages = set(srcdir.glob(line.strip() + ".md")) - taken
            if not pages:
                continue
            taken |= pages
        kept.append(line)
    source[0] = "\n".join(kept) + "\n"


def setup(app):
    app.connect("source-read", _drop_empty_patterns)
