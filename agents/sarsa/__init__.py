"""Sarsa(lambda) with linear function approximation on the ALE papers' feature sets.

``benchgen run atari_saber sarsa --set features=bass --protocol ale2013``: Bellemare et al.
2013's learning agents (features basic, bass, disco, lsh, ram; appendix C's parameters), and
``--set features=blob_prost --protocol machado2018``: Liang et al. 2016's, as Machado et al. 2018
ran it. The learner is :mod:`.learner`, the agent loop :mod:`.agent`, the settings :mod:`.config`,
the features :mod:`benchgen_agents.ale_features`.
"""

from __future__ import annotations

from benchgen.agent import AgentNeeds, AgentSpec
from benchgen_agents.sarsa.config import SarsaConfig


def _make(config, environment):
    from benchgen_agents.sarsa.agent import SarsaAgent

    return SarsaAgent(config, environment)


def _check(config, run):
    from benchgen_agents.sarsa.agent import check_sarsa_config

    return check_sarsa_config(config, run)


SPECS = [
    AgentSpec(
        name="sarsa",
        config_class=SarsaConfig,
        factory=_make,
        description="Sarsa(lambda) on the ALE papers' features: Basic/BASS/DISCO/LSH/RAM (2013), Blob-PROST (2016)",
        default_num_envs=1,
        # raw rewards (it scales them itself), and the emulator's screen and RAM instead of frames
        needs=AgentNeeds(reward="benchmark", capabilities=("palette_screen", "ram")),
        check_config=_check,
    )
]
