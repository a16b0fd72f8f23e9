"""benchgen-atari-modes: a third-party benchgen plugin that adds to another plugin's suite.

It has no suite of its own. Installed, it registers through the entry-point group ``benchgen``::

    [project.entry-points.benchgen]
    atari_modes = "benchgen_atari_modes"

and gives the first-party ``atari_saber`` suite (whose tasks already include every game's modes
and difficulties, "flavors") what that suite does not ship: the ``farebrother_flavors`` split
(``splits/``, through the ``benchgen_splits`` hook) and Farebrother, Machado & Bowling 2018's
published DQN scores on those flavors (``farebrother2018.py``, through
``benchgen_reference_scores``). Both hooks see every suite and add nothing to the others.
"""

from __future__ import annotations

from pathlib import Path

import benchgen
from benchgen.suite import load_split_yaml

__version__ = "0.2.0"

#: the suite this plugin adds to (another plugin's)
TARGET_SUITE = "atari_saber"
SPLITS = Path(__file__).parent / "splits"


@benchgen.hookimpl
def benchgen_splits(suite):
    if suite.name != TARGET_SUITE:
        return []
    return [load_split_yaml(path, suite=TARGET_SUITE) for path in sorted(SPLITS.glob("*.yaml"))]


@benchgen.hookimpl
def benchgen_reference_scores(suite):
    if suite.name != TARGET_SUITE:
        return []
    from benchgen_atari_modes.farebrother2018 import tables

    return tables()
