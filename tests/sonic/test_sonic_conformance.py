"""benchgen's plugin conformance kit on the Sonic suite.

``TestSonicConformance`` checks the real suite; its environment checks skip on a machine without
the Sonic ROMs. ``TestSonicCodeOnAirstriker`` runs every check, environments included, on the
same suite class and code over the free Airstriker ROM (``tests/sonic/airstriker_plugin.py``).
"""

from __future__ import annotations

import benchgen_sonic
from benchgen.testing import SuiteConformance
from benchgen_sonic.env import SonicLevelEnv
from tests.sonic import airstriker_plugin


class TestSonicConformance(SuiteConformance):
    plugin = benchgen_sonic
    suite_name = "sonic"
    episode_tasks = ["sonic1-GreenHillZone.Act2"]


class TestSonicCodeOnAirstriker(SuiteConformance):
    plugin = airstriker_plugin
    suite_name = "sonic_airstriker"
    episode_tasks = [airstriker_plugin.LEVELS[0].task]
    env_check_tasks = [airstriker_plugin.LEVELS[0].task]
    joint_tasks = [level.task for level in airstriker_plugin.LEVELS]
    max_episode_steps = 200
    check_steps = 48

    def single_envs(self, suite, task):
        """The worker-side single-emulator env (created in this process, closed by the kit)."""
        return [SonicLevelEnv(suite.level(task), suite.sonic_protocol)]
