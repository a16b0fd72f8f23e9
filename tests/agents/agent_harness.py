"""Drive an agent's ``learn`` in-process without the runner: a step-counting env wrapper and a
:class:`~benchgen.agent.TrainingContext` that records what the agent asked of it."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np

from benchgen.agent import AgentEnvironment, TrainingContext


def environment_of(env: gym.vector.VectorEnv) -> AgentEnvironment:
    """The :class:`~benchgen.agent.AgentEnvironment` of ``env``'s spaces (no suite facts)."""
    return AgentEnvironment(env.single_observation_space, env.single_action_space)


class CountingEnv(gym.vector.VectorWrapper):
    """Counts agent steps (summed over sub-environments) and finished episodes' returns."""

    def __init__(self, env: gym.vector.VectorEnv, steps_done: int = 0):
        super().__init__(env)
        self.steps_done = steps_done
        self._running = np.zeros(env.num_envs)
        self.returns: list[float] = []

    def step(self, actions):
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        self.steps_done += self.num_envs
        self._running += rewards
        for i in np.flatnonzero(np.asarray(terminated) | np.asarray(truncated)):
            self.returns.append(float(self._running[i]))
            self._running[i] = 0
        return obs, rewards, terminated, truncated, info


class Context(TrainingContext):
    """The runner's side of ``learn``: budget, seed, checkpoint calls and logged scalars."""

    def __init__(self, env: CountingEnv, budget_steps: int, seed: int = 0, unit_dir: Path | None = None, save=None):
        self.env = env
        self.budget_steps = budget_steps
        self.seed = seed
        self.unit_dir = unit_dir or Path(".")
        self.checkpoint_calls = 0
        self.steps_at_checkpoint_calls: list[int] = []
        self.scalars: dict[str, list[float]] = {}
        self._save = save

    @property
    def steps_done(self) -> int:
        return self.env.steps_done

    def maybe_checkpoint(self) -> None:
        self.checkpoint_calls += 1
        self.steps_at_checkpoint_calls.append(self.steps_done)
        if self._save is not None:
            self._save(self)

    def log_scalar(self, tag: str, value: float) -> None:
        self.scalars.setdefault(tag, []).append(value)


def fresh_ppo_state(config, environment: AgentEnvironment, seed: int = 0) -> dict:
    """A data-parallel PPO group's starting state: a new policy drawn from ``seed`` and its
    optimizer, as a unit hands it to its workers."""
    from stable_baselines3.common.utils import set_random_seed

    from benchgen_agents.data_parallel.engine import cpu_copy
    from benchgen_agents.ppo.agent import PPOAgent

    set_random_seed(seed)
    policy = PPOAgent(config, environment)._new_policy()
    return {
        "policy": cpu_copy(policy.state_dict()),
        "optimizer": cpu_copy(policy.optimizer.state_dict()),
        "n_updates": 0,
    }
