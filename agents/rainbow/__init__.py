"""Rainbow (Hessel et al. 2018): the C51 agent of the SABER and Gotta Learn Fast baselines.

``config.py`` (torch-free) holds the settings; ``agent.py`` the agent,
built from ``benchgen_agents.value_based``'s parts. torch is imported only when an agent is
built, so ``benchgen list`` stays fast.
"""

from __future__ import annotations

from benchgen.agent import AgentEnvironment, AgentSpec
from benchgen_agents.common.torch_device import device_kind
from benchgen_agents.data_parallel.settings import WorkerSettingsCheck, data_parallel_width
from benchgen_agents.rainbow.config import VARIANTS, RainbowConfig


def make_agent(config: RainbowConfig, environment: AgentEnvironment):
    """Factory for the registry: builds :class:`~benchgen_agents.rainbow.agent.RainbowAgent`."""
    from benchgen_agents.rainbow.agent import RainbowAgent

    return RainbowAgent(config, environment)


SPECS = [
    AgentSpec(
        name="rainbow",
        config_class=RainbowConfig,
        factory=make_agent,
        description="Rainbow (Hessel et al. 2018): C51 head, dueling noisy nets, double Q, 3-step PER replay",
        default_num_envs=1,
        check_config=WorkerSettingsCheck("rainbow"),
        vector_width=data_parallel_width,
        device=device_kind,
        software=("torch",),
        variants=VARIANTS,  # paper (the defaults) and der (Data-Efficient Rainbow, Atari 100K): see config.py
    )
]

__all__ = ["SPECS", "RainbowConfig", "make_agent"]
