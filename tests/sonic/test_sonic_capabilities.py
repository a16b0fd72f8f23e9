"""The Sonic suite offers the ``ram`` capability (:mod:`benchgen.capabilities`), read in each worker
process, on the free Airstriker test integration (``benchgen_sonic.testing``)."""

from __future__ import annotations

import numpy as np

from benchgen.capabilities import emulators_of
from benchgen_sonic.env import button_mask
from benchgen_sonic.suite import SonicSuite
from benchgen_sonic.testing import airstriker_level
from benchgen_sonic.vector import SonicVectorEnv


def test_sonic_declares_ram_only():
    assert SonicSuite().capabilities() == {"ram"}


def test_each_worker_reads_its_own_ram():
    env = SonicVectorEnv([airstriker_level(), airstriker_level()], seed=0, pin_workers=False)
    try:
        env.reset(seed=0)
        em = emulators_of(env)
        start = em.ram(0)
        assert start.shape == (65536,) and start.dtype == np.uint8
        assert np.array_equal(start, em.ram(1))  # the same save state in both workers
        for _ in range(3):  # sub-environment 0 flies right (60 of the level's 100 pixels), 1 waits
            env.step(np.array([button_mask("RIGHT"), 0]))
        moved, waited = em.ram(0), em.ram(1)
        assert not np.array_equal(moved, waited)
        assert not np.array_equal(moved, start)
    finally:
        env.close()
