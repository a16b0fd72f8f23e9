"""The plugin's hook implementations (registered through the ``benchgen`` entry point)."""

from __future__ import annotations

import benchgen
from benchgen.suite import load_split_yaml

SUITE_NAME = "atari_saber"


@benchgen.hookimpl
def benchgen_suites():
    """The ``atari_saber`` suite."""
    from benchgen_atari_saber.suite import AtariSaberSuite

    return [AtariSaberSuite()]


@benchgen.hookimpl
def benchgen_splits(suite):
    """The split files shipped in ``splits/atari_saber/`` (all, wr58, ale_train5, ...)."""
    if suite.name != SUITE_NAME:
        return []
    import benchgen_splits

    return [load_split_yaml(path, suite=SUITE_NAME) for path in benchgen_splits.split_files(SUITE_NAME)]


@benchgen.hookimpl
def benchgen_scorer(suite):
    """World-record / human / Rainbow-IQN normalization for ``atari_saber``."""
    if suite.name != SUITE_NAME:
        return None
    from benchgen_atari_saber.scoring import AtariScorer

    return AtariScorer()


@benchgen.hookimpl
def benchgen_reference_scores(suite):
    """World records, human beginners and SABER's Rainbow-IQN (by checkpoint)."""
    if suite.name != SUITE_NAME:
        return []
    from benchgen_atari_saber.scoring import reference_tables

    return reference_tables()
