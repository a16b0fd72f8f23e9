"""``SuiteConformance``: the conformance kit as a pytest test class to subclass.

::

    import benchgen_mysuite
    from benchgen.testing import SuiteConformance

    class TestMySuite(SuiteConformance):
        plugin = benchgen_mysuite
        suite_name = "mysuite"

The base class's name does not start with ``Test``, so importing it does not collect it; a
subclass named ``Test...`` runs every ``test_*`` method below against the suite. Override the
class attributes to fit the suite; override :meth:`SuiteConformance.single_envs` to also run
gymnasium's checker on the suite's own single-task envs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import gymnasium as gym
import pytest

from benchgen.registry import Registry
from benchgen.suite import Suite
from benchgen.testing import checks


class SuiteConformance:
    """Every guarantee a benchgen suite must meet (see ``benchgen.testing.checks.CHECKS``)."""

    #: the plugin under test: a module (or object) with ``@benchgen.hookimpl`` functions, or a
    #: list of them; None tests the installed plugins (entry points and ``BENCHGEN_PLUGINS``)
    plugin: Any = None
    #: the suite's name (required)
    suite_name: str = ""
    #: tasks run through gymnasium's env checker; None: every task runnable here
    env_check_tasks: Sequence[str] | None = None
    #: tasks for the episode-end and seeding checks (random episodes should end within
    #: ``max_episode_steps``); None: the first runnable task
    episode_tasks: Sequence[str] | None = None
    #: distinct tasks for the joint-env check; None: the first two runnable tasks
    joint_tasks: Sequence[str] | None = None
    #: agent steps (per sub-environment) allowed for a random episode to end
    max_episode_steps: int = 5000
    #: steps for the contract and seeding checks
    check_steps: int = 64
    #: sub-environments in the contract checks
    num_envs: int = 2
    #: the seed used throughout
    seed: int = 0
    #: whether EpisodeEnd.score must equal the sum of the episode's rewards (False for suites
    #: whose rewards are shaped, e.g. Sonic's progress reward)
    score_is_reward_sum: bool = True
    #: info keys an agent must never see
    forbidden_info_keys: Sequence[str] = checks.FORBIDDEN_INFO_KEYS
    #: agent for the end-to-end smoke run: "" the installed agent of random play
    #: (``AgentSpec.random_play``, ``Registry.random_play_agent``); None skips it
    smoke_agent: str | None = ""
    #: budget of the smoke run in the suite's unit; None: 200 agent steps
    smoke_budget: int | None = None

    # -- fixtures --------------------------------------------------------------------------
    @pytest.fixture(scope="class")
    @classmethod
    def registry(cls) -> Registry:
        """The registry holding the plugin under test (and the first-party agents)."""
        return checks.build_registry(cls.plugin)

    @pytest.fixture(scope="class")
    @classmethod
    def suite(cls, registry: Registry) -> Suite:
        """The suite under test."""
        if not cls.suite_name:
            pytest.fail(f"{cls.__name__}: set `suite_name` to the suite's name")
        if cls.suite_name not in registry.suites:
            pytest.fail(
                f"{cls.__name__}: no suite '{cls.suite_name}' among {sorted(registry.suites)}; "
                "set `plugin` to the module that implements benchgen_suites"
            )
        return registry.suites[cls.suite_name]

    def single_envs(self, suite: Suite, task: str) -> Iterable[gym.Env]:
        """Extra single-task gymnasium envs to pass through gymnasium's checker (default: none).

        Override it when the suite builds its vector env from single envs, to check those too."""
        return ()

    def runnable(self, suite: Suite, tasks: Sequence[str] | None, default: int | None = None) -> list[str]:
        """``tasks`` (or the suite's first ``default`` tasks) that can run here; skips if none."""
        wanted = list(tasks) if tasks is not None else suite.tasks()
        out = [t for t in wanted if suite.task_available(t)]
        if not out:
            reason = ""
            if wanted:
                try:
                    suite.check_task_available(wanted[0])
                except Exception as exc:  # noqa: BLE001 - shown as the skip reason
                    reason = f": {exc}"
            pytest.skip(f"no task of suite '{suite.name}' can run here{reason}")
        return out if tasks is not None or default is None else out[:default]

    # -- the checks ------------------------------------------------------------------------
    def test_suite_attributes(self, registry, suite):
        checks.check_suite_attributes(suite, registry)

    def test_protocol(self, suite):
        checks.check_protocol(suite)

    def test_splits(self, registry, suite):
        checks.check_splits(registry, suite)

    def test_unknown_names_give_the_standard_error(self, registry, suite):
        checks.check_bad_names(registry, suite, agent=self.smoke_agent or "")

    def test_vector_env_contract(self, suite):
        task = self.runnable(suite, self.episode_tasks, 1)[0]
        checks.check_vector_env(
            suite,
            [task] * self.num_envs,
            self.seed,
            self.check_steps,
            self.forbidden_info_keys,
            self.score_is_reward_sum,
        )

    def test_joint_env(self, suite):
        tasks = self.runnable(suite, self.joint_tasks, 2)
        if len(set(tasks)) < 2:
            pytest.skip(f"suite '{suite.name}' has fewer than two runnable tasks")
        checks.check_vector_env(
            suite, tasks, self.seed, self.check_steps, self.forbidden_info_keys, self.score_is_reward_sum
        )

    def test_gymnasium_env_checker(self, suite):
        tasks = self.runnable(suite, self.env_check_tasks)
        spaces = None
        for task in tasks:
            checks.check_gymnasium_env_checker(suite, task, self.seed, self.single_envs(suite, task))
            env = suite.make_env([task], self.seed)
            these = (env.single_observation_space, env.single_action_space)
            env.close()
            if spaces is None:
                spaces = (tasks[0], these)
            elif these != spaces[1]:
                raise checks.ConformanceError(
                    f"suite '{suite.name}': task '{task}' has spaces {these}, task '{spaces[0]}' has {spaces[1]}; "
                    "every task needs the same observation and action spaces (joint agents train on several)"
                )

    def test_episode_ends(self, suite):
        tasks = self.runnable(suite, self.episode_tasks, 1)
        checks.check_episode_ends(
            suite, tasks, self.seed, self.max_episode_steps, self.forbidden_info_keys, self.score_is_reward_sum
        )

    def test_seeding_is_reproducible(self, suite):
        tasks = self.runnable(suite, self.episode_tasks, 1)
        checks.check_reproducible(
            suite, [tasks[0]] * self.num_envs, self.seed, self.check_steps, self.forbidden_info_keys
        )

    def test_scorer(self, registry, suite):
        checks.check_scorer(registry, suite)

    def test_runs_end_to_end(self, registry, suite, tmp_path):
        if self.smoke_agent is None:
            pytest.skip("smoke_agent is None")
        agent = self.smoke_agent or registry.random_play_agent()
        if agent is None:
            pytest.skip("no installed agent declares random play (AgentSpec.random_play)")
        if agent not in registry.agents:
            pytest.skip(f"agent '{agent}' is not installed")
        task = self.runnable(suite, self.episode_tasks, 1)[0]
        checks.check_smoke_run(registry, suite, task, tmp_path / "run", agent, self.smoke_budget, self.seed)
