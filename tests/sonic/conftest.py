"""Fixtures for the Sonic suite tests: the Airstriker test integration on the real emulator.

stable-retro allows one emulator per process: every in-process env is closed by its fixture,
even when a test fails; vector envs run their emulators in worker processes.
"""

from __future__ import annotations

import pytest

from benchgen_sonic.env import SonicLevelEnv
from benchgen_sonic.protocol import SonicProtocol
from benchgen_sonic.testing import airstriker_level


@pytest.fixture
def level_env():
    """Factory: ``level_env(end_dx=100, **protocol)`` -> a single-emulator env, closed after."""
    made: list[SonicLevelEnv] = []

    def make(end_dx: int = 100, **protocol) -> SonicLevelEnv:
        assert not made, "one emulator per process: a test makes at most one in-process env"
        env = SonicLevelEnv(airstriker_level(end_dx), SonicProtocol(**protocol))
        made.append(env)
        return env

    yield make
    for env in made:
        env.close()
