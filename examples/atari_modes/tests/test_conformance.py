"""benchgen's conformance kit on the atari_modes suite, as any third-party plugin runs it."""

from __future__ import annotations

import benchgen_atari_modes
from benchgen.testing import SuiteConformance
from benchgen_atari_modes import catalogue
from benchgen_atari_modes.env import make_flavor_env


def _checked_tasks() -> list[str]:
    """Each game's default flavor and its last flavor (the most distant mode and difficulty).
    gymnasium's checker costs about two seconds per task, so the default run checks these ten;
    `pytest -m slow` checks all 85 (test_suite.py)."""
    out = []
    for game in catalogue.GAMES:
        flavors = [f for f in catalogue.flavors() if f.game == game]
        out += [catalogue.default_flavor(game).task, flavors[-1].task]
    return list(dict.fromkeys(out))


class TestAtariModesConformance(SuiteConformance):
    plugin = benchgen_atari_modes
    suite_name = "atari_modes"
    episode_tasks = ["breakout:m0d0"]  # random Breakout games end within a few hundred steps
    joint_tasks = ["breakout:m0d0", "pong:m1d3", "space_invaders:m15d1"]
    env_check_tasks = _checked_tasks()
    smoke_budget = 4_000  # frames

    def single_envs(self, suite, task):
        # The preprocessed gymnasium env each sub-environment runs, checked on its own too.
        return [make_flavor_env(task)]
