"""benchgen-atari-modes: a third-party benchgen plugin, the ALE's game modes and difficulties.

Installed, it registers through the entry-point group ``benchgen``::

    [project.entry-points.benchgen]
    atari_modes = "benchgen_atari_modes"

and this module implements the hooks (see ``benchgen.hookspecs``). The suite, with its splits
and its scorer, lives in ``suite.py``, the environment in ``env.py``, the task list (read from
ale-py) in ``catalogue.py``, the ``benchgen atari-modes`` sub-command in ``commands.py``.
Importing it is cheap: ale-py is loaded only when tasks are listed or an environment is made.
"""

from __future__ import annotations

import benchgen
from benchgen_atari_modes.suite import AtariModesSuite

__version__ = "0.1.0"

SUITE = AtariModesSuite()


@benchgen.hookimpl
def benchgen_suites():
    return [SUITE]


@benchgen.hookimpl
def benchgen_add_commands(subparsers):
    from benchgen_atari_modes.commands import add_commands

    add_commands(subparsers)
