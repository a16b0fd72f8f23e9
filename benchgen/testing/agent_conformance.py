"""``AgentConformance``: the agent conformance kit as a pytest test class to subclass.

::

    import benchgen_myagent
    from benchgen.testing import AgentConformance

    class TestMyAgent(AgentConformance):
        plugin = benchgen_myagent
        agent_name = "myagent"
        settings = {"learning_starts": 50}   # small enough for a run of a few hundred steps

Every ``test_*`` method runs once per kit suite (``kit_pixels``, ``kit_vector``; see
:mod:`benchgen.testing.agent_suites`). The agent runs through benchgen's run engine as
``benchgen run`` and ``benchgen resume`` run it, on a budget of a few hundred agent steps; the
kit's environments log what they were asked to do and the checks compare that with what the
run recorded (:mod:`benchgen.testing.agent_checks`). A suite not in ``runs_on`` must be refused
in one line before anything is written; the other tests skip it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from benchgen.testing import agent_checks
from benchgen.testing.agent_suites import KIT_SUITES


class AgentConformance:
    """Every guarantee a benchgen agent must meet (see ``benchgen.testing.agent_checks.AGENT_CHECKS``)."""

    #: the plugin under test: a module (or object) with ``@benchgen.hookimpl`` functions, or a
    #: list of them; None tests the installed plugins (entry points and ``BENCHGEN_PLUGINS``)
    plugin: Any = None
    #: the agent's name (required)
    agent_name: str = ""
    #: the kit suites the agent runs on (what its spaces and needs allow); it must refuse the others
    runs_on: Sequence[str] = KIT_SUITES
    #: settings for every run, as ``--set KEY=VALUE``: shrink what makes a few hundred steps slow
    #: (replay sizes, learning starts, rollout lengths)
    settings: Mapping[str, Any] = {}
    #: per kit suite, settings over ``settings``
    suite_settings: Mapping[str, Mapping[str, Any]] = {}
    #: whether the agent's actions depend on its seed (False: the different-seed check is skipped)
    stochastic: bool = True
    #: each unit's budget in agent steps (odd, so the last vector step of two sub-environments
    #: crosses it)
    budget_steps: int = 301
    #: sub-environments per unit
    num_envs: int = 2
    #: the seed of every run (the reproducibility check also uses ``seed + 1``)
    seed: int = 0

    @pytest.fixture(scope="class")
    @classmethod
    def agent_kit(cls, tmp_path_factory) -> agent_checks.AgentKit:
        """The kit for the agent under test, with a registry of its plugin and the kit suites."""
        if not cls.agent_name:
            pytest.fail(f"{cls.__name__}: set `agent_name` to the agent's name")
        unknown = [s for s in cls.runs_on if s not in KIT_SUITES]
        if unknown:
            pytest.fail(f"{cls.__name__}: runs_on names {unknown}; the kit suites are {list(KIT_SUITES)}")
        registry = agent_checks.kit_registry(cls.plugin)
        if cls.agent_name not in registry.agents:
            pytest.fail(
                f"{cls.__name__}: no agent '{cls.agent_name}' among {sorted(registry.agents)}; "
                "set `plugin` to the module that implements benchgen_agents"
            )
        options = agent_checks.KitOptions(
            settings=dict(cls.settings),
            suite_settings={k: dict(v) for k, v in cls.suite_settings.items()},
            budget_steps=cls.budget_steps,
            num_envs=cls.num_envs,
            seed=cls.seed,
        )
        return agent_checks.AgentKit(
            registry, cls.agent_name, tmp_path_factory.mktemp(f"kit-{cls.agent_name}"), options
        )

    def runs(self, kit_suite: str) -> None:
        """Skip a test that needs a run on a suite the agent does not run on."""
        if kit_suite not in self.runs_on:
            pytest.skip(f"'{self.agent_name}' does not run on {kit_suite} (runs_on)")

    @pytest.mark.parametrize("kit_suite", KIT_SUITES)
    def test_runs_where_it_declares_and_refuses_elsewhere(self, agent_kit, kit_suite):
        if kit_suite in self.runs_on:
            agent_kit.check_runs(kit_suite)
        else:
            agent_kit.check_refuses(kit_suite)

    @pytest.mark.parametrize("kit_suite", KIT_SUITES)
    def test_respects_its_budget(self, agent_kit, kit_suite):
        self.runs(kit_suite)
        agent_kit.check_budget(kit_suite)

    @pytest.mark.parametrize("kit_suite", KIT_SUITES)
    def test_records_through_the_suite(self, agent_kit, kit_suite):
        self.runs(kit_suite)
        agent_kit.check_records(kit_suite)

    @pytest.mark.parametrize("kit_suite", KIT_SUITES)
    def test_reproducible_with_a_seed(self, agent_kit, kit_suite):
        self.runs(kit_suite)
        agent_kit.check_reproducible(kit_suite, stochastic=self.stochastic)

    @pytest.mark.parametrize("kit_suite", KIT_SUITES)
    def test_resumes_identically(self, agent_kit, kit_suite):
        self.runs(kit_suite)
        agent_kit.check_resume(kit_suite)

    @pytest.mark.parametrize("kit_suite", KIT_SUITES)
    def test_uses_only_declared_capabilities(self, agent_kit, kit_suite):
        self.runs(kit_suite)
        agent_kit.check_capabilities(kit_suite)

    @pytest.mark.parametrize("kit_suite", KIT_SUITES)
    def test_save_load_round_trip(self, agent_kit, kit_suite):
        self.runs(kit_suite)
        agent_kit.check_save_load(kit_suite)
