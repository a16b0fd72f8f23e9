"""The plugin's hook implementation (registered through the ``benchgen`` entry point)."""

from __future__ import annotations

import benchgen


@benchgen.hookimpl
def benchgen_suites():
    """The ``procgen`` suite (listed without the package; its commands then say how to install it)."""
    from .suite import ProcgenSuite

    return [ProcgenSuite()]
