"""PPO (Schulman et al. 2017) through stable-baselines3, as benchgen's ``ppo`` agent.

``config.py`` (torch-free) holds the settings, ``defaults/<suite>.yaml`` the per-suite overrides
(RL Zoo Atari; Nichol et al. 2018 on Sonic), ``vec_env.py`` the SB3 ``VecEnv`` adapter and
``agent.py`` the agent. torch and SB3 are imported only when an agent is built, so
``benchgen list`` stays fast.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import yaml

from benchgen.agent import AgentEnvironment, AgentSpec
from benchgen_agents.data_parallel.settings import WorkerSettingsCheck
from benchgen_agents.ppo.config import PPOConfig

DEFAULTS_DIR = Path(__file__).with_name("defaults")

#: None: the suite's default number of sub-environments, which is each source's: 8 on atari_saber
#: (RL Zoo's Atari n_envs), 1 on sonic (the paper's single PPO worker)
DEFAULT_NUM_ENVS = None


def load_suite_defaults(directory: Path = DEFAULTS_DIR) -> dict[str, dict[str, Any]]:
    """``{suite: {field: value}}`` from ``directory/<suite>.yaml``; unknown fields are errors."""
    fields = {f.name for f in dataclasses.fields(PPOConfig)}
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(directory.glob("*.yaml")):
        data = yaml.safe_load(path.read_text()) or {}
        unknown = set(data) - fields
        if unknown:
            raise ValueError(f"{path} sets unknown PPO settings {sorted(unknown)}; known: {sorted(fields)}")
        out[path.stem] = data
    return out


def make_agent(config: PPOConfig, environment: AgentEnvironment):
    """Factory for the registry: builds :class:`~benchgen_agents.ppo.agent.PPOAgent`."""
    from benchgen_agents.ppo.agent import PPOAgent

    return PPOAgent(config, environment)


SUITE_DEFAULTS = load_suite_defaults()

SPECS = [
    AgentSpec(
        name="ppo",
        config_class=PPOConfig,
        factory=make_agent,
        description="PPO (stable-baselines3): Nature-CNN actor-critic; RL Zoo Atari / Sonic-paper settings",
        default_num_envs=DEFAULT_NUM_ENVS,
        suite_defaults=SUITE_DEFAULTS,
        check_config=WorkerSettingsCheck("ppo"),
    )
]

__all__ = ["SPECS", "PPOConfig", "make_agent", "load_suite_defaults"]
