"""Sonic suite (stable-retro): the "Gotta Learn Fast" generalization protocol.

Nichol, Pfau, Hesse, Klimov, Schulman 2018. Modules, in reading order:

* :mod:`~benchgen_sonic.levels`: the 58 levels, task names, end offsets, per-game end rules;
* :mod:`~benchgen_sonic.protocol`: frame skip, sticky actions, time limit, reward constants;
* :mod:`~benchgen_sonic.progress`: the benchmark reward and episode ends, per frame;
* :mod:`~benchgen_sonic.env`: one level on one emulator (sticky frame skip);
* :mod:`~benchgen_sonic.vector`: one worker process per sub-environment, benchgen's contract;
* :mod:`~benchgen_sonic.wrappers`: the paper's agent-side preprocessing;
* :mod:`~benchgen_sonic.suite`, :mod:`~benchgen_sonic.scoring`: the suite and its scorer;
* :mod:`~benchgen_sonic.paper`: the paper's Tables 1-9 as data;
* :mod:`~benchgen_sonic.roms`, :mod:`~benchgen_sonic.cli`: ROM checks and ``import-roms``;
* :mod:`~benchgen_sonic.testing`: a test integration on the free Airstriker ROM.

This module holds the plugin's hook implementations only; the suite owns its data (its splits
are the files in ``splits/``, its scorer and reference tables come from ``scoring``).
"""

from __future__ import annotations

import benchgen


@benchgen.hookimpl
def benchgen_suites():
    from benchgen_sonic.suite import SonicSuite

    return [SonicSuite()]


@benchgen.hookimpl
def benchgen_add_commands(subparsers):
    from benchgen_sonic.cli import add_commands

    add_commands(subparsers)
