"""The core's plugin conformance kit, run on the atari_saber suite (real ale-py games)."""

from __future__ import annotations

import benchgen_atari_saber
from benchgen.testing import SuiteConformance


class TestAtariSaberConformance(SuiteConformance):
    plugin = benchgen_atari_saber
    suite_name = "atari_saber"
    # gymnasium's checker on an 18-action game and on Skiing (9 legal actions, exposed as 18);
    # all 61 would take minutes: test_atari_suite.py checks every game has its ROM and spaces
    env_check_tasks = ["breakout", "skiing"]
    episode_tasks = ["breakout"]  # random Breakout games end within a few hundred steps
    joint_tasks = ["breakout", "skiing"]
    max_episode_steps = 2_000
