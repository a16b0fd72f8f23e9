"""A third-party agent no suite names: it runs right with a jump now and then, so it declares
the actions it needs the suite to name and asks for the benchmark reward (it keeps the best
episode return, in score units). Loaded with ``BENCHGEN_PLUGINS=tests.fixture_plugins.sprinter_agent``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import benchgen
from benchgen.agent import Agent, AgentEnvironment, AgentNeeds, AgentSpec

#: the actions the sprinter presses
ACTIONS = ("right", "right_jump")


@dataclass
class SprinterConfig:
    """The sprinter's one setting."""

    jump_every: int = 5
    """Press right+jump every this many steps, right otherwise."""


class Sprinter(Agent):
    """Right, and right+jump every ``jump_every`` steps; remembers its best episode return."""

    def __init__(self, config: SprinterConfig, environment: AgentEnvironment):
        super().__init__(config, environment)
        self.actions = environment.named_actions("sprinter", ACTIONS)
        self.best = float("-inf")

    def act(self, observations, greedy: bool = True) -> np.ndarray:
        return np.full(len(observations), self.actions["right"], dtype=np.int64)

    def learn(self, env, ctx) -> None:
        env.reset(seed=ctx.reset_seed)
        returns, t = np.zeros(env.num_envs), 0
        while not ctx.finished:
            t += 1
            name = "right_jump" if t % self.config.jump_every == 0 else "right"
            _obs, rewards, terminated, truncated, _info = env.step(np.full(env.num_envs, self.actions[name]))
            returns += rewards
            for i in np.flatnonzero(np.asarray(terminated) | np.asarray(truncated)):
                self.best, returns[i] = max(self.best, float(returns[i])), 0.0
            ctx.maybe_checkpoint()

    def save(self, directory: Path) -> None:
        (Path(directory) / "sprinter.json").write_text(json.dumps({"best": self.best}))

    def load(self, directory: Path) -> None:
        self.best = json.loads((Path(directory) / "sprinter.json").read_text())["best"]


SPEC = AgentSpec(
    name="sprinter",
    config_class=SprinterConfig,
    factory=Sprinter,
    description="runs right and jumps (a third-party agent declaring its needs)",
    needs=AgentNeeds(reward="benchmark", actions=ACTIONS),
)


@benchgen.hookimpl
def benchgen_agents():
    return [SPEC]
