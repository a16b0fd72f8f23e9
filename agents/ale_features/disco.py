"""DISCO: Detecting Instances of Classes of Objects (Bellemare et al. 2013, section 3.1.1 and
appendix A.3).

Appendix A.3 lists the steps; appendix C gives the numbers (36,000 sample screens, at most 10
classes, objects moving at most 8 pixels a frame, a class kept if it appears on 20% of the samples;
tile coding with 8 tilings of an 8 x 8 grid). DISCO comes from Naddaf (2010), whose code shipped
with the first ALE releases; where the ALE paper names a step without saying how, this module
follows what Naddaf's thesis and code do (marked "Naddaf") or states benchgen's choice.

Preprocessing, on sample screens of random play (:meth:`DiscoFeatures.observe`, then
:meth:`DiscoFeatures.finish`):

* background detection: the histogram background of Basic and BASS (A.3: "as with BASS");
* blob extraction: the foreground's objects are the 8-connected groups of pixels of one colour,
  each with its *shape*, the binary mask of its pixels in its bounding box;
* class discovery (A.3: "a set of classes is detected from the extracted blob objects"). A class is
  a set of shapes, whatever their colour (A.3's Freeway: ten cars of different colours, one class
  Car). Each sample screen's objects are taken in turn (Naddaf): (1) an object is an instance of the
  first class one of whose shapes it matches exactly, as it is, flipped left-right or upside down,
  or with the smaller of the two shapes lying inside the larger one, pixel for pixel, their areas
  within a factor 1.2 (Naddaf); a match other than the identical shape adds the object's shape to
  the class; (2) otherwise, if an object of the previous sample screen lies within the maximum
  velocity (8 pixels in each direction, appendix C) and differs in at most 10% of the two shapes'
  pixels (Naddaf's measure: squared differences at the best offset over the sum of the two areas),
  the object joins that object's class (the most similar, then the nearest) and adds its shape;
  (3) otherwise it starts a new class (at most 200, Naddaf);
* class filtering (A.3: "classes that appear infrequently or are restricted to small region of the
  screen are removed"): a class is dropped if it appears on fewer than 20% of the sample screens
  (appendix C; benchgen counts screens, Naddaf counted instances), or if the centres of all its
  instances lie within a box narrower than :data:`MIN_REGION` pixels both ways (benchgen's size:
  the maximum velocity, a class that never moves farther than one frame's motion);
* class merging (A.3: "classes that have similar shapes are merged together"): while more than 10
  classes remain, the two closest are merged, their distance being the smallest difference
  (above) between a shape of one and a shape of the other (Naddaf); classes with no comparable
  shapes are never merged, and if more than 10 remain, benchgen keeps the 10 seen on most screens.

Features, each screen: each object is an instance of the class it matches as in step (1) (A.3:
"class instances are detected from the current screen"), and tile-coded are "their absolute
position as well as the relative position and velocity of every pair of instances from different
classes". An object's velocity is its displacement from the nearest instance of its class on the
previous screen, if one lies within 8 pixels in each direction, else zero.

Also benchgen's: how instances are "combined additively" (here the features are binary, as the
rest of the learner's: an instance count would need a weighted Sarsa update); the kept classes are
numbered in the order they were discovered. Layout: absolute positions ``class x tiling x 81``
(8 x 8 tiles, offset by ``tiling / 8`` of a tile, so 9 x 9), then relative positions and relative
velocities, each ``class pair x tiling x 81``.
"""

from __future__ import annotations

import base64

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from scipy import ndimage

from benchgen.errors import UsageError
from benchgen_agents.ale_features.common import NUM_COLOURS, SCREEN_SHAPE

#: appendix C
MAX_CLASSES, MIN_FREQUENCY, MAX_VELOCITY, TILINGS, GRID = 10, 0.20, 8, 8, 8
#: Naddaf: two shapes of different sizes are compared only when their areas are within this factor
MAX_AREA_RATIO = 1.2
#: Naddaf: an object joins a nearby object's class when their shapes differ in at most this share
MAX_SHAPE_DIFFERENCE = 0.1
#: Naddaf: discovery starts no class beyond this many
MAX_DISCOVERED = 200
#: benchgen: a class whose instances' centres never spread this far (pixels) either way is dropped
MIN_REGION = MAX_VELOCITY
CELLS = (GRID + 1) ** 2  # an offset tiling covers one more row and column of tiles

