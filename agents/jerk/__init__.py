"""JERK, "Just Enough Retained Knowledge" (Nichol et al. 2018, "Gotta Learn Fast", Algorithm 1).

``config.py`` holds Algorithm 1's parameters, ``agent.py`` the algorithm (its module docstring
walks through it); JERK has no network: it reads only rewards and the suite's named actions.
"""

from __future__ import annotations

from benchgen.agent import AgentEnvironment, AgentNeeds, AgentSpec
from benchgen_agents.jerk.config import REQUIRED_ACTIONS, JerkConfig


def make_agent(config: JerkConfig, environment: AgentEnvironment):
    """Factory for the registry: builds :class:`~benchgen_agents.jerk.agent.JerkAgent`."""
    from benchgen_agents.jerk.agent import JerkAgent

    return JerkAgent(config, environment)


SPECS = [
    AgentSpec(
        name="jerk",
        config_class=JerkConfig,
        factory=make_agent,
        description="JERK (Nichol et al. 2018): scripted right/jump explorer replaying its best action prefix",
        default_num_envs=1,
        # Algorithm 1 reads only rewards, in the benchmark's units (its running means), and the
        # named actions; it learns nothing from pixels but gets the suite's frames like any agent.
        needs=AgentNeeds(reward="benchmark", actions=REQUIRED_ACTIONS),
    )
]
