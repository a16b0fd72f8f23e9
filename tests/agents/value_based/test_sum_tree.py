"""The vectorized sum tree: sums, repeated updates, proportional (stratified) sampling."""

from __future__ import annotations

import numpy as np
import pytest

from benchgen_agents.value_based.replay import SumTree


def test_sampling_proportions_match_priorities():
    tree = SumTree(6)  # not a power of two: two unused leaves
    priorities = np.array([1.0, 2.0, 0.0, 3.0, 4.0, 10.0])
    tree.update(np.arange(6), priorities)
    rng = np.random.default_rng(0)
    draws = np.concatenate([tree.sample(32, rng) for _ in range(5000)])  # 160,000 draws
    freq = np.bincount(draws, minlength=6) / len(draws)
    expected = priorities / priorities.sum()
    # binomial standard error is at most ~0.0013 here: 0.005 is > 3.5 sigma
    np.testing.assert_allclose(freq, expected, atol=0.005)
    assert freq[2] == 0.0  # a zero priority (an invalid slot) is never drawn


def test_stratified_batch_covers_the_mass_evenly():
    tree = SumTree(4)
    tree.update(np.arange(4), np.ones(4))
    for _ in range(50):  # 4 strata of equal mass: each leaf exactly once per batch of 4
        assert sorted(tree.sample(4, np.random.default_rng()).tolist()) == [0, 1, 2, 3]


def test_sums_stay_exact_after_many_batch_updates_with_repeats():
    rng = np.random.default_rng(3)
    tree = SumTree(1000)
    values = np.zeros(1000)
    for _ in range(300):
        idx = rng.integers(0, 1000, 32)
        new = rng.random(32)
        tree.update(idx, new)
        for i, v in zip(idx, new):  # reference: sequential assignment, the last write wins
            values[i] = v
    np.testing.assert_array_equal(tree.get(np.arange(1000)), values)
    assert tree.total == pytest.approx(values.sum(), rel=1e-12)
    level = tree.nodes[tree.size // 2 : tree.size]  # one level above the leaves
    np.testing.assert_allclose(level, tree.nodes[tree.size :: 2] + tree.nodes[tree.size + 1 :: 2])


def test_find_maps_prefix_sums_to_leaves():
    tree = SumTree(4)
    tree.update(np.arange(4), np.array([1.0, 0.0, 2.0, 1.0]))
    assert tree.find(np.array([0.0, 0.99, 1.0, 2.5, 3.0, 3.99])).tolist() == [0, 0, 2, 2, 3, 3]


def test_empty_tree_refuses_to_sample():
    with pytest.raises(RuntimeError):
        SumTree(8).sample(4, np.random.default_rng())
