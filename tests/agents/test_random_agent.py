"""The random agent: seeding of a fresh and of a resumed unit."""

from __future__ import annotations

import gymnasium as gym

from benchgen_agents.random_agent import RandomAgent, RandomConfig
from tests.agents.agent_harness import Context, CountingEnv, environment_of
from tests.fixture_plugins.toy_suite import ToyVectorEnv


class ResetSeeds(gym.vector.VectorWrapper):
    """Remembers the seed of every reset."""

    def __init__(self, env):
        super().__init__(env)
        self.seeds = []

    def reset(self, *, seed=None, options=None):
        self.seeds.append(seed)
        return self.env.reset(seed=seed, options=options)


def _learn(steps_done: int, budget: int) -> tuple[list, list[float]]:
    env = CountingEnv(ResetSeeds(ToyVectorEnv(["count-20"] * 2, seed=0)), steps_done=steps_done)
    agent = RandomAgent(RandomConfig(), environment_of(env))
    agent.learn(env, Context(env, budget_steps=budget, seed=7))
    return env.env.seeds, env.returns


def test_fresh_unit_resets_with_its_seed_and_a_resumed_one_with_another():
    fresh_seeds, _ = _learn(steps_done=0, budget=100)
    resumed_seeds, _ = _learn(steps_done=60, budget=100)
    assert fresh_seeds == [7]
    assert len(resumed_seeds) == 1 and resumed_seeds[0] != 7  # not a replay of the first episodes


def test_learn_spends_exactly_the_budget():
    env = CountingEnv(ToyVectorEnv(["count-20"] * 2, seed=0))
    agent = RandomAgent(RandomConfig(), environment_of(env))
    agent.learn(env, Context(env, budget_steps=100, seed=7))
    assert env.steps_done == 100 and env.returns
