"""Atari SABER suite (ale-py): the SABER protocol and world-record normalization.

Modules: ``env`` (the vector env and the protocol constants), ``suite`` (the ``Suite``),
``scoring`` (baselines and normalization), ``tables`` (the data CSVs), ``hooks`` (the plugin's
hook implementation, re-exported here because the entry point names this package). The split
files are in ``splits/``, the score tables in ``data/``.
"""

from benchgen_atari_saber.hooks import benchgen_suites  # noqa: F401  (pluggy finds hooks on this module)