_EIGHT = np.ones((3, 3), dtype=bool)


def blobs(screen: np.ndarray, background: np.ndarray | None) -> tuple[np.ndarray, list[np.ndarray]]:
    """The foreground's objects: rows ``(colour, centre row, centre column, height, width)`` and
    each one's shape (a boolean mask of its bounding box)."""
    screen = np.asarray(screen)
    foreground = np.ones(screen.shape, dtype=bool) if background is None else screen != background
    rows, shapes = [], []
    for colour in np.flatnonzero(np.bincount(screen[foreground], minlength=NUM_COLOURS)):
        labels, count = ndimage.label(foreground & (screen == colour), structure=_EIGHT)
        for label, (rs, cs) in enumerate(ndimage.find_objects(labels, count), start=1):
            h, w = rs.stop - rs.start, cs.stop - cs.start
            rows.append((colour, (rs.start + rs.stop - 1) // 2, (cs.start + cs.stop - 1) // 2, h, w))
            shapes.append(labels[rs, cs] == label)
    return np.asarray(rows, dtype=np.int64).reshape(-1, 5), shapes


def shape_key(shape: np.ndarray) -> bytes:
    """Bytes equal exactly for equal shapes (size and pixels)."""
    return np.array(shape.shape, np.int16).tobytes() + np.packbits(shape).tobytes()


def flips(shape: np.ndarray) -> tuple[np.ndarray, ...]:
    """The shape as it is, flipped left-right, upside down, and both."""
    return shape, shape[:, ::-1], shape[::-1], shape[::-1, ::-1]


def difference(a: np.ndarray, b: np.ndarray) -> int | None:
    """Pixels in which two shapes differ, the smaller placed at its best offset inside the larger
    (Naddaf); None when they cannot be compared (neither fits inside the other, or their areas
    differ by more than :data:`MAX_AREA_RATIO`)."""
    if a.shape == b.shape:
        return int(np.count_nonzero(a != b))
    if a.size > b.size:
        a, b = b, a
    if b.size > MAX_AREA_RATIO * a.size or a.shape[0] > b.shape[0] or a.shape[1] > b.shape[1]:
        return None
    windows = sliding_window_view(b, a.shape)  # every placement of a inside b
    return int((windows != a).sum(axis=(2, 3)).min())


def share(a: np.ndarray, b: np.ndarray) -> float | None:
    """:func:`difference` over the two shapes' areas together (Naddaf's percentage distance)."""
    d = difference(a, b)
    return None if d is None else d / (a.size + b.size)


class ShapeClass:
    """A discovered class: its shapes, the sample screens it appeared on, and the box of its
    instances' centres (``row min, row max, column min, column max``)."""

    def __init__(self, shape: np.ndarray | None = None):
        self.shapes: list[np.ndarray] = [] if shape is None else [shape]
        self.screens: set[int] = set()
        self.box = [10**6, -1, 10**6, -1]

    def seen(self, screen: int, y: int, x: int) -> None:
        self.screens.add(screen)
        b = self.box
        self.box = [min(b[0], y), max(b[1], y), min(b[2], x), max(b[3], x)]

    def restricted(self) -> bool:
        """Its instances stayed within a box smaller than :data:`MIN_REGION` both ways."""
        return self.box[1] - self.box[0] < MIN_REGION and self.box[3] - self.box[2] < MIN_REGION

    def merge(self, other: ShapeClass) -> None:
        self.shapes += other.shapes
        self.screens |= other.screens
        b, o = self.box, other.box
        self.box = [min(b[0], o[0]), max(b[1], o[1]), min(b[2], o[2]), max(b[3], o[3])]

    def to_json(self) -> dict:
        screens = np.zeros(max(self.screens, default=-1) + 1, dtype=bool)
        screens[list(self.screens)] = True
        return {
            "shapes": [_encode(s) for s in self.shapes],
            "screens": base64.b64encode(np.packbits(screens).tobytes()).decode(),
            "box": self.box,
        }

    @classmethod
    def from_json(cls, data: dict) -> ShapeClass:
        out = cls()
        out.shapes = [_decode(s) for s in data["shapes"]]
        bits = np.unpackbits(np.frombuffer(base64.b64decode(data["screens"]), dtype=np.uint8))
        out.screens = set(np.flatnonzero(bits).tolist())
        out.box = list(data["box"])
        return out


def _encode(shape: np.ndarray) -> list:
    return [int(shape.shape[0]), int(shape.shape[1]), base64.b64encode(np.packbits(shape).tobytes()).decode()]


def _decode(row: list) -> np.ndarray:
    h, w, bits = row
    flat = np.unpackbits(np.frombuffer(base64.b64decode(bits), dtype=np.uint8))[: h * w]
    return flat.reshape(h, w).astype(bool)


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
        self.samples = 0
        self.found: list[ShapeClass] = []  # the classes discovered so far
        self._index: dict[bytes, tuple[int, bool]] = {}  # shape key -> (class, a shape it holds)
        self._last: list[tuple[int, int, int, np.ndarray]] = []  # the last sample's (class, y, x, shape)
        self.classes: list[ShapeClass] | None = None  # the kept classes, once finished
        self._memo: dict[bytes, int] = {}  # feature time: shape key -> class (-1: none)
        self.previous: tuple | None = None

    # -- class discovery (appendix A.3's preprocessing) -------------------------------------
    def observe(self, screen: np.ndarray, background: np.ndarray | None) -> None:
        """Assign one sample screen's objects to classes (steps 1-3 of the module docstring)."""
        rows, shapes = blobs(screen, background)
        current = []
        for (_, y, x, _, _), shape in zip(rows.tolist(), shapes, strict=True):
            c, identical = _member(shape, self.found, self._index)
            if c < 0:
                c = self._tracked(int(y), int(x), shape)
            if c < 0 and len(self.found) < MAX_DISCOVERED:
                c = len(self.found)
                self.found.append(ShapeClass())
            if c >= 0:
                if not identical:
                    self.found[c].shapes.append(shape)
                    _index_shape(self._index, shape, c)
                self.found[c].seen(self.samples, int(y), int(x))
            current.append((c, int(y), int(x), shape))
        self._last = current
        self.samples += 1

    def _tracked(self, y: int, x: int, shape: np.ndarray) -> int:
        """The class of the previous sample's object this one moved from (step 2), or -1."""
        best, best_rank = -1, None
        for c, py, px, previous in self._last:
            dy, dx = abs(y - py), abs(x - px)
            if c < 0 or dy > MAX_VELOCITY or dx > MAX_VELOCITY:
                continue
            d = difference(shape, previous)
            if d is None or d / (shape.size + previous.size) > MAX_SHAPE_DIFFERENCE:
                continue
            rank = (d, dy * dy + dx * dx)
            if best_rank is None or rank < best_rank:
                best, best_rank = c, rank
        return best

    def finish(self) -> None:
        """Filter and merge the discovered classes (module docstring); the features use these."""
        least = MIN_FREQUENCY * max(self.samples, 1)
        kept = [c for c in self.found if len(c.screens) >= least and not c.restricted()]
        if len(kept) > MAX_CLASSES:
            kept = _merge(kept)
        if len(kept) > MAX_CLASSES:
            order = sorted(range(len(kept)), key=lambda k: (-len(kept[k].screens), k))[:MAX_CLASSES]
            kept = [kept[k] for k in sorted(order)]
        self._use(kept)

    def _use(self, classes: list[ShapeClass]) -> None:
        """Extract features with ``classes``."""
        self.classes = classes
        self._memo = {}
        self._final_index: dict[bytes, tuple[int, bool]] = {}
        for c, cls in enumerate(classes):
            for shape in cls.shapes:
                _index_shape(self._final_index, shape, c)

    def state(self) -> dict:
        """The discovery so far and the kept classes (JSON)."""
        return {
            "samples": self.samples,
            "found": [c.to_json() for c in self.found],
            "last": [[c, y, x, _encode(s)] for c, y, x, s in self._last],
            "classes": None if self.classes is None else [c.to_json() for c in self.classes],
        }

    def load_state(self, state: dict) -> None:
        if "found" not in state:
            raise UsageError(
                "this checkpoint holds DISCO classes of an earlier benchgen (colour and size, not shapes); "
                "start a new run (it discovers its classes again)"
            )
        self.samples = int(state["samples"])
        self.found = [ShapeClass.from_json(c) for c in state["found"]]
        self._index = {}
        for c, cls in enumerate(self.found):
            for shape in cls.shapes:
                _index_shape(self._index, shape, c)
        self._last = [(c, y, x, _decode(s)) for c, y, x, s in state["last"]]
        self.classes = None
        if state["classes"] is not None:
            self._use([ShapeClass.from_json(c) for c in state["classes"]])

    # -- features ----------------------------------------------------------------------------
    def reset(self) -> None:
        """A new episode: no previous screen (velocities zero)."""
        self.previous = None

    def _classify(self, rows: np.ndarray, shapes: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """Each object's class as in discovery step 1 (-1: none); the objects of a known class."""
        if self.classes is None:
            raise RuntimeError("DISCO needs its classes: observe() sample screens, then finish()")
        cls = np.empty(len(shapes), dtype=np.int64)
        for k, shape in enumerate(shapes):
            key = shape_key(shape)
            c = self._memo.get(key)
            if c is None:
                c = self._memo[key] = _member(shape, self.classes, self._final_index)[0]
            cls[k] = c
        known = cls >= 0
        return cls[known], rows[known]

    def __call__(self, screen: np.ndarray, background: np.ndarray | None = None) -> np.ndarray:
        cls, found = self._classify(*blobs(screen, background))
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


def _index_shape(index: dict[bytes, tuple[int, bool]], shape: np.ndarray, c: int) -> None:
    """Index a class's shape, ``(c, True)``, and its flips, ``(c, False)``; a key another class
    already has stays that class's."""
    key = shape_key(shape)
    if index.get(key, (c,))[0] == c:
        index[key] = (c, True)
    for flipped in flips(shape)[1:]:
        index.setdefault(shape_key(flipped), (c, False))


def _member(shape: np.ndarray, classes: list[ShapeClass], index: dict[bytes, tuple[int, bool]]) -> tuple[int, bool]:
    """Discovery step 1: ``(the first class the shape matches, whether it holds this very shape)``;
    ``(-1, False)`` when none. Equal sizes match only when equal (or flipped): the index; other
    sizes by containment (:func:`difference` zero)."""
    hits = [index[k][0] for k in map(shape_key, flips(shape)) if k in index]
    if hits:
        return min(hits), index.get(shape_key(shape)) == (min(hits), True)
    variants = flips(shape)
    for c, cls in enumerate(classes):
        for known in cls.shapes:
            if known.shape != shape.shape and any(difference(known, v) == 0 for v in variants):
                return c, False
    return -1, False


def _merge(classes: list[ShapeClass]) -> list[ShapeClass]:
    """Merge the two closest classes until :data:`MAX_CLASSES` remain or none are comparable."""
    n = len(classes)
    distance = np.full((n, n), np.inf)
    for a in range(n):
        for b in range(a + 1, n):
            shares = [share(p, q) for p in classes[a].shapes for q in classes[b].shapes]
            shares = [s for s in shares if s is not None]
            if shares:
                distance[a, b] = distance[b, a] = min(shares)
    alive = list(range(n))
    while len(alive) > MAX_CLASSES:
        sub = distance[np.ix_(alive, alive)]
        flat = int(np.argmin(sub))  # the first closest pair, in discovery order
        a, b = alive[flat // len(alive)], alive[flat % len(alive)]
        if not np.isfinite(distance[a, b]):
            break
        a, b = min(a, b), max(a, b)
        classes[a].merge(classes[b])
        distance[a] = distance[:, a] = np.minimum(distance[a], distance[b])
        distance[a, a] = np.inf
        alive.remove(b)
    return [classes[k] for k in alive]
