"""The Brute (Bellemare et al. 2015; Machado et al. 2018, section 4.1): the best action sequence found so far.

``config.py`` holds its settings, ``agent.py`` the history tree and the agent (its module
docstring says what the paper leaves open and what benchgen chose); the Brute has no network.
"""

from __future__ import annotations

from benchgen.agent import AgentEnvironment, AgentNeeds, AgentSpec
from benchgen_agents.brute.config import BruteConfig


def make_agent(config: BruteConfig, environment: AgentEnvironment):
    """Factory for the registry: builds :class:`~benchgen_agents.brute.agent.BruteAgent`."""
    from benchgen_agents.brute.agent import BruteAgent

    return BruteAgent(config, environment)


def _check_suite(suite) -> None:
    from benchgen_agents.brute.agent import check_suite

    check_suite(suite)


SPECS = [
    AgentSpec(
        name="brute",
        config_class=BruteConfig,
        factory=make_agent,
        description="the Brute: best action sequence found so far, exploits determinism (Machado et al. 2018)",
        needs=AgentNeeds(reward="benchmark"),
        check_suite=_check_suite,
        default_num_envs=1,
    )
]
