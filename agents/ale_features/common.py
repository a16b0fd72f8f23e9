"""What the ALE paper's feature sets share: the screen's shape and palette, the tile grid, the
per-pixel background, and the index of a pair of features.

Bellemare et al. 2013 (the ALE paper), section 2.2: "each observation consists of a single game
screen (frame): a 2D array of 7-bit pixels, 160 pixels wide by 210 pixels high". The extractors of
this package read that array as palette indices ``0..127`` (``Emulators.palette_screen``, ALE's
byte value >> 1), and return the *indices of the active binary features*, sorted and unique: the
sparse form the Sarsa(lambda) learner works on (:mod:`benchgen_agents.sarsa.learner`).
"""

from __future__ import annotations

import numpy as np

#: the Atari 2600 screen as ALE renders it: 210 rows, 160 columns
SCREEN_SHAPE = (210, 160)
#: NTSC palette colours (7 bits)
NUM_COLOURS = 128
#: ALE paper, appendix C: the Basic/BASS grid is 16 tiles wide and 14 tiles high, so a tile is
#: 15 rows by 10 columns of pixels
GRID_ROWS, GRID_COLUMNS = 14, 16


def tile_of_pixel(shape: tuple[int, int] = SCREEN_SHAPE, rows: int = GRID_ROWS, columns: int = GRID_COLUMNS):
    """``(height, width)`` array of each pixel's tile, numbered row-major (``row * columns + col``)."""
    height, width = shape
    y = np.arange(height) * rows // height
    x = np.arange(width) * columns // width
    return (y[:, None] * columns + x[None, :]).astype(np.int64)


def pair_indices(active: np.ndarray, n: int) -> np.ndarray:
    """Indices of the pairwise conjunctions of the active features ``active`` (sorted, unique,
    each in ``[0, n)``): the pair ``i < j`` is feature ``n + i*(2n - i - 1)/2 + (j - i - 1)``, so
    the ``n*(n-1)/2`` pairs follow the ``n`` single features. Sorted, since ``active`` is."""
    active = np.asarray(active, dtype=np.int64)
    if active.size < 2:
        return np.empty(0, dtype=np.int64)
    i, j = np.triu_indices(active.size, 1)
    a, b = active[i], active[j]
    return n + a * (2 * n - a - 1) // 2 + (b - a - 1)


def num_with_pairs(n: int) -> int:
    """Features in a set of ``n`` single features and all their pairs (:func:`pair_indices`)."""
    return n + n * (n - 1) // 2


class BackgroundHistogram:
    """The background of a game, "detected using a simple histogram method" (ALE paper, appendix
    A.1; section 3.1.1: "storing the frequency of colours at each pixel location within a
    histogram"): each pixel's background colour is the colour it showed most often over the
    sample screens. The paper samples 18,000 screens per game (appendix C); the Sarsa agent feeds
    the screens of its first steps (:class:`benchgen_agents.sarsa.config.SarsaConfig`)."""

    def __init__(self, shape: tuple[int, int] = SCREEN_SHAPE):
        self.shape = shape
        self.counts = np.zeros((shape[0] * shape[1], NUM_COLOURS), dtype=np.uint32)
        self._pixels = np.arange(shape[0] * shape[1])
        self.samples = 0

    def add(self, screen: np.ndarray) -> None:
        """Count one screen (palette indices)."""
        self.counts[self._pixels, np.asarray(screen).ravel()] += 1
        self.samples += 1

    def background(self) -> np.ndarray:
        """Each pixel's most frequent colour, ``uint8`` of the screen's shape (ties: the lowest
        palette index)."""
        return self.counts.argmax(axis=1).astype(np.uint8).reshape(self.shape)
