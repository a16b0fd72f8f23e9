"""The agent kit catches each defect it promises to catch, with a message that says what to fix.

One small agent, ``flawed``, plays uniformly random actions from a generator seeded by the unit's
seed, saved and restored with its checkpoints; its ``defect`` setting breaks it in one way. Sound,
it passes the whole kit (``TestSoundAgentPassesTheKit``); each broken variant fails the one check
that guards against its defect.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import benchgen
from benchgen.agent import Agent, AgentSpec
from benchgen.errors import UsageError
from benchgen.suite import EpisodeEnd
from benchgen.testing import AgentConformance, AgentKit, ConformanceError, KitOptions, kit_registry
from benchgen.testing.agent_suites import PIXELS, VECTOR


@dataclass
class FlawedConfig:
    """The flawed agent's one setting."""

    defect: str = ""
    """Which defect the agent has ("": none)."""


class FlawedAgent(Agent):
    """Uniform random actions; ``config.defect`` breaks one promise of the agent protocol."""

    def __init__(self, config: FlawedConfig, environment):
        super().__init__(config, environment)
        flat = len(self.observation_space.shape) == 1
        if flat and config.defect == "refuses_vectors":
            raise UsageError("flawed needs image observations")
        if flat and config.defect == "traceback_on_vectors":
            raise ValueError("cannot handle flat observations")
        self.rng = np.random.default_rng(0)
        self.seeded = False

    def learn(self, env, ctx) -> None:
        defect = self.config.defect
        if defect == "late_refusal":
            raise UsageError("flawed refuses only once it is running")
        if not self.seeded:
            self.rng = np.random.default_rng(0 if defect == "ignores_seed" else ctx.seed)
            self.seeded = True
        if defect == "unseeded":
            self.rng = np.random.default_rng()
        env.reset(seed=ctx.reset_seed)
        own_steps = 0
        while not (own_steps >= ctx.budget_steps if defect == "own_count" else ctx.finished):
            if defect == "stops_early" and ctx.steps_done >= ctx.budget_steps // 2:
                return
            actions = self.actions(env.num_envs)
            env.step(actions)
            own_steps += env.num_envs
            if defect == "around_recorder" and own_steps % 6 == 0:
                env.unwrapped.step(actions)  # steps the suite env below the recorder...
                env.unwrapped.pop_episode_ends()  # ... and drops what it ended
            if defect == "forges" and own_steps == 40:
                ctx.recorder.record([EpisodeEnd(0, env.unwrapped.tasks[0], 1e6, 4, "time_limit")])
            ctx.maybe_checkpoint()
        if defect == "overspends":
            for _ in range(2):
                env.step(self.actions(env.num_envs))

    def actions(self, count: int) -> np.ndarray:
        return self.rng.integers(0, self.action_space.n, size=count)

    def act(self, observations, greedy: bool = True) -> np.ndarray:
        actions = self.actions(len(observations))
        return actions.astype(np.float32) if self.config.defect == "float_actions" else actions

    def save(self, directory: Path) -> None:
        if self.config.defect != "forgets":
            state = {"rng": self.rng.bit_generator.state, "seeded": self.seeded}
            (Path(directory) / "flawed.json").write_text(json.dumps(state))

    def load(self, directory: Path) -> None:
        path = Path(directory) / "flawed.json"
        if path.is_file():
            state = json.loads(path.read_text())
            self.rng.bit_generator.state, self.seeded = state["rng"], state["seeded"]
        if self.config.defect == "reseeds_on_load":
            self.rng = np.random.default_rng()


class FlawedPlugin:
    """The plugin that contributes ``flawed`` (registered by hand)."""

    __name__ = "flawed_agent_plugin"

    @staticmethod
    @benchgen.hookimpl
    def benchgen_agents():
        return [AgentSpec(name="flawed", config_class=FlawedConfig, factory=FlawedAgent, description="test agent")]


PLUGIN = FlawedPlugin()


class TestSoundAgentPassesTheKit(AgentConformance):
    plugin = PLUGIN
    agent_name = "flawed"


@pytest.fixture(scope="module")
def registry():
    return kit_registry(PLUGIN)


def kit(registry, tmp_path, defect: str) -> AgentKit:
    return AgentKit(registry, "flawed", tmp_path, KitOptions(settings={"defect": defect}))


@pytest.mark.parametrize(
    "defect, check, fragment",
    [
        ("overspends", "check_budget", "more than one vector step"),
        ("stops_early", "check_budget", "stepped only"),
        ("around_recorder", "check_budget", "counted"),
        ("around_recorder", "check_records", "were not recorded"),
        ("forges", "check_records", "that no environment ended"),
        ("unseeded", "check_reproducible", "differ at recorded episode"),
        ("ignores_seed", "check_reproducible", "runs with different seeds took the same"),
        ("own_count", "check_resume", "did not stop the run"),
        ("reseeds_on_load", "check_resume", "each resumed differ"),
        ("forgets", "check_save_load", "the agent loaded from a save acts"),
        ("float_actions", "check_save_load", "act() returned"),
    ],
)
@pytest.mark.parametrize("suite", [PIXELS, VECTOR])
def test_each_defect_fails_its_check(registry, tmp_path, defect, check, fragment, suite):
    with pytest.raises(ConformanceError, match=re.escape(fragment)) as caught:
        getattr(kit(registry, tmp_path, defect), check)(suite)
    assert str(caught.value).startswith("agent 'flawed': ")


@pytest.mark.parametrize(
    "defect, fragment",
    [
        ("", "it ran on kit_vector, which `runs_on` does not list"),
        ("traceback_on_vectors", "ended in a traceback (ValueError: cannot handle flat observations)"),
        ("late_refusal", "still wrote"),
    ],
)
def test_refusals_must_be_one_line_and_early(registry, tmp_path, defect, fragment):
    with pytest.raises(ConformanceError, match=re.escape(fragment)):
        kit(registry, tmp_path, defect).check_refuses(VECTOR)


def test_a_clean_refusal_passes_and_writes_nothing(registry, tmp_path):
    kit(registry, tmp_path, "refuses_vectors").check_refuses(VECTOR)
    assert not (tmp_path / f"refused-{VECTOR}").exists()
