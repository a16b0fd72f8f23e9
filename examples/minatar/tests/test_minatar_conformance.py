"""benchgen's conformance kit on the minatar suite, as any third-party plugin runs it."""

from __future__ import annotations

import benchgen_minatar
from benchgen.testing import SuiteConformance


class TestMinAtarConformance(SuiteConformance):
    plugin = benchgen_minatar
    suite_name = "minatar"
    episode_tasks = ["breakout"]  # random Breakout games end within a few dozen frames
    joint_tasks = ["breakout", "freeway", "seaquest", "space_invaders", "asterix"]
    check_steps = 200  # frames are cheap; long enough for episodes to end in the contract checks
    smoke_budget = 500  # frames
