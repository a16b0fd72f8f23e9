"""Expected-value head and its loss: Q-learning with a target network (DQN, Mnih et al. 2015).

The network gives ``Q(x, a)`` for every action: the shared torso, then Nature DQN's head (a
512-unit hidden layer and a linear output), or dueling streams (Wang et al. 2016) and noisy
layers when the config asks for them. The n-step target is ``R + gamma^m Q_target(x', a*)`` with
``a* = argmax_a Q(x', a)`` from the target net (Nature DQN: the max of the target's values) or
the online net (double DQN, van Hasselt et al. 2016); the loss is the Huber loss of the TD
error with threshold 1, which is Nature DQN's "error clipping" to [-1, 1] (Methods, "Training
algorithm for deep Q-networks").
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from benchgen_agents.value_based.head import Head
from benchgen_agents.value_based.layers import ValueNetwork


class QNetwork(ValueNetwork):
    """Observations -> Q values, shape (B, A)."""

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.streams(self.torso(obs)).squeeze(2).float()


def td_loss(q_taken: torch.Tensor, targets: torch.Tensor, huber_threshold: float = 1.0) -> torch.Tensor:
    """Per-sample Huber loss of the TD errors ``targets - q_taken`` (quadratic within the
    threshold, linear outside: the gradient of the error is clipped to [-1, 1] at threshold 1)."""
    return F.huber_loss(q_taken, targets, reduction="none", delta=huber_threshold)


class ExpectedValueHead(Head):
    """Q-learning targets, loss and acting (see the module docstring)."""

    def build_network(self, obs_shape: tuple[int, ...], num_actions: int) -> QNetwork:
        return QNetwork(obs_shape, num_actions, self.config)

    @torch.no_grad()
    def td_targets(self, next_obs: torch.Tensor, returns: torch.Tensor, discounts: torch.Tensor) -> torch.Tensor:
        """R + gamma^m Q_target(x', a*), shape (B,); the discount is 0 after a terminal step."""
        selector_q, next_q = self._bootstrap_outputs(next_obs)
        next_action = selector_q.argmax(dim=1, keepdim=True)
        return returns + discounts * next_q.gather(1, next_action).squeeze(1)

    def sample_losses(self, batch: dict[str, np.ndarray]) -> tuple[torch.Tensor, torch.Tensor]:
        obs, actions, returns, discounts, next_obs = self._batch_tensors(batch)
        targets = self.td_targets(next_obs, returns, discounts)
        self.online.reset_noise(self.generator)
        with self._autocast():
            q = self.online(obs)
        q_taken = q.gather(1, actions.view(-1, 1)).squeeze(1)
        return td_loss(q_taken, targets), q_taken.detach()

    @torch.inference_mode()
    def greedy_actions(self, obs: np.ndarray) -> np.ndarray:
        """argmax_a Q(x, a)."""
        with self._autocast():
            q = self.online(self._tensor(obs))
        return q.argmax(dim=1).cpu().numpy()
