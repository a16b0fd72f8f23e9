"""Bellemare et al. 2013's Const and Perturb baselines: one fixed action, with or without noise.

Section 3.1.2 of the ALE paper: "The Const agent selects a single fixed action throughout an
episode ... The Perturb agent selects a fixed action with probability 0.95 and otherwise acts
uniformly randomly"; for each game the paper reports the best such policy over the actions (a
sweep: ``benchgen run SUITE const --vary action=0,1,...,17``). One algorithm with two defaults:
Const is Perturb with no perturbation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchgen.agent import Agent, AgentEnvironment, AgentNeeds, AgentSpec
from benchgen.errors import UsageError


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


class FixedActionAgent(Agent):
    """Holds ``config.action``; with ``random_action_probability`` plays a random action instead."""

    def __init__(self, config: FixedActionConfig, environment: AgentEnvironment):
        super().__init__(config, environment)
        n = getattr(self.action_space, "n", None)
        if n is None:
            raise UsageError(f"the fixed-action agents need a discrete action space, got {self.action_space}")
        if not 0 <= config.action < n:
            raise UsageError(
                f"action {config.action} is not in this action space (0 to {n - 1}); set action=0..{n - 1}"
            )
        if not 0.0 <= config.random_action_probability <= 1.0:
            raise UsageError("random_action_probability must lie in [0, 1]")
        self.rng = np.random.default_rng(config.seed_offset)

    def _actions(self, num_envs: int) -> np.ndarray:
        actions = np.full(num_envs, self.config.action, dtype=np.int64)
        p = self.config.random_action_probability
        if p > 0:
            noisy = self.rng.random(num_envs) < p
            actions[noisy] = self.rng.integers(0, self.action_space.n, size=int(noisy.sum()))
        return actions

    def learn(self, env, ctx) -> None:
        if getattr(self, "_seeded_for", None) is None:
            self.rng = np.random.default_rng(ctx.seed + self.config.seed_offset)
            self._seeded_for = ctx.seed
        env.reset(seed=ctx.reset_seed)
        while not ctx.finished:
            env.step(self._actions(env.num_envs))
            ctx.maybe_checkpoint()

    def act(self, observations, greedy: bool = True) -> np.ndarray:
        return self._actions(len(observations))

    def save(self, directory: Path) -> None:
        state = {"bit_generator": self.rng.bit_generator.state, "seeded_for": getattr(self, "_seeded_for", None)}
        (Path(directory) / "fixed_action_agent.json").write_text(json.dumps(state))

    def load(self, directory: Path) -> None:
        path = Path(directory) / "fixed_action_agent.json"
        if path.is_file():
            state = json.loads(path.read_text())
            self.rng.bit_generator.state = state["bit_generator"]
            self._seeded_for = state["seeded_for"]


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
