"""DQN (Mnih et al. 2015, "Human-level control through deep reinforcement learning").

The parts: the head from this folder's ``network.py``, the rest from ``benchgen_agents.value_based``:

* network and loss: :class:`~benchgen_agents.dqn.network.ExpectedValueHead`
  (Nature torso, 512-unit hidden layer, one Q per action; Huber loss = the paper's error
  clipping; bootstrap from the target net's max);
* learner: :class:`~benchgen_agents.value_based.agent.ValueBasedAgent` with 1-step returns and
  uniform replay (priority exponent 0), random actions during the replay start, one update
  per 4 agent steps, a target copy every 10K agent steps;
* exploration: epsilon-greedy, epsilon annealed linearly from 1 to 0.1 over the first million
  agent steps after the replay start (as DeepMind's released code and Dopamine count them);
* optimizer: centered RMSProp with the paper's momentum and minimum squared gradient, or for
  DrQ(epsilon) Adam (:mod:`benchgen_agents.common.optimizers`).
"""

from __future__ import annotations

import numpy as np
import torch

from benchgen_agents.common.optimizers import adam, centered_rmsprop
from benchgen_agents.dqn.config import DQNConfig
from benchgen_agents.dqn.network import ExpectedValueHead
from benchgen_agents.value_based.agent import ValueBasedAgent


class DQNAgent(ExpectedValueHead, ValueBasedAgent):
    """DQN; see the module docstring."""

    name = "dqn"
    config: DQNConfig

    def make_optimizer(self, parameters) -> torch.optim.Optimizer:
        if self.config.optimizer == "adam":  # DrQ (Kostrikov et al. 2021): Adam with DER's lr and epsilon
            return adam(parameters, self.config)
        return centered_rmsprop(parameters, self.config)

    def epsilon(self) -> float:
        """Linear annealing from ``epsilon_start`` to ``epsilon_end`` over
        ``epsilon_decay_steps`` agent steps, starting when learning starts; counted in the
        agent's own steps (saved in checkpoints), so a resumed run continues the schedule and an
        agent fine-tuned from a trained one keeps ``epsilon_end``."""
        cfg = self.config
        progress = (self.counters["agent_steps"] - cfg.learning_starts_steps) / cfg.epsilon_decay_steps
        return cfg.epsilon_end + (cfg.epsilon_start - cfg.epsilon_end) * float(np.clip(1.0 - progress, 0.0, 1.0))

    def explore_actions(self, obs: np.ndarray) -> np.ndarray:
        """Epsilon-greedy: each sub-environment's action is uniform over all actions with
        probability epsilon, greedy otherwise (Nature DQN)."""
        actions = self.greedy_actions(obs)
        explore = self.np_rng.random(len(actions)) < self.epsilon()
        actions[explore] = self.random_actions(int(explore.sum()))
        return actions
