"""DQN (Mnih et al. 2015, Nature): the baseline of Machado et al. 2018 and of SABER's Figure 5.

``config.py`` (torch-free) holds the settings; ``agent.py`` the agent, built from
``benchgen_agents.value_based``'s parts. torch is imported only when an agent is built, so
``benchgen list`` stays fast.
"""

from __future__ import annotations

from benchgen.agent import AgentEnvironment, AgentSpec
from benchgen_agents.common.torch_device import device_kind
from benchgen_agents.dqn.config import VARIANTS, DQNConfig


def make_agent(config: DQNConfig, environment: AgentEnvironment):
    """Factory for the registry: builds :class:`~benchgen_agents.dqn.agent.DQNAgent`."""
    from benchgen_agents.dqn.agent import DQNAgent

    return DQNAgent(config, environment)


SPECS = [
    AgentSpec(
        name="dqn",
        config_class=DQNConfig,
        factory=make_agent,
        description="DQN (Mnih et al. 2015): Nature network, epsilon-greedy, uniform replay, RMSProp",
        default_num_envs=1,
        device=device_kind,
        software=("torch",),
        variants=VARIANTS,  # nature (the defaults) and drq_eps (DrQ(epsilon), Atari 100K): see config.py
    )
]

__all__ = ["SPECS", "DQNConfig", "make_agent"]
