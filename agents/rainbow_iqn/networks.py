"""Rainbow-IQN's network: torso psi(x), quantile embedding phi(tau), dueling noisy head f.

IQN (Dabney et al. 2018, section 3.1) computes the tau-quantile of the return of every action
as ``Z_tau(x, .) = f(psi(x) * phi(tau))`` (elementwise product). Here:

* psi: the Nature-DQN CNN (Mnih et al. 2015) on uint8 frames scaled to [0, 1], or a two-layer
  MLP for flat vector observations;
* phi (IQN eq. 4, with i = 1..n as in SABER's code; the i = 0 term is a constant the bias
  absorbs): ``phi_j(tau) = ReLU(sum_i cos(pi * i * tau) w_ij + b_j)``;
* f: Rainbow's dueling streams (Wang et al. 2016 eq. 9) built from factorised noisy linear
  layers (Fortunato et al. 2018), ``Q = V + A - mean_a A``.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


class NoisyLinear(nn.Module):
    """Linear layer with factorised Gaussian parameter noise (NoisyNet section 3(b)).

    ``w = mu_w + sigma_w * f(eps_out) f(eps_in)^T`` and ``b = mu_b + sigma_b * f(eps_out)`` with
    ``f(x) = sgn(x) sqrt(|x|)``. With noise disabled (greedy evaluation) only the means act.
    """

    def __init__(self, in_features: int, out_features: int, sigma0: float):
        super().__init__()
        self.in_features, self.out_features, self.sigma0 = in_features, out_features, sigma0
        self.weight_mu = nn.Parameter(torch.empty(out_features, in_features))
        self.weight_sigma = nn.Parameter(torch.empty(out_features, in_features))
        self.bias_mu = nn.Parameter(torch.empty(out_features))
        self.bias_sigma = nn.Parameter(torch.empty(out_features))
        self.register_buffer("eps_in", torch.zeros(in_features))
        self.register_buffer("eps_out", torch.zeros(out_features))
        self.noise_enabled = True
        self.reset_parameters()

    def reset_parameters(self) -> None:
        # NoisyNet section 3.2: mu ~ U[-1/sqrt(p), 1/sqrt(p)], sigma = sigma0 / sqrt(p), p = fan-in.
        bound = 1.0 / math.sqrt(self.in_features)
        nn.init.uniform_(self.weight_mu, -bound, bound)
        nn.init.uniform_(self.bias_mu, -bound, bound)
        nn.init.constant_(self.weight_sigma, self.sigma0 / math.sqrt(self.in_features))
        nn.init.constant_(self.bias_sigma, self.sigma0 / math.sqrt(self.in_features))

    @torch.no_grad()
    def reset_noise(self, generator: torch.Generator) -> None:
        """Draw fresh factorised noise: p + q Gaussian samples instead of p * q."""
        for eps in (self.eps_in, self.eps_out):
            x = torch.randn(eps.shape, generator=generator, device=eps.device)
            eps.copy_(x.sign() * x.abs().sqrt())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.noise_enabled:
            return F.linear(x, self.weight_mu, self.bias_mu)
        bias = torch.addcmul(self.bias_mu, self.bias_sigma, self.eps_out)
        if x.numel() * 16 <= self.in_features**2:
            # Few rows (acting): x (mu + sigma * eps_out eps_in^T)^T = x mu^T + ((x * eps_in) sigma^T) * eps_out
            # avoids materialising the noisy weight matrix, which costs more than the products.
            noise = F.linear(x * self.eps_in, self.weight_sigma)
            return torch.addcmul(F.linear(x, self.weight_mu, bias), noise, self.eps_out)
        weight = torch.addcmul(self.weight_mu, self.weight_sigma, torch.outer(self.eps_out, self.eps_in))
        return F.linear(x, weight, bias)


def nature_cnn(in_channels: int) -> nn.Sequential:
    """The DQN torso (Mnih et al. 2015): 32x8x8/4, 64x4x4/2, 64x3x3/1, ReLU; 3136 features on 84x84."""
    return nn.Sequential(
        nn.Conv2d(in_channels, 32, 8, stride=4),
        nn.ReLU(),
        nn.Conv2d(32, 64, 4, stride=2),
        nn.ReLU(),
        nn.Conv2d(64, 64, 3, stride=1),
        nn.ReLU(),
        nn.Flatten(),
    )


def mlp_torso(in_features: int, hidden: int) -> nn.Sequential:
    """Two ReLU layers for flat vector observations (benchgen's stand-in for the CNN)."""
    return nn.Sequential(nn.Linear(in_features, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())


class IQNNetwork(nn.Module):
    """Maps (observations, taus) to quantile values ``Z_tau(x, a)`` of shape (B, T, A)."""

    def __init__(self, obs_shape: tuple[int, ...], num_actions: int, config):
        super().__init__()
        self.pixels = len(obs_shape) == 3
        self.num_actions = num_actions
        self.torso = nature_cnn(obs_shape[0]) if self.pixels else mlp_torso(obs_shape[0], config.mlp_hidden_size)
        with torch.no_grad():
            features = self.torso(torch.zeros(1, *obs_shape)).shape[1]
        n = config.cosine_embedding_dim
        self.register_buffer("cos_freq", torch.arange(1, n + 1, dtype=torch.float32) * math.pi)
        self.tau_embedding = nn.Linear(n, features)
        sigma0, hidden = config.noisy_sigma0, config.hidden_size
        self.value_hidden = NoisyLinear(features, hidden, sigma0)
        self.value_out = NoisyLinear(hidden, 1, sigma0)
        self.advantage_hidden = NoisyLinear(features, hidden, sigma0)
        self.advantage_out = NoisyLinear(hidden, num_actions, sigma0)
        self.noisy_layers = [self.value_hidden, self.value_out, self.advantage_hidden, self.advantage_out]

    def features(self, obs: torch.Tensor) -> torch.Tensor:
        """psi(x): uint8 frames are scaled to [0, 1] on the device (the replay keeps them uint8)."""
        x = obs.float() / 255.0 if self.pixels else obs.float()
        return self.torso(x)

    def quantiles(self, features: torch.Tensor, taus: torch.Tensor) -> torch.Tensor:
        """f(psi(x) * phi(tau)) for features (B, F) and taus (B, T) -> (B, T, A)."""
        batch, num_taus = taus.shape
        phi = F.relu(self.tau_embedding(torch.cos(taus.unsqueeze(-1) * self.cos_freq)))  # IQN eq. 4
        h = (features.unsqueeze(1) * phi).reshape(batch * num_taus, -1)  # psi(x) (.) phi(tau)
        value = self.value_out(F.relu(self.value_hidden(h)))
        advantage = self.advantage_out(F.relu(self.advantage_hidden(h)))
        q = value + advantage - advantage.mean(dim=1, keepdim=True)  # dueling, Wang et al. eq. 9
        return q.view(batch, num_taus, self.num_actions).float()  # float32 even under bfloat16 autocast

    def forward(self, obs: torch.Tensor, taus: torch.Tensor) -> torch.Tensor:
        return self.quantiles(self.features(obs), taus)

    def reset_noise(self, generator: torch.Generator) -> None:
        for layer in self.noisy_layers:
            layer.reset_noise(generator)

    def set_noise(self, enabled: bool) -> None:
        """Noise on (training, exploration) or off (greedy evaluation: the means only)."""
        for layer in self.noisy_layers:
            layer.noise_enabled = enabled
