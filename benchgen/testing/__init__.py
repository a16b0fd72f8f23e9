"""The plugin conformance kit: the guarantees every benchgen suite meets, as tests.

A plugin's own test suite imports it. The usual way is one test class::

    # tests/test_conformance.py of a plugin
    import benchgen_mysuite
    from benchgen.testing import SuiteConformance

    class TestMySuite(SuiteConformance):
        plugin = benchgen_mysuite          # the module with the @benchgen.hookimpl functions
        suite_name = "mysuite"
        episode_tasks = ["short-task"]      # a task whose random episodes end quickly

Every ``test_*`` method of :class:`SuiteConformance` then runs against that suite (first-party
suites run the same class in their own tests). The checks are also plain functions in
:mod:`benchgen.testing.checks` (no pytest needed) that raise :class:`ConformanceError`, an
``AssertionError`` whose message says what is wrong and how to fix it (the vector env's checks
are in :mod:`benchgen.testing.suite_envs`, what both kits share in :mod:`benchgen.testing.kit`).

What is checked is listed in :data:`benchgen.testing.checks.CHECKS` (and in the plugin author
guide, generated from it).

Agent plugins have their own kit, :class:`AgentConformance` (in
:mod:`benchgen.testing.agent_conformance`): it runs an agent through benchgen's run engine on
scripted suites shipped here (:mod:`benchgen.testing.agent_suites`) and checks its budget,
recording, resuming, save/load, seeding and refusals; the checks are
:data:`benchgen.testing.agent_checks.AGENT_CHECKS`.
"""

from __future__ import annotations

from typing import Any

from benchgen.testing import checks
from benchgen.testing.agent_checks import AGENT_CHECKS, AgentKit, KitOptions, kit_registry
from benchgen.testing.agent_suites import KIT_SUITES
from benchgen.testing.checks import *  # noqa: F403 - the suite kit's names (checks.__all__)

__all__ = [
    *checks.__all__,
    "AGENT_CHECKS",
    "AgentConformance",  # noqa: F405 - given by __getattr__ below (it needs pytest)
    "AgentKit",
    "KIT_SUITES",
    "KitOptions",
    "SuiteConformance",  # noqa: F405 - likewise
    "kit_registry",
]


def __getattr__(name: str) -> Any:
    # SuiteConformance needs pytest; import it only when asked for, so the check functions
    # work without pytest installed.
    if name == "SuiteConformance":
        from benchgen.testing.conformance import SuiteConformance

        return SuiteConformance
    if name == "AgentConformance":
        from benchgen.testing.agent_conformance import AgentConformance

        return AgentConformance
    raise AttributeError(f"module 'benchgen.testing' has no attribute '{name}'")
