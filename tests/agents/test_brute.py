"""The Brute (Machado et al. 2018, section 4.1) exploits a deterministic game and loses it under
sticky actions, as their Table 1 shows on Atari, here on a game small enough for CI.

The game: a hidden sequence of 12 actions out of 4; each step that plays the sequence's action
scores 1, any other action ends the episode. Under sticky actions (probability 0.25, Machado et
al.'s) the game plays the previous action instead of the chosen one, as the ALE does.
"""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from benchgen.agent import AgentEnvironment, TrainingContext
from benchgen.errors import UsageError
from benchgen_agents.brute.agent import BruteAgent, check_suite
from benchgen_agents.brute.config import BruteConfig

LENGTH, ACTIONS = 12, 4


class SequenceGame:
    """A one-sub-environment vector env of the game (module docstring), recording each score."""

    num_envs = 1
    single_action_space = gym.spaces.Discrete(ACTIONS)
    single_observation_space = gym.spaces.Box(0, 1, (1,), np.float32)

    def __init__(self, sticky: float, seed: int = 0):
        self.secret = np.random.default_rng(1234).integers(0, ACTIONS, LENGTH)
        self.sticky, self.rng = sticky, np.random.default_rng(seed)
        self.t, self.previous, self.score, self.scores = 0, 0, 0.0, []

    def reset(self, *, seed=None, options=None):
        self.t, self.previous, self.score = 0, 0, 0.0
        return np.zeros((1, 1), np.float32), {}

    def step(self, actions):
        action = int(actions[0])
        if self.rng.random() < self.sticky:
            action = self.previous  # sticky actions: the previous action is played again
        self.previous = action
        right = action == self.secret[self.t]
        reward = 1.0 if right else 0.0
        self.t += 1
        done = (not right) or self.t == LENGTH
        self.score += reward
        if done:
            self.scores.append(self.score)
            self.reset()
        return np.zeros((1, 1), np.float32), np.array([reward]), np.array([done]), np.array([False]), {}


class Context(TrainingContext):
    def __init__(self, env: SequenceGame, episodes: int, unit_dir: Path):
        self.env, self.episodes, self.seed, self.unit_dir = env, episodes, 0, unit_dir
        self.budget_steps = 10**9

    @property
    def steps_done(self) -> int:
        return 0

    @property
    def finished(self) -> bool:
        return len(self.env.scores) >= self.episodes

    def maybe_checkpoint(self) -> None:
        pass

    def log_scalar(self, tag, value) -> None:
        pass


def brute() -> BruteAgent:
    env = AgentEnvironment(SequenceGame.single_observation_space, SequenceGame.single_action_space, 4)
    return BruteAgent(BruteConfig(epsilon=0.05), env)


def play(sticky: float, tmp_path: Path, episodes: int = 3000) -> list[float]:
    game = SequenceGame(sticky)
    brute().learn(game, Context(game, episodes, tmp_path))
    return game.scores


def test_exploits_determinism_and_loses_it_under_sticky_actions(tmp_path):
    deterministic = np.mean(play(0.0, tmp_path)[-100:])
    sticky = np.mean(play(0.25, tmp_path)[-100:])
    assert deterministic >= 0.8 * LENGTH  # it memorized the sequence (epsilon 0.05 still trips it)
    assert sticky < 0.5 * deterministic  # the same agent collapses once the game is not deterministic
    random_play = sum((1 / ACTIONS) ** k for k in range(1, LENGTH + 1))
    assert sticky > random_play  # it still learns something: the first steps


def test_save_load_keeps_the_tree(tmp_path):
    game = SequenceGame(0.0)
    agent = brute()
    agent.learn(game, Context(game, 500, tmp_path))
    agent.save(tmp_path)
    fresh = brute()
    fresh.load(tmp_path)
    node_a, node_b = agent.root, fresh.root
    for action in game.secret[:5]:  # the learned prefix survives, estimates and all
        assert node_a.edges[int(action)][:4] == node_b.edges[int(action)][:4]
        node_a, node_b = node_a.edges[int(action)][4], node_b.edges[int(action)][4]
    assert fresh.episodes == agent.episodes
    assert fresh.act(np.zeros(3)).tolist() == agent.act(np.zeros(3)).tolist()


def test_refuses_protocols_with_evaluation_phases():
    class WithRounds:
        name = "suite"

        def evaluation_schedule(self):
            return object()

    with pytest.raises(UsageError, match="training episodes"):
        check_suite(WithRounds())
