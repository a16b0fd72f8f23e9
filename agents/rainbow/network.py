"""Categorical (C51) head and its loss (Bellemare, Dabney, Munos 2017; Rainbow, Hessel et al. 2018).

The return distribution of each action is a categorical over ``num_atoms`` fixed atoms
``z_i = v_min + i * (v_max - v_min) / (num_atoms - 1)``; the network gives per-action logits
(dueling over the logits, Rainbow section "Dueling networks") and ``p_i(x, a)`` is their
softmax; ``Q(x, a) = sum_i z_i p_i(x, a)``.

Target (C51 Algorithm 1 with Rainbow's n-step return, Rainbow eq. 2): the bootstrap action a*
maximises Q at the n-th next state (online net with double Q, Rainbow), the target network's
distribution for a* is shifted to ``R + gamma^m z`` and projected back onto the atoms
(:func:`project_distribution`); the loss is the cross-entropy ``-sum_i m_i log p_i(x, a)``
(the KL divergence up to a constant), which is also the priority (Rainbow eq. 3).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from benchgen_agents.value_based.head import Head
from benchgen_agents.value_based.layers import ValueNetwork


def atoms(v_min: float, v_max: float, num_atoms: int, device=None) -> torch.Tensor:
    """The support z_0 .. z_{N-1}, evenly spaced from v_min to v_max."""
    return torch.linspace(v_min, v_max, num_atoms, device=device)


def project_distribution(
    probs: torch.Tensor, returns: torch.Tensor, discounts: torch.Tensor, support: torch.Tensor
) -> torch.Tensor:
    """Project the distribution ``probs`` (B, N) on ``R + gamma^m z`` onto the support (C51 Algorithm 1).

    Each shifted atom ``Tz_j = clip(R + gamma^m z_j, v_min, v_max)`` (discount 0 after a terminal
    step: all mass on R) gives its probability to its two neighbouring atoms in proportion to
    closeness. Written as ``m_i = sum_j clamp(1 - |Tz_j - z_i| / dz, 0, 1) p_j`` (as Dopamine
    does), which is exact when Tz_j falls on an atom, where the floor/ceil form of the
    algorithm needs a special case. B x N x N products: 51 x 51 per sample, negligible next to
    the network.
    """
    v_min, v_max = support[0], support[-1]
    delta_z = (v_max - v_min) / (len(support) - 1)
    shifted = (returns.unsqueeze(1) + discounts.unsqueeze(1) * support.unsqueeze(0)).clamp(v_min, v_max)  # (B, N)
    closeness = (1 - (shifted.unsqueeze(1) - support.view(1, -1, 1)).abs() / delta_z).clamp(min=0)  # (B, i, j)
    return (closeness * probs.unsqueeze(1)).sum(dim=2)


class CategoricalNetwork(ValueNetwork):
    """Observations -> per-action log-probabilities over the atoms, shape (B, A, N)."""

    def __init__(self, obs_shape: tuple[int, ...], num_actions: int, config):
        super().__init__(obs_shape, num_actions, config, outputs=config.num_atoms)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return F.log_softmax(self.streams(self.torso(obs)).float(), dim=2)


class CategoricalHead(Head):
    """C51 targets, loss and acting (see the module docstring). Needs ``config.v_min``,
    ``v_max`` and ``num_atoms``."""

    def build_network(self, obs_shape: tuple[int, ...], num_actions: int) -> CategoricalNetwork:
        return CategoricalNetwork(obs_shape, num_actions, self.config)

    @property
    def support(self) -> torch.Tensor:
        cached = getattr(self, "_support", None)
        if cached is None or cached.device != self.device:
            cfg = self.config
            cached = self._support = atoms(cfg.v_min, cfg.v_max, cfg.num_atoms, self.device)
        return cached

    @torch.no_grad()
    def target_distribution(self, next_obs: torch.Tensor, returns: torch.Tensor, discounts: torch.Tensor):
        """The projected target distribution m (B, N) for the n-step transitions."""
        B = len(next_obs)
        selector_log_p, next_log_p = self._bootstrap_outputs(next_obs)
        next_action = (selector_log_p.exp() * self.support).sum(dim=2).argmax(dim=1)  # a* = argmax_a Q(x', a)
        next_p = next_log_p[torch.arange(B, device=self.device), next_action].exp()  # (B, N)
        return project_distribution(next_p, returns, discounts, self.support)

    def sample_losses(self, batch: dict[str, np.ndarray]) -> tuple[torch.Tensor, torch.Tensor]:
        obs, actions, returns, discounts, next_obs = self._batch_tensors(batch)
        target = self.target_distribution(next_obs, returns, discounts)  # (B, N)
        self.online.reset_noise(self.generator)
        with self._autocast():
            log_p = self.online(obs)
        log_p = log_p[torch.arange(len(actions), device=self.device), actions]  # (B, N)
        loss = -(target * log_p).sum(dim=1)  # cross-entropy; Rainbow's priority (eq. 3)
        q_taken = (log_p.detach().exp() * self.support).sum(dim=1)
        return loss, q_taken

    @torch.inference_mode()
    def greedy_actions(self, obs: np.ndarray) -> np.ndarray:
        """argmax_a sum_i z_i p_i(x, a)."""
        with self._autocast():
            q = (self.online(self._tensor(obs)).exp() * self.support).sum(dim=2)
        return q.argmax(dim=1).cpu().numpy()
