"""Rainbow (Hessel et al. 2018): C51 head, dueling noisy nets, double Q, 3-step prioritized replay.

The parts: the head from this folder's ``network.py``, the rest from ``benchgen_agents.value_based``:

* network and loss: :class:`~benchgen_agents.rainbow.network.CategoricalHead` (Nature
  torso, dueling noisy streams over 51 atoms; C51 projection and cross-entropy, which is also
  the priority; double-Q bootstrap action from the online net's mean);
* learner: :class:`~benchgen_agents.value_based.agent.ValueBasedAgent` (random warm-up, noisy
  exploration, frame-once n-step prioritized replay, one update per 4 agent steps, target copies);
* optimizer: the learner's Adam with Rainbow's learning rate and epsilon (the config's);
* with ``workers > 0``: Gotta Learn Fast's Algorithm 2, data-parallel workers
  (:mod:`benchgen_agents.rainbow.data_parallel`).
"""

from __future__ import annotations

from benchgen_agents.rainbow.config import RainbowConfig
from benchgen_agents.rainbow.network import CategoricalHead
from benchgen_agents.value_based.agent import ValueBasedAgent


class RainbowAgent(CategoricalHead, ValueBasedAgent):
    """Rainbow; see the module docstring."""

    name = "rainbow"
    config: RainbowConfig

    def learn(self, env, ctx) -> None:
        """The single agent, or with ``workers`` (not in a fine-tuning unit) Algorithm 2's
        data-parallel workers (:mod:`benchgen_agents.rainbow.data_parallel`), each building its
        own environments (``env`` is then not stepped)."""
        if self.config.workers and not ctx.fine_tuning and not ctx.finished:
            from benchgen_agents.rainbow.data_parallel import learn_data_parallel

            learn_data_parallel(self, ctx)
            return
        super().learn(env, ctx)
