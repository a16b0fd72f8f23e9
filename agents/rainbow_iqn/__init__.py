"""Rainbow-IQN: Rainbow with an implicit quantile head (SABER, Toromanoff et al. 2019, section 4).

``config.py`` (torch-free) holds the settings; ``agent.py`` the agent, built from
``benchgen_agents.value_based``'s parts (the implicit quantile head among them); ``apex.py``
the distributed variant (``--set actors=N``: Ape-X actors on Ray, one learner). torch is imported only when an agent is built, so ``benchgen list`` stays fast; Ray
only when ``actors > 0``.
"""

from __future__ import annotations

from benchgen.agent import AgentEnvironment, AgentSpec
from benchgen_agents.common.torch_device import device_kind
from benchgen_agents.rainbow_iqn.config import VARIANTS, RainbowIQNConfig


def make_agent(config: RainbowIQNConfig, environment: AgentEnvironment):
    """Factory for the registry: builds :class:`~benchgen_agents.rainbow_iqn.agent.RainbowIQNAgent`."""
    from benchgen_agents.rainbow_iqn.agent import RainbowIQNAgent

    return RainbowIQNAgent(config, environment)


SPECS = [
    AgentSpec(
        name="rainbow_iqn",
        config_class=RainbowIQNConfig,
        factory=make_agent,
        description="Rainbow-IQN (SABER): IQN head, dueling noisy nets, double Q, 3-step PER replay",
        default_num_envs=1,
        device=device_kind,
        software=("torch",),
        variants=VARIANTS,  # paper (the defaults) and saber_code: see config.py
    )
]

__all__ = ["SPECS", "RainbowIQNConfig", "make_agent"]
