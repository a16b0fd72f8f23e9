"""Blob-PROST: colour blobs and the pairwise relative offsets between them, in space and in time
(Liang, Machado, Talvitie and Bowling 2016, "State of the Art Control of Atari Games Using
Shallow Reinforcement Learning", AAMAS; the feature set of Machado et al. 2018's Sarsa(lambda)).

Liang et al. build it in steps from Basic (Bellemare et al. 2013's tiles of colours, without
background removal): B-PROS adds, for every pair of colours and every relative offset between two
tiles, whether a tile of the first colour and one of the second lie at that offset ("Pairwise
Relative Offsets in Space"); B-PROT does the same between the previous screen and the current one
("in Time"); Blob-PROST computes all three from *blobs* instead of tiles: groups of pixels of one
colour, each blob standing for one object however many tiles it covers. Concretely, as Liang et
al.'s released code (Machado's b-pro, ``BlobTimeFeatures``) computes them:

* **blobs**: pixels of the same palette colour belong to the same blob when a chain of such
  pixels joins them, each within ``neighbourhood`` pixels (Chebyshev distance, default 3) of the
  next, so that dotted or flickering sprites stay one blob; a blob's position is the centre of its
  bounding box, integer-rounded down;
* positions are counted in tiles of ``tile_rows x tile_columns`` pixels (15 x 10: the 14 x 16
  Basic grid), so offsets run over 27 x 31 values;
* **Basic part**: blob of colour ``c`` centred in tile ``t``: feature ``t * 128 + c``;
* **PROS part**: for colours ``c1 < c2``, a blob of ``c1`` and one of ``c2`` at tile offset
  ``(dr, dc)`` (``c1``'s minus ``c2``'s); for ``c1 == c2``, the offsets of ordered pairs of its
  blobs with ``dr > 0``, or ``dr == 0`` and ``dc >= 0`` (a blob with itself gives ``(0, 0)``);
  ``(1 + 128) * 128 / 2 = 8,256`` colour pairs x 837 offsets;
* **PROT part**: a blob of colour ``c1`` on the previous screen and one of ``c2`` on this one at
  offset ``(dr, dc)`` (previous minus current), all ``128 x 128`` ordered colour pairs x 837
  offsets; absent on an episode's first screen (:meth:`BlobProstFeatures.reset`);
* one bias feature, always active, last.

20,652,353 features in all; a screen activates a few hundred to a few thousand. Vectorized: the
blobs of each colour present are the 8-connected components of its pixels dilated by a box (two
pixels at distance <= ``neighbourhood`` are exactly those whose boxes touch), labelled by
``scipy.ndimage``; the pairs are all computed at once by broadcasting.
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from benchgen_agents.ale_features.common import NUM_COLOURS, SCREEN_SHAPE

#: Liang et al.'s released code: a pixel joins a same-coloured pixel up to 3 pixels away
NEIGHBOURHOOD = 3
#: ... and offsets are counted in tiles of 15 x 10 pixels (the 14 x 16 Basic grid)
TILE_ROWS, TILE_COLUMNS = 15, 10


def box_dilation(pixels: np.ndarray, size: int) -> np.ndarray:
    """``pixels`` (bool) dilated by a ``size x size`` box: shifted ORs, rows then columns."""
    lo, hi = size // 2, size - 1 - size // 2
    out = pixels.copy()
    for d in range(1, lo + 1):  # from the pixels d above / to the left
        out[d:] |= pixels[:-d]
    for d in range(1, hi + 1):
        out[:-d] |= pixels[d:]
    rows = out.copy()
    for d in range(1, lo + 1):
        out[:, d:] |= rows[:, :-d]
    for d in range(1, hi + 1):
        out[:, :-d] |= rows[:, d:]
    return out


def find_blobs(screen: np.ndarray, neighbourhood: int = NEIGHBOURHOOD) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The blobs of ``screen`` (palette indices): ``(colour, row, column)`` arrays, one entry per
    blob, its position the centre of its bounding box (rounded down); ordered by colour."""
    screen = np.asarray(screen)
    eight = np.ones((3, 3), dtype=bool)
    colours, rows, columns = [], [], []
    for colour in np.flatnonzero(np.bincount(screen.ravel(), minlength=NUM_COLOURS)):
        pixels = screen == colour
        # work on the colour's bounding box only (most colours cover a small part of the screen)
        ys, xs = np.flatnonzero(pixels.any(axis=1)), np.flatnonzero(pixels.any(axis=0))
        y0, x0 = ys[0], xs[0]
        pixels = pixels[y0 : ys[-1] + 1, x0 : xs[-1] + 1]
        if pixels.all():  # one solid rectangle: one blob
            found = [(slice(0, pixels.shape[0]), slice(0, pixels.shape[1]))]
        else:
            # boxes of side h around two pixels touch iff the pixels are at most h apart
            labels, count = ndimage.label(box_dilation(pixels, neighbourhood), structure=eight)
            labels[~pixels] = 0  # bounding boxes of the blob's own pixels, not of the dilation
            found = [f for f in ndimage.find_objects(labels, count) if f is not None]
        for rs, cs in found:
            colours.append(colour)
            rows.append(y0 + (rs.start + rs.stop - 1) // 2)
            columns.append(x0 + (cs.start + cs.stop - 1) // 2)
    return np.asarray(colours, np.int64), np.asarray(rows, np.int64), np.asarray(columns, np.int64)


class BlobProstFeatures:
    """Blob-PROST; remembers the previous screen's blobs for the PROT part."""

    inputs = "palette_screen"
    uses_background = False

    def __init__(
        self, neighbourhood: int = NEIGHBOURHOOD, tile_rows: int = TILE_ROWS, tile_columns: int = TILE_COLUMNS
    ):
        if neighbourhood < 1:
            raise ValueError(f"the blob neighbourhood is at least 1 pixel, not {neighbourhood}")
        self.neighbourhood = neighbourhood
        self.tile = (tile_rows, tile_columns)
        self.blocks = (SCREEN_SHAPE[0] // tile_rows, SCREEN_SHAPE[1] // tile_columns)
        self.offsets = (2 * self.blocks[0] - 1, 2 * self.blocks[1] - 1)
        per_pair = self.offsets[0] * self.offsets[1]
        self.basic_size = self.blocks[0] * self.blocks[1] * NUM_COLOURS
        self.pros_size = (1 + NUM_COLOURS) * NUM_COLOURS // 2 * per_pair
        self.prot_size = NUM_COLOURS * NUM_COLOURS * per_pair
        self.bias = self.basic_size + self.pros_size + self.prot_size
        self.num_features = self.bias + 1
        self.previous: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def reset(self) -> None:
        """A new episode: no previous screen."""
        self.previous = None

    def _offset(self, dr: np.ndarray, dc: np.ndarray) -> np.ndarray:
        return (dr + self.blocks[0] - 1) * self.offsets[1] + (dc + self.blocks[1] - 1)

    def __call__(self, screen: np.ndarray, background: np.ndarray | None = None) -> np.ndarray:
        """Active features of ``screen`` (palette indices; ``background`` unused: Blob-PROST
        keeps it); sorted ``int64``. Call :meth:`reset` at every episode start."""
        colour, row, column = find_blobs(screen, self.neighbourhood)
        tr, tc = row // self.tile[0], column // self.tile[1]
        per_pair = self.offsets[0] * self.offsets[1]
        parts = [(tr * self.blocks[1] + tc) * NUM_COLOURS + colour]

        # PROS: every ordered pair of blobs of this screen, each unordered one counted once
        c1, c2 = colour[:, None], colour[None, :]
        dr, dc = tr[:, None] - tr[None, :], tc[:, None] - tc[None, :]
        keep = (c1 < c2) | ((c1 == c2) & ((dr > 0) | ((dr == 0) & (dc >= 0))))
        c1, c2 = np.broadcast_to(c1, keep.shape)[keep], np.broadcast_to(c2, keep.shape)[keep]
        pair = c1 * NUM_COLOURS - c1 * (c1 - 1) // 2 + (c2 - c1)  # (c1 <= c2) in row-major triangle order
        parts.append(self.basic_size + pair * per_pair + self._offset(dr[keep], dc[keep]))

        # PROT: every blob of the previous screen against every blob of this one
        if self.previous is not None:
            pc, pr, pcol = self.previous
            ptr, ptc = pr // self.tile[0], pcol // self.tile[1]
            pair = (pc[:, None] * NUM_COLOURS + colour[None, :]).ravel()
            offset = self._offset((ptr[:, None] - tr[None, :]).ravel(), (ptc[:, None] - tc[None, :]).ravel())
            parts.append(self.basic_size + self.pros_size + pair * per_pair + offset)
        self.previous = (colour, row, column)
        parts.append(np.array([self.bias], dtype=np.int64))
        return np.unique(np.concatenate(parts))
