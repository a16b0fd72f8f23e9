"""Atari SABER suite (ale-py): the SABER protocol and world-record normalization.

Modules: ``env`` (the vector env and the protocol constants), ``suite`` (the ``Suite``),
``scoring`` (baselines and normalization), ``tables`` (the data CSVs), ``hooks`` (the plugin's
hook implementations, re-exported here because the entry point names this package).
"""

from benchgen_atari_saber.hooks import (  # noqa: F401  (pluggy finds hooks on this module)
    benchgen_reference_scores,
    benchgen_scorer,
    benchgen_splits,
    benchgen_suites,
)
