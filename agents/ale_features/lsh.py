"""LSH: random projections of the binarized screen, hashed into a few buckets each (Bellemare et
al. 2013, section 3.1.1, appendix A.4 and its Algorithm 1).

Algorithm 1, with appendix C's sizes: the screen is a bit vector ``s`` of ``n = 7 x 210 x 160``
bits (the 7 bits of every pixel's colour: appendix A.4, "a bit vector of size 7 x 210 x 160");
``l = 2000`` random vectors ``v_i`` each select ``k = 1000`` distinct coordinates; each vector
has a table ``hash_i`` of a random bucket per coordinate, and the screen's bucket for vector
``i`` is ``h_i = sum_j [s_j = 1] hash_i[j] mod M`` over the coordinates ``j`` of ``v_i`` ("hash
the projection of s onto v_i"), ``M = 50``. Feature ``M * i + h_i`` is active: exactly ``l`` of
the ``l * M = 100,000`` features, one per vector.

Two readings of the printed pseudocode, stated here because they change the features: its
``binarizeScreen`` writes ``s[x + y*h + I_xy]``, a typo for one slot per pixel and colour bit, and
its inner loop runs over all ``n`` coordinates with ``[s_j = v_ij]``, which would count the zeros
outside ``v_i`` too; the comment beside it ("the projection of s onto v_i") and LSH's bit
sampling (Gionis et al. 1999) read it as the sum over ``v_i``'s ``k`` coordinates, done here.
Whether the background is removed first is not said; it is not (LSH is "agnostic about the type
of input"). The vectors and tables are drawn from the agent's seed.

Vectorized: the ``l`` sums are one sparse matrix-vector product (``l x n`` with ``l * k``
non-zeros, the buckets) with the screen's bit vector.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse

from benchgen_agents.ale_features.common import SCREEN_SHAPE

#: bits per pixel (the NTSC palette index)
COLOUR_BITS = 7


class LshFeatures:
    """Locality-sensitive hashing of the screen's bits (Algorithm 1)."""

    inputs = "palette_screen"
    uses_background = False

    def __init__(self, seed: int, vectors: int = 2000, nonzero: int = 1000, buckets: int = 50):
        n = COLOUR_BITS * SCREEN_SHAPE[0] * SCREEN_SHAPE[1]
        if not 0 < nonzero <= n:
            raise ValueError(f"each random vector selects 1 to {n} coordinates, not {nonzero}")
        rng = np.random.default_rng(seed)
        coords = np.stack([rng.choice(n, nonzero, replace=False) for _ in range(vectors)])
        hashes = rng.integers(0, buckets, size=(vectors, nonzero))
        # coordinate c is bit c % 7 of pixel c // 7; the bit vector below is laid out bit-major
        pixels = SCREEN_SHAPE[0] * SCREEN_SHAPE[1]
        columns = (coords % COLOUR_BITS) * pixels + coords // COLOUR_BITS
        rows = np.repeat(np.arange(vectors), nonzero)
        # float32 sums are exact: at most k * (M - 1) = 49,000 < 2**24
        self.projection = scipy.sparse.csr_matrix(
            (hashes.ravel().astype(np.float32), (rows, columns.ravel())), shape=(vectors, n)
        )
        self._shifts = np.arange(COLOUR_BITS, dtype=np.uint8)[:, None]
        self.buckets = buckets
        self.num_features = vectors * buckets
        self._base = np.arange(vectors, dtype=np.int64) * buckets

    def reset(self) -> None:
        """Nothing to forget between episodes."""

    def __call__(self, screen: np.ndarray, background: np.ndarray | None = None) -> np.ndarray:
        """The ``l`` active features of ``screen`` (palette indices), one per random vector; sorted."""
        bits = (np.asarray(screen, dtype=np.uint8).ravel()[None, :] >> self._shifts) & 1
        sums = self.projection @ bits.ravel().astype(np.float32)
        return self._base + sums.astype(np.int64) % self.buckets
