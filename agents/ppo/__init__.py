"""PPO (Schulman et al. 2017) through stable-baselines3, as benchgen's ``ppo`` agent.

``config.py`` (torch-free) holds the settings (suites ship the values they tuned for their tasks:
``Suite.tuned_settings``, e.g. the Sonic paper's), ``vec_env.py`` the SB3 ``VecEnv`` adapter,
``update.py`` the one PPO loss and update (one process, data-parallel and virtual workers alike;
why it is benchgen's and not SB3's ``train``: its docstring), ``chunked.py`` SB3's ``PPO`` trained
by it, ``rollout.py`` and ``data_parallel.py`` joint PPO's virtual and data-parallel workers, and
``agent.py`` the agent. torch and SB3 are imported only when an agent is built, so
``benchgen list`` stays fast.
"""

from __future__ import annotations

import math
from typing import Any

from benchgen.agent import AgentEnvironment, AgentSpec
from benchgen_agents.common.torch_device import device_kind
from benchgen_agents.data_parallel.settings import WorkerSettingsCheck
from benchgen_agents.ppo.config import PPOConfig

#: None: the suite's default number of sub-environments, which is each source's: 8 on atari_saber
#: (RL Zoo's Atari n_envs), 1 on sonic (the paper's single PPO worker)
DEFAULT_NUM_ENVS = None


def make_agent(config: PPOConfig, environment: AgentEnvironment):
    """Factory for the registry: builds :class:`~benchgen_agents.ppo.agent.PPOAgent`."""
    from benchgen_agents.ppo.agent import PPOAgent

    return PPOAgent(config, environment)


def vector_width(config: PPOConfig, num_envs: int, tasks: int, fine_tuning: bool) -> int | None:
    """``AgentSpec.vector_width``: with data-parallel (or virtual) workers, all of theirs together,
    ``envs_per_worker`` each or the unit's tasks spread over them (``data_parallel.envs_per_worker``);
    None for one PPO (fine-tuning units always run as one)."""
    total = config.virtual_workers or config.workers
    if fine_tuning or not total:
        return None
    return total * (config.envs_per_worker or max(1, math.ceil(tasks / total)))


def round_steps(config: Any, width: int) -> int:
    """``AgentSpec.round_steps``: a rollout of ``n_steps`` on every sub-environment precedes each update."""
    return int(config.n_steps) * int(width)


SPECS = [
    AgentSpec(
        name="ppo",
        config_class=PPOConfig,
        factory=make_agent,
        description="PPO (stable-baselines3): Nature-CNN actor-critic; RL Zoo Atari / Sonic-paper settings",
        default_num_envs=DEFAULT_NUM_ENVS,
        check_config=WorkerSettingsCheck("ppo"),
        vector_width=vector_width,
        device=device_kind,
        round_steps=round_steps,
        software=("torch", "stable-baselines3"),
    )
]

__all__ = ["SPECS", "PPOConfig", "make_agent"]
