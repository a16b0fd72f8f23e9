"""The ALE papers' feature sets on hand-made screens and RAM: the exact active indices.

Bellemare et al. 2013, appendix A (Basic, BASS, LSH, RAM) and Liang et al. 2016 (Blob-PROST).
Screens are palette indices (0..127), 210 x 160.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from benchgen.errors import UsageError
from benchgen_agents.ale_features import FEATURE_SETS, make_extractor
from benchgen_agents.ale_features.basic import BasicFeatures, BassFeatures
from benchgen_agents.ale_features.blob_prost import BlobProstFeatures, box_dilation, find_blobs
from benchgen_agents.ale_features.common import BackgroundHistogram, pair_indices
from benchgen_agents.ale_features.disco import DiscoFeatures
from benchgen_agents.ale_features.lsh import LshFeatures
from benchgen_agents.ale_features.ram import RamFeatures


def blank(colour: int = 0) -> np.ndarray:
    return np.full((210, 160), colour, dtype=np.uint8)


def test_feature_counts_are_the_papers():
    # ALE paper section 3.1.1: "giving a total of 28,672 features" (Basic)
    assert BasicFeatures().num_features == 28_672
    assert BassFeatures().num_features == 1_792 + 1_792 * 1_791 // 2
    assert RamFeatures.num_features == 1_024 + 1_024 * 1_023 // 2
    assert LshFeatures(0, vectors=20, nonzero=10).num_features == 20 * 50
    # Basic 28,672 + B-PROS 8,256 colour pairs x 27 x 31 offsets + B-PROT 128 x 128 x 837 + bias
    assert BlobProstFeatures().num_features == 28_672 + 8_256 * 837 + 16_384 * 837 + 1


def test_basic_marks_each_foreground_colour_in_its_tile():
    screen = blank()
    screen[16:18, 21:23] = 5  # tile row 16 // 15 = 1, column 21 // 10 = 2: tile 18
    screen[14, 159] = 7  # the last row of tile row 0, the last tile column: tile 15
    basic = BasicFeatures()
    assert basic(screen, background=blank()).tolist() == [15 * 128 + 7, 18 * 128 + 5]
    # without background removal colour 0 is present in every tile too
    everywhere = basic(screen)
    assert len(everywhere) == 224 + 2 and everywhere[0] == 0 and everywhere[-1] == 223 * 128


def test_bass_uses_secam_colours_and_adds_every_pair():
    screen = blank()
    screen[16, 21] = 5  # SECAM colour 5, tile 18: feature 18 * 8 + 5 = 149
    screen[17, 22] = 29  # 29 & 7 = 5 too: the same SECAM feature
    screen[75, 25] = 10  # SECAM 2, tile (5, 2) = 82: feature 82 * 8 + 2 = 658
    # the pair 149 < 658 of n = 1,792 singles: 1792 + 149 * (3584 - 149 - 1) / 2 + (658 - 149 - 1)
    assert BassFeatures()(screen, blank()).tolist() == [149, 658, 1_792 + 255_833 + 508]


def test_pair_indices_number_every_pair_once():
    n = 5
    singles = np.arange(n)
    pairs = pair_indices(singles, n)
    assert pairs.tolist() == list(range(n, n + n * (n - 1) // 2))


def test_ram_bits_and_their_pairwise_ands():
    ram = np.zeros(128, dtype=np.uint8)
    ram[0] = 0b101  # bits 0 and 2
    ram[127] = 0x80  # bit 7 of byte 127: bit 1023
    # pairs: (0, 2) -> 1024 + 0 + 1; (0, 1023) -> 1024 + 1022; (2, 1023) -> 1024 + 2045 + 1020
    assert RamFeatures()(ram).tolist() == [0, 2, 1023, 1025, 2046, 4089]
    with pytest.raises(ValueError, match="128 bytes"):
        RamFeatures()(np.zeros(256, dtype=np.uint8))


def test_lsh_activates_one_bucket_per_random_vector():
    lsh = LshFeatures(seed=3, vectors=40, nonzero=25, buckets=50)
    # all bits 0: every vector's sum is 0, bucket 0
    assert lsh(blank()).tolist() == [50 * i for i in range(40)]
    # all bits 1 (colour 127): every sampled coordinate counts, bucket = the vector's hash sum mod 50
    expected = 50 * np.arange(40) + np.asarray(lsh.projection.sum(axis=1)).ravel().astype(int) % 50
    assert lsh(blank(127)).tolist() == expected.tolist()
    # the same seed draws the same vectors; another seed others
    screen = np.random.default_rng(0).integers(0, 128, (210, 160), dtype=np.uint8)
    assert np.array_equal(LshFeatures(3, 40, 25)(screen), lsh(screen))
    assert not np.array_equal(LshFeatures(4, 40, 25)(screen), lsh(screen))


def blob_screen() -> np.ndarray:
    screen = blank()
    screen[20, 30] = 3  # one blob of colour 3: these two pixels are 3 apart
    screen[22, 33] = 3  # bounding box rows 20-22, columns 30-33: centre (21, 31), tile (1, 3)
    screen[100, 100] = 3  # another blob of colour 3, tile (6, 10)
    return screen


def test_blobs_join_pixels_up_to_three_apart():
    colour, row, column = find_blobs(blob_screen())
    # colour 0 is one blob over the whole screen: centre ((0 + 209) // 2, (0 + 159) // 2)
    assert sorted(zip(colour.tolist(), row.tolist(), column.tolist())) == [(0, 104, 79), (3, 21, 31), (3, 100, 100)]
    apart = blank()
    apart[50, 50] = apart[50, 54] = 9  # 4 apart: two blobs
    assert sorted(find_blobs(apart)[0].tolist()) == [0, 9, 9]


def test_box_dilation_is_scipys_for_odd_boxes():
    from scipy import ndimage

    rng = np.random.default_rng(0)
    for size in (1, 3, 5):
        pixels = rng.random((30, 41)) < 0.05
        expected = ndimage.binary_dilation(pixels, structure=np.ones((size, size), dtype=bool))
        assert np.array_equal(box_dilation(pixels, size), expected)


def test_blob_prost_basic_pros_and_bias():
    features = BlobProstFeatures()
    offset = lambda dr, dc: (dr + 13) * 31 + (dc + 15)  # 27 x 31 tile offsets
    pros = 28_672  # after the Basic part
    bias = 28_672 + 8_256 * 837 + 16_384 * 837
    expected = [
        (1 * 16 + 3) * 128 + 3,  # Basic: colour 3 in tile (1, 3)
        (6 * 16 + 7) * 128 + 0,  # colour 0 in tile (6, 7)
        (6 * 16 + 10) * 128 + 3,  # colour 3 in tile (6, 10)
        pros + 0 * 837 + offset(0, 0),  # colours (0, 0): the blob with itself
        pros + 3 * 837 + offset(0, -3),  # colours (0, 3): (6, 7) - (6, 10)
        pros + 3 * 837 + offset(5, 4),  # (6, 7) - (1, 3)
        pros + 381 * 837 + offset(0, 0),  # colours (3, 3), pair 3 * 128 - 3 = 381: a blob with itself
        pros + 381 * 837 + offset(5, 7),  # (6, 10) - (1, 3); its mirror (-5, -7) is not counted again
        bias,
    ]
    assert features(blob_screen()).tolist() == sorted(expected)


def test_blob_prost_time_offsets_pair_the_previous_screen_with_this_one():
    features = BlobProstFeatures()
    first = features(blob_screen())
    moved = blank()
    moved[20, 30] = 3  # colour 3 now only in tile (1, 3)
    second = features(moved)
    prot = 28_672 + 8_256 * 837
    offset = lambda dr, dc: (dr + 13) * 31 + (dc + 15)
    # previous blobs: 0 at (6, 7), 3 at (1, 3), 3 at (6, 10); current: 0 at (6, 7), 3 at (1, 3)
    time_part = {
        prot + (0 * 128 + 0) * 837 + offset(0, 0),
        prot + (0 * 128 + 3) * 837 + offset(5, 4),
        prot + (3 * 128 + 0) * 837 + offset(-5, -4),
        prot + (3 * 128 + 3) * 837 + offset(0, 0),
        prot + (3 * 128 + 0) * 837 + offset(0, 3),
        prot + (3 * 128 + 3) * 837 + offset(5, 7),
    }
    assert time_part <= set(second.tolist())
    assert len([i for i in second if prot <= i < first[-1]]) == len(time_part)
    features.reset()  # a new episode: no previous screen, no time offsets
    assert not [i for i in features(moved) if prot <= i < first[-1]]


def test_background_is_each_pixels_most_frequent_colour():
    histogram = BackgroundHistogram()
    for colour in (4, 4, 9):
        screen = blank(colour)
        screen[0, 0] = 7
        histogram.add(screen)
    background = histogram.background()
    assert background[0, 0] == 7 and background[1, 1] == 4 and histogram.samples == 3


@pytest.mark.parametrize("name", FEATURE_SETS)
def test_every_feature_set_gives_sorted_unique_indices_in_range(name):
    rng = np.random.default_rng(1)
    extractor = make_extractor(name, seed=0)
    if name == "disco":  # its classes first, from sample screens where the blobs move
        for k in range(5):
            extractor.observe(np.roll(blob_screen(), 3 * k, axis=1), blank())
        extractor.finish()
    for _ in range(3):
        x = rng.integers(0, 256, 128, dtype=np.uint8) if extractor.inputs == "ram" else blob_screen()
        active = extractor(x, blank() if extractor.uses_background else None)
        assert active.dtype == np.int64 and len(active) > 0
        assert np.all(np.diff(active) > 0) and active[0] >= 0 and active[-1] < extractor.num_features


L_SHAPE = np.array([[1, 0], [1, 0], [1, 1]], dtype=bool)


def put(screen: np.ndarray, shape: np.ndarray, row: int, column: int, colour: int = 5) -> None:
    """Draw ``shape`` (a mask) on ``screen`` with its top-left corner at ``(row, column)``."""
    h, w = shape.shape
    screen[row : row + h, column : column + w][shape] = colour


def square(n: int) -> np.ndarray:
    return np.ones((n, n), dtype=bool)


def shapes_of(classes) -> list:
    return [[s.astype(int).tolist() for s in c.shapes] for c in classes]


def test_disco_discovers_classes_by_shape_flips_and_size_then_filters_them():
    """ALE paper A.3: class discovery, then filtering of infrequent and region-bound classes."""
    disco = DiscoFeatures()
    for k in range(10):
        screen = blank()
        put(screen, L_SHAPE, 10, 20 + 2 * k)  # moves 2 pixels a screen: class 0
        put(screen, square(5) if k < 9 else np.ones((5, 6), bool), 60, 40 + 3 * k)  # class 1
        put(screen, np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]], bool), 100, 100)  # never moves: dropped
        if k == 0:
            put(screen, square(2), 180, 10)  # on 10% of the screens: dropped
        if k >= 5:  # the L flipped left-right, in another colour, far away: an instance of class 0
            put(screen, L_SHAPE[:, ::-1], 150, 20 + 2 * k, colour=7)
        disco.observe(screen, blank())
    assert len(disco.found) == 4  # the L, the square, the plus, the 2 x 2 square
    disco.finish()
    flipped = [[0, 1], [0, 1], [1, 1]]
    # the 5 x 6 rectangle holds the 5 x 5 square exactly, their areas within a factor 1.2: class 1
    assert shapes_of(disco.classes) == [
        [L_SHAPE.astype(int).tolist(), flipped],
        [square(5).astype(int).tolist(), np.ones((5, 6), int).tolist()],
    ]
    assert [len(c.screens) for c in disco.classes] == [10, 10]


def test_disco_follows_an_object_whose_shape_changes_as_it_moves():
    """Discovery step 2: a shape within 10% of an object of the previous screen, at most 8 pixels
    away, joins that object's class; the same change farther away starts a class of its own."""
    solid = np.ones((4, 5), dtype=bool)
    one_off = solid.copy()
    one_off[0, 0] = False  # 1 pixel of 40 differs
    two_off = one_off.copy()
    two_off[0, 4] = False  # 2 of 40
    disco = DiscoFeatures()
    first = blank()
    put(first, solid, 50, 50)  # centre (51, 52)
    disco.observe(first, blank())
    second = blank()
    put(second, one_off, 53, 53)  # centre (54, 55): 3 pixels away
    put(second, two_off, 50, 61)  # centre (51, 63): 11 pixels away
    disco.observe(second, blank())
    third = blank()
    put(third, one_off, 150, 120)  # far from everything, but now a shape of class 0
    disco.observe(third, blank())
    assert shapes_of(disco.found) == [
        [solid.astype(int).tolist(), one_off.astype(int).tolist()],
        [two_off.astype(int).tolist()],
    ]
    assert [sorted(c.screens) for c in disco.found] == [[0, 1, 2], [1]]


