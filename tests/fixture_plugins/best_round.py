"""A suite that scores the best policy found (``EvaluationSchedule.best_policy``) and an agent that
gets worse as it trains, so that its best evaluation round is an early one. Loaded with
``BENCHGEN_PLUGINS=tests.fixture_plugins.toy_suite,tests.fixture_plugins.best_round``.

Suite ``toy_best``: the toy suite's tasks, an evaluation round of :data:`ROUND_EPISODES` episodes
every :data:`INTERVAL_FRAMES` training frames and after training, the best round re-evaluated.

Agent ``fading``: plays action 2 (reward 1 with probability 0.8 a step, the toy's best) until it
has trained :data:`FADE_STEPS` agent steps, then action 0 (three in a row end the episode with
almost nothing); its checkpoint holds the steps it trained. Each ``act`` sleeps
:data:`ACT_SECONDS`, so that a test can kill a run in the middle of an evaluation round.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import benchgen
from benchgen.agent import Agent, AgentSpec
from benchgen.suite import EvaluationSchedule
from tests.fixture_plugins.toy_suite import ToySuite

INTERVAL_FRAMES = 400
ROUND_EPISODES = 30
FADE_STEPS = 150  # agent steps: 600 frames, between the first round (400) and the second (800)
ACT_SECONDS = 0.01


class BestRoundSuite(ToySuite):
    name = "toy_best"
    description = "the toy suite, scored by its best evaluation round re-evaluated"

    def protocol(self):
        return {"version": "1", "frames_per_step": 4, "best_policy": True}

    def evaluation_schedule(self):
        return EvaluationSchedule(episodes=ROUND_EPISODES, interval_frames=INTERVAL_FRAMES, best_policy=True)


@dataclass
class FadingConfig:
    """The fading agent's one setting."""

    fade_steps: int = FADE_STEPS
    """Agent steps of training after which it plays its worst action."""


class Fading(Agent):
    """Good until it has trained ``fade_steps`` agent steps, bad after."""

    def __init__(self, config: FadingConfig, environment):
        super().__init__(config, environment)
        self.steps = 0

    def act(self, observations, greedy: bool = True) -> np.ndarray:
        time.sleep(ACT_SECONDS)
        action = 2 if self.steps < self.config.fade_steps else 0
        return np.full(len(observations), action, dtype=np.int64)

    def learn(self, env, ctx) -> None:
        env.reset(seed=ctx.reset_seed)
        while not ctx.finished:
            action = 2 if self.steps < self.config.fade_steps else 0
            env.step(np.full(env.num_envs, action, dtype=np.int64))
            self.steps = ctx.steps_done
            ctx.maybe_checkpoint()

    def save(self, directory: Path) -> None:
        (Path(directory) / "fading.json").write_text(json.dumps({"steps": self.steps}))

    def load(self, directory: Path) -> None:
        self.steps = json.loads((Path(directory) / "fading.json").read_text())["steps"]


SPEC = AgentSpec(name="fading", config_class=FadingConfig, factory=Fading, description="good, then bad")


@benchgen.hookimpl
def benchgen_suites():
    return [BestRoundSuite()]


@benchgen.hookimpl
def benchgen_agents():
    return [SPEC]


@benchgen.hookimpl
def benchgen_splits(suite):
    return []
