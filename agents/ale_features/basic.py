"""Basic and BASS: which colours are on the screen where (Bellemare et al. 2013, section 3.1.1 and
appendices A.1 and A.2).

Both remove the game's background first (a pixel showing its background colour is ignored;
:class:`~benchgen_agents.ale_features.common.BackgroundHistogram`), then divide the screen into
a 16 x 14 grid of tiles (appendix C: grid width 16, height 14; a tile is 10 x 15 pixels):

* **Basic** has one binary feature per tile and colour, for all 128 NTSC colours: 14 x 16 x 128 =
  28,672 features ("giving a total of 28,672 features"); feature ``tile * 128 + colour``.
* **BASS** uses the 8 colours of the SECAM palette instead ("BASS uses a smaller, 8-colour
  encoding"), 14 x 16 x 8 = 1,792 features, and adds every pairwise combination of them
  ("BASS augments the Basic feature set with pairwise combinations of its features", appendix
  A.1: "all pairwise combinations of its encoded colour features"): 1,792 + 1,792 x 1,791 / 2 =
  1,606,528 features. On a SECAM console the TIA shows the colour given by the luminance bits of
  the colour register only, so the SECAM colour of NTSC palette index ``c`` (hue in bits 3-6,
  luminance in bits 0-2) is ``c & 7``.

Vectorized: one ``bincount`` over the foreground pixels' ``tile * colours + colour`` codes.
"""

from __future__ import annotations

import numpy as np

from benchgen_agents.ale_features.common import (
    GRID_COLUMNS,
    GRID_ROWS,
    NUM_COLOURS,
    SCREEN_SHAPE,
    num_with_pairs,
    pair_indices,
    tile_of_pixel,
)

#: SECAM's 8 colours (ALE paper, appendix A.1)
SECAM_COLOURS = 8


def secam_colour(screen: np.ndarray) -> np.ndarray:
    """The SECAM colour (0..7) of each NTSC palette index: its luminance bits."""
    return np.asarray(screen) & (SECAM_COLOURS - 1)


class BasicFeatures:
    """Basic (``colours=128``) or the single-tile part of BASS (``colours=8``, SECAM colours)."""

    inputs = "palette_screen"
    uses_background = True

    def __init__(self, colours: int = NUM_COLOURS, rows: int = GRID_ROWS, columns: int = GRID_COLUMNS):
        if colours not in (NUM_COLOURS, SECAM_COLOURS):
            raise ValueError(f"colours must be {NUM_COLOURS} (Basic) or {SECAM_COLOURS} (BASS), not {colours}")
        self.colours = colours
        self.tiles = rows * columns
        self.num_features = self.tiles * colours
        self._tile_code = tile_of_pixel(SCREEN_SHAPE, rows, columns) * colours

    def reset(self) -> None:
        """Nothing to forget between episodes."""

    def __call__(self, screen: np.ndarray, background: np.ndarray | None = None) -> np.ndarray:
        """Active features of ``screen`` (palette indices), the pixels equal to ``background``
        (same shape; None: no subtraction) left out; sorted ``int64``."""
        screen = np.asarray(screen)
        colour = screen if self.colours == NUM_COLOURS else secam_colour(screen)
        codes = self._tile_code + colour
        if background is not None:
            codes = codes[screen != background]
        present = np.bincount(codes.ravel(), minlength=self.num_features)
        return np.flatnonzero(present)


class BassFeatures:
    """BASS: the SECAM-colour tiles and all pairs of them."""

    inputs = "palette_screen"
    uses_background = True

    def __init__(self, rows: int = GRID_ROWS, columns: int = GRID_COLUMNS):
        self.single = BasicFeatures(SECAM_COLOURS, rows, columns)
        self.num_features = num_with_pairs(self.single.num_features)

    def reset(self) -> None:
        """Nothing to forget between episodes."""

    def __call__(self, screen: np.ndarray, background: np.ndarray | None = None) -> np.ndarray:
        active = self.single(screen, background)
        return np.concatenate([active, pair_indices(active, self.single.num_features)])
