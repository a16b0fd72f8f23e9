"""Uniform random actions: the reference agent of normalization and the smoke-test agent.

Bellemare et al. 2013 and SABER normalize against the scores of uniformly random play.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchgen.agent import Agent, AgentEnvironment, AgentNeeds, AgentSpec
from benchgen.errors import UsageError
from benchgen_agents.common.checkpoint_io import save_json


@dataclass
class RandomConfig:
    """The random agent has nothing to tune; its RNG is seeded from the unit's seed."""

    seed_offset: int = 0
    """Added to the unit seed for the action RNG (to draw another random stream)."""


class RandomAgent(Agent):
    """Picks each sub-environment's action uniformly from the discrete action space."""

    def __init__(self, config: RandomConfig, environment: AgentEnvironment):
        super().__init__(config, environment)
        if not hasattr(self.action_space, "n"):
            raise UsageError(f"the random agent needs a discrete action space, got {self.action_space}")
        self.rng = np.random.default_rng(config.seed_offset)

    def _actions(self, num_envs: int) -> np.ndarray:
        return self.rng.integers(0, self.action_space.n, size=num_envs)

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
        save_json(state, Path(directory) / "random_agent.json")

    def load(self, directory: Path) -> None:
        path = Path(directory) / "random_agent.json"
        if not path.is_file():
            return  # a checkpoint of another agent (e.g. a joint policy): nothing to restore
        state = json.loads(path.read_text())
        self.rng.bit_generator.state = state["bit_generator"]
        self._seeded_for = state["seeded_for"]


SPECS = [
    AgentSpec(
        name="random",
        config_class=RandomConfig,
        factory=RandomAgent,
        description="uniform random actions (the normalization reference)",
        needs=AgentNeeds(reward="benchmark"),  # it ignores rewards: no shaping to compute
        random_play=True,
    )
]
