"""Implicit quantile head and its loss (IQN, Dabney et al. 2018; Rainbow-IQN, SABER section 4).

IQN (section 3.1) computes the tau-quantile of the return of every action as
``Z_tau(x, .) = f(psi(x) * phi(tau))`` (elementwise product). Here:

* psi: the shared :class:`~benchgen_agents.value_based.layers.Torso` (Nature CNN, or an MLP for vectors);
* phi (IQN eq. 4, with i = 1..n as in SABER's code; the i = 0 term is a constant the bias
  absorbs): ``phi_j(tau) = ReLU(sum_i cos(pi * i * tau) w_ij + b_j)``;
* f: dueling noisy streams (:class:`~benchgen_agents.value_based.layers.ActionValueStreams`), one output per action.

The loss is the quantile Huber loss (IQN eq. 3 with QR-DQN's eq. 10); Q is the mean over K
sampled quantiles, for acting and for the double-Q bootstrap action.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from benchgen_agents.value_based.head import Head
from benchgen_agents.value_based.layers import ValueNetwork


class IQNNetwork(ValueNetwork):
    """Maps (observations, taus) to quantile values ``Z_tau(x, a)`` of shape (B, T, A)."""

    def __init__(self, obs_shape: tuple[int, ...], num_actions: int, config):
        super().__init__(obs_shape, num_actions, config)
        n = config.cosine_embedding_dim
        self.register_buffer("cos_freq", torch.arange(1, n + 1, dtype=torch.float32) * math.pi)
        self.tau_embedding = nn.Linear(n, self.torso.features)

    def features(self, obs: torch.Tensor) -> torch.Tensor:
        """psi(x)."""
        return self.torso(obs)

    def quantiles(self, features: torch.Tensor, taus: torch.Tensor) -> torch.Tensor:
        """f(psi(x) * phi(tau)) for features (B, F) and taus (B, T) -> (B, T, A)."""
        batch, num_taus = taus.shape
        phi = F.relu(self.tau_embedding(torch.cos(taus.unsqueeze(-1) * self.cos_freq)))  # IQN eq. 4
        h = (features.unsqueeze(1) * phi).reshape(batch * num_taus, -1)  # psi(x) (.) phi(tau)
        q = self.streams(h)  # (B * T, A, 1)
        return q.view(batch, num_taus, self.num_actions).float()  # float32 even under bfloat16 autocast

    def forward(self, obs: torch.Tensor, taus: torch.Tensor) -> torch.Tensor:
        return self.quantiles(self.features(obs), taus)


def quantile_huber_loss(
    quantiles: torch.Tensor, taus: torch.Tensor, targets: torch.Tensor, kappa: float
) -> torch.Tensor:
    """Per-sample IQN loss.

    ``quantiles`` (B, N): Z_{tau_i}(x, a) of the online net at the sampled ``taus`` (B, N);
    ``targets`` (B, N'): r + gamma^m Z_{tau'_j}(x', a*). With the TD errors
    ``delta_ij = target_j - quantile_i`` (IQN eq. 3 and QR-DQN eq. 10)::

        rho^kappa_tau(delta) = |tau - 1{delta < 0}| * L_kappa(delta) / kappa
        L_kappa(delta) = delta^2 / 2 if |delta| <= kappa else kappa (|delta| - kappa / 2)
        loss = sum_i (1/N') sum_j rho^kappa_{tau_i}(delta_ij)   (summed over N, averaged over N')
    """
    delta = targets.unsqueeze(1) - quantiles.unsqueeze(2)  # (B, N, N')
    abs_delta = delta.abs()
    huber = torch.where(abs_delta <= kappa, 0.5 * delta.pow(2), kappa * (abs_delta - 0.5 * kappa))
    weight = (taus.unsqueeze(2) - (delta.detach() < 0).float()).abs()  # |tau_i - 1{delta_ij < 0}|
    return (weight * huber / kappa).sum(dim=1).mean(dim=1)


class ImplicitQuantileHead(Head):
    """IQN targets, loss and acting (see the module docstring)."""

    def build_network(self, obs_shape: tuple[int, ...], num_actions: int) -> IQNNetwork:
        return IQNNetwork(obs_shape, num_actions, self.config)

    def _taus(self, batch: int, count: int) -> torch.Tensor:
        """tau ~ U(0, 1), one set per sample (IQN section 3)."""
        return torch.rand(batch, count, generator=self.generator, device=self.device)

    @torch.no_grad()
    def target_quantiles(self, next_obs: torch.Tensor, returns: torch.Tensor, discounts: torch.Tensor) -> torch.Tensor:
        """n-step distributional targets r + gamma^m Z_{tau'_j}(x', a*), shape (B, N')."""
        cfg = self.config
        B, N_, K = len(next_obs), cfg.num_tau_prime_samples, cfg.num_quantile_samples
        # Bootstrap action a* = argmax_a (1/K) sum_k Z_{tau_k}(x', a), from the online net with
        # double Q (Rainbow), else from the target net (plain IQN).
        selector = self._bootstrap_selector()
        selector.reset_noise(self.generator)
        with self._autocast():
            next_action = selector(next_obs, self._taus(B, K)).mean(dim=1).argmax(dim=1)
        # Target quantiles from the target network at N' fresh fractions tau'_j.
        self.target.reset_noise(self.generator)
        with self._autocast():
            next_z = self.target(next_obs, self._taus(B, N_))  # (B, N', A)
        next_z = next_z.gather(2, next_action.view(B, 1, 1).expand(B, N_, 1)).squeeze(2)
        # Rainbow eq. 2 with IQN's samples: T Z_j = sum_{k<m} gamma^k r_{t+k} + gamma^m Z_{tau'_j}(x_{t+m}, a*),
        # the discount being 0 after a terminal step (the replay computes returns and discounts).
        return returns.unsqueeze(1) + discounts.unsqueeze(1) * next_z

    def sample_losses(self, batch: dict[str, np.ndarray]) -> tuple[torch.Tensor, torch.Tensor]:
        obs, actions, returns, discounts, next_obs = self._batch_tensors(batch)
        B, N = len(actions), self.config.num_tau_samples
        targets = self.target_quantiles(next_obs, returns, discounts)  # (B, N')
        # Online quantiles Z_{tau_i}(x, a) at N fresh fractions, with fresh noise.
        self.online.reset_noise(self.generator)
        taus = self._taus(B, N)
        with self._autocast():
            z = self.online(obs, taus)
        z = z.gather(2, actions.view(B, 1, 1).expand(B, N, 1)).squeeze(2)  # (B, N)
        return quantile_huber_loss(z, taus, targets, self.config.kappa), z.mean(dim=1)

    @torch.inference_mode()
    def greedy_actions(self, obs: np.ndarray) -> np.ndarray:
        """argmax_a (1/K) sum_k Z_{tau_k}(x, a)."""
        taus = self._taus(len(obs), self.config.num_quantile_samples)
        with self._autocast():
            q = self.online(self._tensor(obs), taus).mean(dim=1)
        return q.argmax(dim=1).cpu().numpy()
