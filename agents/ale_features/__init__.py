"""The linear-agent feature sets of the Atari papers, as sparse active-feature index lists.

* Bellemare et al. 2013 (the ALE paper), section 3.1.1 and appendix A: Basic and BASS
  (:mod:`.basic`), DISCO (:mod:`.disco`), LSH (:mod:`.lsh`), RAM (:mod:`.ram`);
* Liang et al. 2016: Blob-PROST (:mod:`.blob_prost`), the features of Machado et al. 2018's
  Sarsa(lambda).

Every extractor is a callable ``extractor(x, background) -> sorted int64 indices`` of its active
binary features, where ``x`` is what its ``inputs`` names: ``"palette_screen"`` (the screen as
palette indices 0..127, ``uint8`` 210 x 160) or ``"ram"`` (the 128 RAM bytes); it has
``num_features``, ``reset()`` (called at every episode start) and ``uses_background`` (whether
the ALE paper removes the game's background first, :class:`.common.BackgroundHistogram`).
They are pure numpy (and ``scipy.ndimage`` for blobs); none knows a suite or an agent.
"""

from __future__ import annotations

from typing import Any

#: ``features=`` values of the Sarsa agent, in the papers' order
FEATURE_SETS = ("basic", "bass", "disco", "lsh", "ram", "blob_prost")


def make_extractor(name: str, seed: int = 0, **options: Any):
    """The extractor of feature set ``name`` (:data:`FEATURE_SETS`). ``seed`` draws LSH's random
    vectors; ``options`` are the set's own parameters (``lsh_vectors``, ``lsh_nonzero``,
    ``lsh_buckets``, ``blob_neighbourhood``); those of other sets are ignored."""
    if name == "basic":
        from benchgen_agents.ale_features.basic import BasicFeatures

        return BasicFeatures()
    if name == "bass":
        from benchgen_agents.ale_features.basic import BassFeatures

        return BassFeatures()
    if name == "disco":
        from benchgen_agents.ale_features.disco import DiscoFeatures

        return DiscoFeatures(seed)
    if name == "lsh":
        from benchgen_agents.ale_features.lsh import LshFeatures

        return LshFeatures(
            seed,
            vectors=options.get("lsh_vectors", 2000),
            nonzero=options.get("lsh_nonzero", 1000),
            buckets=options.get("lsh_buckets", 50),
        )
    if name == "ram":
        from benchgen_agents.ale_features.ram import RamFeatures

        return RamFeatures()
    if name == "blob_prost":
        from benchgen_agents.ale_features.blob_prost import BlobProstFeatures

        return BlobProstFeatures(neighbourhood=options.get("blob_neighbourhood", 3))
    raise ValueError(f"unknown feature set {name!r}; known: {', '.join(FEATURE_SETS)}")
