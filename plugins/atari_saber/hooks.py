"""The plugin's hook implementations (registered through the ``benchgen`` entry point).

The suite owns its data (``Suite`` methods): its splits are the files in ``splits/``, its scorer
and reference tables come from ``scoring``.
"""

from __future__ import annotations

import benchgen


@benchgen.hookimpl
def benchgen_suites():
    """The ``atari_saber`` suite."""
    from benchgen_atari_saber.suite import AtariSaberSuite

    return [AtariSaberSuite()]
