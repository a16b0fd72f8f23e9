"""The plugin's hook implementation (registered through the ``benchgen`` entry point)."""

from __future__ import annotations

import benchgen


@benchgen.hookimpl
def benchgen_suites():
    """The ``gymnasium`` suite."""
    from .suite import GymnasiumSuite

    return [GymnasiumSuite()]
