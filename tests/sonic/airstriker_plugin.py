"""A benchgen plugin with the Sonic suite's code on Airstriker levels, for end-to-end CLI tests.

Loaded with ``BENCHGEN_PLUGINS=tests.sonic.airstriker_plugin``; suite name ``sonic_airstriker``.
"""

from __future__ import annotations

import benchgen
from benchgen.suite import Split
from benchgen_sonic.protocol import SonicProtocol
from benchgen_sonic.suite import SonicSuite
from benchgen_sonic.testing import airstriker_level

#: a level completed after 100 pixels (5 timesteps of RIGHT) and one that is never completed
LEVELS = (airstriker_level(100), airstriker_level(1000))


class AirstrikerSuite(SonicSuite):
    name = "sonic_airstriker"
    description = "the Sonic suite's code on the free Airstriker ROM (tests only)"
    default_split = "all"

    def splits(self) -> list[Split]:
        return [Split(suite=self.name, name="all", train=(LEVELS[0].task,), test=(LEVELS[1].task,))]


@benchgen.hookimpl
def benchgen_suites():
    return [AirstrikerSuite(levels=LEVELS, protocol=SonicProtocol(max_timesteps=50))]
