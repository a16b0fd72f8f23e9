"""DISCO: Detecting Instances of Classes of Objects (Bellemare et al. 2013, section 3.1.1 and
appendix A.3), as far as the paper describes it.

Preprocessing, on sample screens of random play with the background removed (appendix C: 36,000
screens, at most 10 classes, a class kept if it appears in at least 20% of them):

* blob extraction: the foreground's objects are the 8-connected groups of pixels of one colour;
* class discovery: an object's class is its colour and the size of its bounding box;
* class merging: classes of one colour whose sizes differ by at most one pixel in each direction
  are one class ("classes that have similar shapes are merged together");
* class filtering: classes seen on fewer than 20% of the sample screens are dropped ("classes
  that appear infrequently"), and of the rest the 10 most frequent are kept.

Features, each screen: the objects of known classes are found, and tile-coded (8 tilings of an
8 x 8 grid, appendix C) are "their absolute position as well as the relative position and
velocity of every pair of instances from different classes". An object's velocity is its
displacement from the nearest object of its class on the previous screen, if one lies within 8
pixels in each direction (appendix C's maximum object velocity), else zero.

What the paper leaves out and benchgen chose: the shape test of "class discovery" (the paper's
code is not described; a bounding-box size is used), the "restricted to a small region" filter
(not applied), and how instances are "combined additively": here the features are binary, as the
rest of the learner's (an instance count would need a weighted Sarsa update). Layout: absolute
positions ``class x tiling x 81`` (8 x 8 tiles, offset by ``tiling / 8`` of a tile, so 9 x 9),
then relative positions and relative velocities, each ``class pair x tiling x 81``.
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from benchgen_agents.ale_features.common import NUM_COLOURS, SCREEN_SHAPE

#: appendix C
MAX_CLASSES, MIN_FREQUENCY, MAX_VELOCITY, TILINGS, GRID = 10, 0.20, 8, 8, 8
CELLS = (GRID + 1) ** 2  # an offset tiling covers one more row and column of tiles


def objects(screen: np.ndarray, background: np.ndarray | None) -> np.ndarray:
    """The foreground's objects: rows ``(colour, centre row, centre column, height, width)``."""
    screen = np.asarray(screen)
    foreground = np.ones(screen.shape, dtype=bool) if background is None else screen != background
    found = []
    eight = np.ones((3, 3), dtype=bool)
    for colour in np.flatnonzero(np.bincount(screen[foreground], minlength=NUM_COLOURS)):
        labels, count = ndimage.label(foreground & (screen == colour), structure=eight)
        for rs, cs in ndimage.find_objects(labels, count):
            h, w = rs.stop - rs.start, cs.stop - cs.start
            found.append((colour, (rs.start + rs.stop - 1) // 2, (cs.start + cs.stop - 1) // 2, h, w))
    return np.asarray(found, dtype=np.int64).reshape(-1, 5)


def tile_code(y: np.ndarray, x: np.ndarray, low: tuple[float, float], span: tuple[float, float]) -> np.ndarray:
    """Tile coding of points ``(y, x)`` in the box ``low .. low + span``: for each of the
    :data:`TILINGS` tilings, the cell (of ``CELLS``) holding each point; shape ``(points, TILINGS)``."""
    t = np.arange(TILINGS)[None, :] / TILINGS
    cy = np.floor((np.asarray(y, float)[:, None] - low[0]) / span[0] * GRID + t).astype(np.int64)
    cx = np.floor((np.asarray(x, float)[:, None] - low[1]) / span[1] * GRID + t).astype(np.int64)
    return np.clip(cy, 0, GRID) * (GRID + 1) + np.clip(cx, 0, GRID)


class DiscoFeatures:
    """DISCO; :meth:`observe` its sample screens, then :meth:`finish`, before extracting."""

    inputs = "palette_screen"
    uses_background = True
    #: appendix C: sample screens per game for class discovery
    discovery_samples = 36_000

    def __init__(self, seed: int = 0):
        pairs = MAX_CLASSES * (MAX_CLASSES - 1) // 2
        self.absolute_size = MAX_CLASSES * TILINGS * CELLS
        self.pair_size = pairs * TILINGS * CELLS
        self.num_features = self.absolute_size + 2 * self.pair_size
        self.counts: dict[tuple[int, int, int], int] = {}  # (colour, h, w) -> sample screens showing it
        self.samples = 0
        self.classes: np.ndarray | None = None  # (class, 3): colour, h, w of the kept classes
        self.previous: np.ndarray | None = None

    # -- class discovery -------------------------------------------------------------------
    def observe(self, screen: np.ndarray, background: np.ndarray | None) -> None:
        """Count the shapes of one sample screen's objects."""
        for key in {tuple(int(v) for v in (o[0], o[3], o[4])) for o in objects(screen, background)}:
            self.counts[key] = self.counts.get(key, 0) + 1
        self.samples += 1

    def finish(self) -> None:
        """Merge, filter and keep the classes (see the module docstring)."""
        merged: list[list] = []  # [colour, h, w, screens], the most frequent shape first
        for (colour, h, w), n in sorted(self.counts.items(), key=lambda kv: -kv[1]):
            for m in merged:
                if m[0] == colour and abs(m[1] - h) <= 1 and abs(m[2] - w) <= 1:
                    m[3] += n
                    break
            else:
                merged.append([colour, h, w, n])
        frequent = [m for m in merged if m[3] >= MIN_FREQUENCY * max(self.samples, 1)]
        frequent.sort(key=lambda m: -m[3])
        self.classes = np.asarray([m[:3] for m in frequent[:MAX_CLASSES]], dtype=np.int64).reshape(-1, 3)

    def state(self) -> dict:
        return {"counts": [[*k, n] for k, n in self.counts.items()], "samples": self.samples}

    def load_state(self, state: dict) -> None:
        self.counts = {tuple(row[:3]): row[3] for row in state["counts"]}
        self.samples = int(state["samples"])

    # -- features ----------------------------------------------------------------------------
    def reset(self) -> None:
        """A new episode: no previous screen (velocities zero)."""
        self.previous = None

    def _classify(self, found: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each object's class (-1: none) and the objects of a known class."""
        if self.classes is None:
            raise RuntimeError("DISCO needs its classes: observe() sample screens, then finish()")
        c = self.classes
        if len(c) == 0 or len(found) == 0:  # nothing to classify: no objects of a known class
            return np.empty(0, dtype=np.int64), found[:0]
        match = (
            (found[:, None, 0] == c[None, :, 0])
            & (np.abs(found[:, None, 3] - c[None, :, 1]) <= 1)
            & (np.abs(found[:, None, 4] - c[None, :, 2]) <= 1)
        )
        cls = np.where(match.any(axis=1), match.argmax(axis=1), -1)
        return cls[cls >= 0], found[cls >= 0]

    def __call__(self, screen: np.ndarray, background: np.ndarray | None = None) -> np.ndarray:
        cls, found = self._classify(objects(screen, background))
        y, x = found[:, 1], found[:, 2]
        velocity = np.zeros((len(found), 2), dtype=np.int64)
        if self.previous is not None and len(found):
            pcls, py, px = self.previous
            dy, dx = y[:, None] - py[None, :], x[:, None] - px[None, :]
            near = (cls[:, None] == pcls[None, :]) & (np.abs(dy) <= MAX_VELOCITY) & (np.abs(dx) <= MAX_VELOCITY)
            distance = np.where(near, np.maximum(np.abs(dy), np.abs(dx)), 10**6)
            if distance.size:
                nearest = distance.argmin(axis=1)
                has = near[np.arange(len(found)), nearest]
                velocity[has, 0] = dy[has, nearest[has]]
                velocity[has, 1] = dx[has, nearest[has]]
        self.previous = (cls, y, x)

        tiling = np.arange(TILINGS)[None, :] * CELLS
        parts = [((cls[:, None] * TILINGS) * CELLS + tiling + tile_code(y, x, (0, 0), SCREEN_SHAPE)).ravel()]
        i, j = np.nonzero(cls[:, None] < cls[None, :])  # pairs of objects of different classes
        if len(i):
            a, b = cls[i], cls[j]
            pair = a * MAX_CLASSES - a * (a + 1) // 2 + (b - a - 1)  # index of class pair a < b
            base = (pair[:, None] * TILINGS) * CELLS + tiling
            h, w = SCREEN_SHAPE
            relative = tile_code(y[i] - y[j], x[i] - x[j], (-h, -w), (2 * h, 2 * w))
            v = velocity[i] - velocity[j]
            span = 4 * MAX_VELOCITY  # relative velocities lie in [-16, 16]
            moving = tile_code(v[:, 0], v[:, 1], (-span / 2, -span / 2), (span, span))
            parts.append(self.absolute_size + (base + relative).ravel())
            parts.append(self.absolute_size + self.pair_size + (base + moving).ravel())
        return np.unique(np.concatenate(parts)).astype(np.int64)
