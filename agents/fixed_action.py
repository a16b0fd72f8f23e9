"""Bellemare et al. 2013's Const and Perturb baselines: one fixed action, with or without noise.

Section 3.1.2 of the ALE paper: "The Const agent selects a single fixed action throughout an
episode ... The Perturb agent selects a fixed action with probability 0.95 and otherwise acts
uniformly randomly"; for each game the paper reports the best such policy over the actions (a
sweep: ``benchgen run SUITE const --vary action=0,1,...,17``). One algorithm with two defaults:
Const is Perturb with no perturbation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from benchgen.agent import AgentEnvironment, AgentNeeds, AgentSpec
from benchgen.errors import UsageError
from benchgen_agents.random_agent import RandomAgent


@dataclass
class FixedActionConfig:
    """Which action to hold, and how often to replace it with a uniformly random one."""

    action: int = 0
    """Index of the fixed action in the agent's discrete action space (0 = NOOP on Atari)."""
    random_action_probability: float = 0.0
    """Probability of a uniformly random action instead at each step (Perturb: 0.05; Const: 0)."""
    seed_offset: int = 0
    """Added to the unit seed for the perturbation's RNG."""


@dataclass
class PerturbConfig(FixedActionConfig):
    """Perturb: the fixed action with probability 0.95, otherwise a uniformly random one."""

    random_action_probability: float = 0.05
    """Probability of a uniformly random action instead at each step (Bellemare et al. 2013: 0.05)."""


class FixedActionAgent(RandomAgent):
    """Holds ``config.action``; with ``random_action_probability`` plays a random action instead.
    The rest (seeding from the unit, the loop, saving the generator) is the random agent's."""

    def __init__(self, config: FixedActionConfig, environment: AgentEnvironment):
        n = getattr(environment.action_space, "n", None)
        if n is None:
            raise UsageError(f"the fixed-action agents need a discrete action space, got {environment.action_space}")
        if not 0 <= config.action < n:
            raise UsageError(
                f"action {config.action} is not in this action space (0 to {n - 1}); set action=0..{n - 1}"
            )
        if not 0.0 <= config.random_action_probability <= 1.0:
            raise UsageError("random_action_probability must lie in [0, 1]")
        super().__init__(config, environment)

    def _actions(self, num_envs: int) -> np.ndarray:
        actions = np.full(num_envs, self.config.action, dtype=np.int64)
        p = self.config.random_action_probability
        if p > 0:
            noisy = self.rng.random(num_envs) < p
            actions[noisy] = self.rng.integers(0, self.action_space.n, size=int(noisy.sum()))
        return actions


SPECS = [
    AgentSpec(
        name="const",
        config_class=FixedActionConfig,
        factory=FixedActionAgent,
        description="one fixed action throughout (Bellemare et al. 2013's Const baseline)",
        needs=AgentNeeds(reward="benchmark"),
    ),
    AgentSpec(
        name="perturb",
        config_class=PerturbConfig,
        factory=FixedActionAgent,
        description="a fixed action with probability 0.95, else uniform (Bellemare et al. 2013's Perturb)",
        needs=AgentNeeds(reward="benchmark"),
    ),
]
