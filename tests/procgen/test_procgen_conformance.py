"""benchgen's conformance kit on the procgen suite (the package stepped for real)."""

from __future__ import annotations

import benchgen_procgen
from benchgen.testing import SuiteConformance


class TestProcgenConformance(SuiteConformance):
    plugin = benchgen_procgen
    suite_name = "procgen"
    # maze's random episodes end within its 500-step cap; coinrun's often run to 1,000
    episode_tasks = ["maze"]
    joint_tasks = ["coinrun", "coinrun:test"]  # one env, training and test levels side by side
    env_check_tasks = ["coinrun", "maze:test"]
    max_episode_steps = 1000
    check_steps = 520
    # Procgen's random episodes in any game are long; the kit's short run on one task
    smoke_budget = 2000