def merge_screens():
    """11 moving objects on every screen: solid squares of sides 1 to 10 (no two comparable: their
    areas differ by more than 1.2) and a 4 x 4 square with a corner missing, far from the solid one."""
    notched = square(4)
    notched[0, 0] = False
    tops, row = [], 2
    for n in range(1, 11):
        tops.append(row)
        row += n + 3
    screens = []
    for k in range(5):
        screen = blank()
        for n, top in zip(range(1, 11), tops, strict=True):
            put(screen, square(n), top, 10 + 3 * k)
        put(screen, notched, 150, 100 + 3 * k)
        screens.append(screen)
    return screens, notched


def test_disco_merges_the_closest_classes_down_to_ten_and_tile_codes_them():
    disco = DiscoFeatures()
    screens, notched = merge_screens()
    for screen in screens:
        disco.observe(screen, blank())
    assert len(disco.found) == 11
    disco.finish()
    # the notched square differs from the solid 4 x 4 in 1 pixel of 32: the one comparable pair
    expected = [[square(n).astype(int).tolist()] for n in range(1, 11)]
    expected[3].append(notched.astype(int).tolist())
    assert shapes_of(disco.classes) == expected

    screen = blank()
    put(screen, notched, 100, 50)  # class 3, centre (101, 51)
    # tiling t of the 8 x 8 grid, shifted by t/8 of a tile: row 101 / 210 * 8 + t / 8, column 51 / 160 * 8 + t / 8
    rows, columns = [3, 3, 4, 4, 4, 4, 4, 4], [2, 2, 2, 2, 3, 3, 3, 3]
    cells = [t * 81 + rows[t] * 9 + columns[t] for t in range(8)]
    assert disco(screen, blank()).tolist() == [3 * 648 + c for c in cells]

    disco.reset()
    put(screen, square(1), 1, 1)  # class 0 at (1, 1), cell (0, 0) of every tiling; pair (0, 3) is pair 2
    active = disco(screen, blank())
    absolute = active[active < disco.absolute_size].tolist()
    relative = active[(active >= disco.absolute_size) & (active < disco.absolute_size + disco.pair_size)]
    velocity = active[active >= disco.absolute_size + disco.pair_size].tolist()
    assert absolute == [t * 81 for t in range(8)] + [3 * 648 + c for c in cells]
    assert len(relative) == 8 and all(2 * 648 <= r - disco.absolute_size < 3 * 648 for r in relative)
    # no previous screen: relative velocity 0, the middle cell (4, 4) of the [-16, 16] box
    assert velocity == [disco.absolute_size + disco.pair_size + 2 * 648 + t * 81 + 40 for t in range(8)]
    assert disco(blank(), blank()).tolist() == []  # no object: no feature
    none = DiscoFeatures()
    none.finish()  # no sample screens: no class, no feature
    assert none(screen, blank()).tolist() == []


def test_disco_state_round_trips_mid_discovery_and_after():
    screens, _ = merge_screens()
    disco = DiscoFeatures()
    for screen in screens[:2]:
        disco.observe(screen, blank())
    copy = DiscoFeatures()
    copy.load_state(json.loads(json.dumps(disco.state())))
    for extractor in (disco, copy):
        for screen in screens[2:]:
            extractor.observe(screen, blank())
        extractor.finish()
    assert shapes_of(copy.classes) == shapes_of(disco.classes)
    restored = DiscoFeatures()
    restored.load_state(json.loads(json.dumps(copy.state())))
    assert restored.samples == 5 and shapes_of(restored.classes) == shapes_of(disco.classes)
    assert [sorted(c.screens) for c in restored.classes] == [list(range(5))] * 10
    assert restored(screens[0], blank()).tolist() == disco(screens[0], blank()).tolist()
    with pytest.raises(UsageError, match="earlier benchgen"):  # a checkpoint of the bounding-box DISCO
        DiscoFeatures().load_state({"counts": [[5, 3, 4, 10]], "samples": 10})
