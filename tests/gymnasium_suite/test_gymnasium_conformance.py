"""benchgen's conformance kit on the gymnasium suite, and gymnasium's env checker on every task."""

from __future__ import annotations

import pytest

import benchgen_gymnasium
from benchgen.testing import SuiteConformance, check_gymnasium_env_checker
from benchgen_gymnasium import catalog
from benchgen_gymnasium.env import make_single
from benchgen_gymnasium.suite import GymnasiumSuite


def _single(task: str):
    """The suite's own single env for ``task``: ``gymnasium.make(task)`` with encoded observations."""
    return make_single(task, catalog.runnable()[task].codec)


class TestGymnasiumConformance(SuiteConformance):
    plugin = benchgen_gymnasium
    suite_name = "gymnasium"
    episode_tasks = ["CartPole-v1"]  # random CartPole episodes end within a few dozen steps
    joint_tasks = ["CartPole-v0", "CartPole-v1"]  # a joint env needs tasks with the same spaces
    # the kit's checker test also requires one observation space for all the tasks it checks, which
    # this suite does not promise (CartPole observes 4 numbers, Acrobot 6): every task is checked
    # on its own below
    env_check_tasks = ["CartPole-v0", "CartPole-v1"]
    max_episode_steps = 500  # CartPole-v1's time limit
    check_steps = 200  # long enough for episodes to end in the contract checks

    def single_envs(self, suite, task):
        return [_single(task)]


@pytest.mark.parametrize("task", GymnasiumSuite().tasks())
def test_gymnasium_env_checker_passes_on_every_task(task):
    check_gymnasium_env_checker(GymnasiumSuite(), task, seed=0, extra_envs=[_single(task)])
