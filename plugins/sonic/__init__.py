"""Sonic suite (stable-retro): the "Gotta Learn Fast" generalization protocol.

Nichol, Pfau, Hesse, Klimov, Schulman 2018. Modules, in reading order:

* :mod:`~benchgen_sonic.levels`: the 58 levels, task names, end offsets, per-game end rules;
* :mod:`~benchgen_sonic.protocol`: frame skip, sticky actions, time limit, reward constants;
* :mod:`~benchgen_sonic.progress`: the benchmark reward and episode ends, per frame;
* :mod:`~benchgen_sonic.env`: one level on one emulator (sticky frame skip);
* :mod:`~benchgen_sonic.vector`: one worker process per sub-environment, benchgen's contract;
* :mod:`~benchgen_sonic.wrappers`: the paper's agent-side preprocessing;
* :mod:`~benchgen_sonic.suite`, :mod:`~benchgen_sonic.scoring`: the suite and its scorer;
* :mod:`~benchgen_sonic.roms`, :mod:`~benchgen_sonic.cli`: ROM checks and ``import-roms``;
* :mod:`~benchgen_sonic.testing`: a test integration on the free Airstriker ROM.

This module holds the plugin's hook implementations only.
"""

from __future__ import annotations

import benchgen

SUITE_NAME = "sonic"


@benchgen.hookimpl
def benchgen_suites():
    from benchgen_sonic.suite import SonicSuite

    return [SonicSuite()]


@benchgen.hookimpl
def benchgen_splits(suite):
    if suite.name != SUITE_NAME:
        return []
    from benchgen.suite import load_split_yaml
    from benchgen_splits import split_files

    return [load_split_yaml(path, suite=SUITE_NAME) for path in split_files(SUITE_NAME)]


@benchgen.hookimpl
def benchgen_scorer(suite):
    if suite.name != SUITE_NAME:
        return None
    from benchgen_sonic.scoring import SonicScorer

    return SonicScorer()


@benchgen.hookimpl
def benchgen_reference_scores(suite):
    if suite.name != SUITE_NAME:
        return []
    from benchgen_sonic.scoring import reference_tables

    return reference_tables()


@benchgen.hookimpl
def benchgen_add_commands(subparsers):
    from benchgen_sonic.cli import add_commands

    add_commands(subparsers)
