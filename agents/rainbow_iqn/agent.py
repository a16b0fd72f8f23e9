"""Rainbow-IQN (SABER, Toromanoff et al. 2019, section 4): Rainbow with an implicit quantile head.

The parts: the head from this folder's ``network.py``, the rest from ``benchgen_agents.value_based``:

* network and loss: :class:`~benchgen_agents.rainbow_iqn.network.ImplicitQuantileHead`
  (Nature torso, cosine tau embedding, dueling noisy streams; quantile Huber loss; double-Q
  bootstrap action from the mean over K quantiles);
* learner: :class:`~benchgen_agents.value_based.agent.ValueBasedAgent` (random warm-up, noisy
  exploration, frame-once 3-step prioritized replay, one update per 4 agent steps, target copies);
* optimizer: the learner's Adam with IQN's learning rate and epsilon (the config's).

With ``actors > 0``, ``learn`` hands over to the Ape-X learner of ``apex.py`` (SABER's
distributed setting): remote actors step their own environments, this process learns.
"""

from __future__ import annotations

import gymnasium as gym

from benchgen.agent import TrainingContext
from benchgen_agents.rainbow_iqn.config import RainbowIQNConfig
from benchgen_agents.rainbow_iqn.network import ImplicitQuantileHead
from benchgen_agents.value_based.agent import ValueBasedAgent


class RainbowIQNAgent(ImplicitQuantileHead, ValueBasedAgent):
    """Single-learner Rainbow-IQN, or the Ape-X learner with ``actors > 0``."""

    name = "rainbow_iqn"
    config: RainbowIQNConfig

    def learn(self, env: gym.vector.VectorEnv, ctx: TrainingContext) -> None:
        if self.config.actors == 0:
            super().learn(env, ctx)
            return
        from benchgen_agents.rainbow_iqn.apex import ApexLearner  # imports Ray

        self._check_env(env)
        self.seed_once(ctx)
        ApexLearner(self, env, ctx).train()
