"""Network parts of the value-based agents: torsos, noisy linear layers, action-value streams.

* :func:`nature_cnn`: the DQN torso (Mnih et al. 2015) on uint8 frames scaled to [0, 1];
  :func:`data_efficient_cnn`, the smaller torso of Data-Efficient Rainbow (van Hasselt et al.
  2019); :func:`mlp_torso` stands in for them on flat vector observations (:class:`Torso` picks).
* :class:`NoisyLinear`: factorised Gaussian noisy layers (Fortunato et al. 2018, "NoisyNet").
* :class:`ActionValueStreams`: features -> ``outputs`` numbers per action, through one stream
  (Nature DQN: hidden layer, then one output layer) or the dueling streams of Wang et al. 2016
  (eq. 9: ``V + A - mean_a A``), with plain or noisy layers. The distributional heads use
  ``outputs`` for their atoms (C51) and the expected-value head uses 1.

:class:`ValueNetwork` puts a torso and streams together; each head's network subclasses it
and defines ``forward``. Every network here exposes ``reset_noise(generator)`` and
``set_noise(enabled)``; both do nothing for a network without noisy layers, so the agents' loop
draws noise unconditionally.
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
        if x.numel() <= 8 * self.in_features:
            # At most 8 rows (acting on a few environments): x (mu + sigma * eps_out eps_in^T)^T =
            # x mu^T + ((x * eps_in) sigma^T) * eps_out avoids materialising the noisy weight matrix,
            # which costs more than the products there. From 32 rows on (a batch of 32, IQN's 32
            # quantile samples) materialising it is faster: 4.6 ms against 5.9 ms for a training
            # pass of a 3136 -> 512 layer on one core of the development machine.
            noise = F.linear(x * self.eps_in, self.weight_sigma)
            return torch.addcmul(F.linear(x, self.weight_mu, bias), noise, self.eps_out)
        weight = torch.addcmul(self.weight_mu, self.weight_sigma, torch.outer(self.eps_out, self.eps_in))
        return F.linear(x, weight, bias)


def has_noisy_layers(network: nn.Module) -> bool:
    """Whether ``network`` draws noise in any layer (its passes then differ even at equal weights)."""
    return any(isinstance(m, NoisyLinear) for m in network.modules())


class SamePadding(nn.Module):
    """Zero padding that makes the next convolution's output ``ceil(size / stride)`` along each axis,
    split as XLA's "SAME" splits it (the smaller half first). Flax's ``nn.Conv`` pads this way by
    default, so Dopamine's JAX networks do; PyTorch's ``padding="same"`` takes stride 1 only,
    hence this module."""

    def __init__(self, kernel: int, stride: int):
        super().__init__()
        self.kernel, self.stride = kernel, stride

    def _split(self, size: int) -> tuple[int, int]:
        total = max((-(-size // self.stride) - 1) * self.stride + self.kernel - size, 0)
        return total // 2, total - total // 2

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        top, bottom = self._split(x.shape[-2])
        left, right = self._split(x.shape[-1])
        return F.pad(x, (left, right, top, bottom))


def conv_stack(in_channels: int, layers: tuple[tuple[int, int, int], ...], same_padding: bool) -> nn.Sequential:
    """ReLU convolutions of ``(filters, kernel, stride)``, unpadded or "SAME"-padded, then a flatten."""
    parts: list[nn.Module] = []
    for filters, kernel, stride in layers:
        if same_padding:
            parts.append(SamePadding(kernel, stride))
        parts += [nn.Conv2d(in_channels, filters, kernel, stride=stride), nn.ReLU()]
        in_channels = filters
    return nn.Sequential(*parts, nn.Flatten())


def nature_cnn(in_channels: int, same_padding: bool = False) -> nn.Sequential:
    """The DQN torso (Mnih et al. 2015): 32x8x8/4, 64x4x4/2, 64x3x3/1, ReLU; 3136 features on 84x84
    (7744 with "SAME" padding, as Dopamine's flax networks build it)."""
    return conv_stack(in_channels, ((32, 8, 4), (64, 4, 2), (64, 3, 1)), same_padding)


def data_efficient_cnn(in_channels: int, same_padding: bool = False) -> nn.Sequential:
    """Data-Efficient Rainbow's torso (van Hasselt, Hessel, Aslanides 2019, appendix, hyper-parameter
    table: two convolutional layers of 32 and 64 filters, 5x5, strides 5 and 5), ReLU; 576 features
    on 84x84. Dopamine's ``labs/atari_100k`` runs DER on the Nature torso instead."""
    return conv_stack(in_channels, ((32, 5, 5), (64, 5, 5)), same_padding)


#: ``torso`` setting -> the convolutional torso it builds for image observations
CNN_TORSOS = {"nature": nature_cnn, "data_efficient": data_efficient_cnn}


def mlp_torso(in_features: int, hidden: int, layers: int = 2) -> nn.Sequential:
    """``layers`` ReLU layers of ``hidden`` units for flat vector observations (benchgen's
    stand-in for the CNN; two unless told)."""
    parts: list[nn.Module] = []
    for i in range(layers):
        parts += [nn.Linear(in_features if i == 0 else hidden, hidden), nn.ReLU()]
    return nn.Sequential(*parts)


class Torso(nn.Module):
    """psi(x): a CNN of :data:`CNN_TORSOS` (``cnn``, the Nature CNN unless told) for (C, H, W)
    frames (uint8, or float on the same 0-255 scale after augmentation; scaled to [0, 1] here, on
    the device: the replay keeps them uint8), the MLP torso for flat vectors. ``features`` is its
    output width."""

    def __init__(
        self,
        obs_shape: tuple[int, ...],
        mlp_hidden_size: int,
        cnn: str = "nature",
        mlp_layers: int = 2,
        same_padding: bool = False,
    ):
        super().__init__()
        self.pixels = len(obs_shape) == 3
        if self.pixels:
            self.body = CNN_TORSOS[cnn](obs_shape[0], same_padding)
        else:
            self.body = mlp_torso(obs_shape[0], mlp_hidden_size, mlp_layers)
        with torch.no_grad():
            self.features = int(self.body(torch.zeros(1, *obs_shape)).shape[1])

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        if not self.pixels:
            return self.body(obs.float())
        # The learner's pass, whose backward follows, runs on channels-last images: oneDNN's convolutions
        # run forward and backward faster there (on one core here, the Nature torso 21 ms against 25 ms,
        # Data-Efficient Rainbow's stride-5 torso 5.8 against 8.8), while a pass without backward is
        # faster in the default layout (1.9 ms against 2.8 for the stride-5 torso). The same numbers
        # either way; only the memory order differs (bench_value_updates.py measures the update).
        layout = torch.channels_last if torch.is_grad_enabled() else torch.preserve_format
        # Scaled in place: an out-of-place ``/ 255`` allocates a second batch-sized buffer, fresh memory
        # from the system each time (page faults), 4.1 ms against 0.2 ms for a batch of 32 on one core.
        # copy=True: a float obs would otherwise come back as itself, and div_ write into it.
        x = obs.to(dtype=torch.float32, memory_format=layout, copy=True)
        return self.body(x.div_(255.0))


def linear(in_features: int, out_features: int, noisy_sigma0: float | None) -> nn.Module:
    """A noisy layer with ``noisy_sigma0`` (Rainbow), a plain one when it is None (DQN)."""
    if noisy_sigma0 is None:
        return nn.Linear(in_features, out_features)
    return NoisyLinear(in_features, out_features, noisy_sigma0)


class ActionValueStreams(nn.Module):
    """Features (B, F) -> (B, A, outputs): ``outputs`` numbers per action.

    ``dueling=False``: Nature DQN's head, a hidden ReLU layer of ``hidden`` units and an output
    layer of ``A * outputs``. ``dueling=True``: a value stream (``outputs`` numbers) and an
    advantage stream (``A * outputs``), each with its own hidden layer, combined per output as
    ``V + A - mean_a A`` (Wang et al. 2016, eq. 9; Rainbow applies it to the atoms' logits).
    Layers are noisy when ``noisy_sigma0`` is given.
    """

    def __init__(
        self,
        features: int,
        hidden: int,
        num_actions: int,
        outputs: int = 1,
        dueling: bool = True,
        noisy_sigma0: float | None = None,
        shared_hidden: bool = False,
    ):
        super().__init__()
        self.num_actions, self.outputs, self.dueling = num_actions, outputs, dueling
        self.shared_hidden = dueling and shared_hidden
        if self.shared_hidden:
            self.hidden = linear(features, hidden, noisy_sigma0)
            self.value_out = linear(hidden, outputs, noisy_sigma0)
            self.advantage_out = linear(hidden, num_actions * outputs, noisy_sigma0)
        elif dueling:
            self.value_hidden = linear(features, hidden, noisy_sigma0)
            self.value_out = linear(hidden, outputs, noisy_sigma0)
            self.advantage_hidden = linear(features, hidden, noisy_sigma0)
            self.advantage_out = linear(hidden, num_actions * outputs, noisy_sigma0)
        else:
            self.hidden = linear(features, hidden, noisy_sigma0)
            self.out = linear(hidden, num_actions * outputs, noisy_sigma0)
        self.noisy_layers = [m for m in self.children() if isinstance(m, NoisyLinear)]

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        rows = h.shape[0]
        if not self.dueling:
            return self.out(F.relu(self.hidden(h))).view(rows, self.num_actions, self.outputs)
        if self.shared_hidden:
            value_h = advantage_h = F.relu(self.hidden(h))
        else:
            value_h, advantage_h = F.relu(self.value_hidden(h)), F.relu(self.advantage_hidden(h))
        value = self.value_out(value_h).view(rows, 1, self.outputs)
        advantage = self.advantage_out(advantage_h).view(rows, self.num_actions, self.outputs)
        return value + advantage - advantage.mean(dim=1, keepdim=True)

    def reset_noise(self, generator: torch.Generator) -> None:
        """Fresh noise in every noisy layer (nothing to do without them)."""
        for layer in self.noisy_layers:
            layer.reset_noise(generator)

    def set_noise(self, enabled: bool) -> None:
        """Noise on (training, exploration) or off (greedy evaluation: the means only)."""
        for layer in self.noisy_layers:
            layer.noise_enabled = enabled


class ValueNetwork(nn.Module):
    """The torso and the action-value streams of a head's network (``outputs`` numbers per
    action; dueling, width and noise from the config's ``dueling``, ``hidden_size`` and
    ``noisy_sigma0``, plain layers for a config without the last; an MLP torso of ``mlp_layers``,
    two for a config without it; padded and shared as ``network_style`` says: see
    :func:`initialize`). Subclasses define ``forward``."""

    def __init__(self, obs_shape: tuple[int, ...], num_actions: int, config, outputs: int = 1):
        super().__init__()
        self.num_actions = num_actions
        dopamine_style = getattr(config, "network_style", "pytorch") == "dopamine"
        self.torso = Torso(
            obs_shape,
            config.mlp_hidden_size,
            config.torso,
            getattr(config, "mlp_layers", 2),
            same_padding=dopamine_style,
        )
        self.streams = ActionValueStreams(
            self.torso.features,
            config.hidden_size,
            num_actions,
            outputs=outputs,
            dueling=config.dueling,
            noisy_sigma0=getattr(config, "noisy_sigma0", None),
            shared_hidden=dopamine_style,
        )

    def reset_noise(self, generator: torch.Generator) -> None:
        self.streams.reset_noise(generator)

    def set_noise(self, enabled: bool) -> None:
        self.streams.set_noise(enabled)


def initialize(network: nn.Module, style: str) -> None:
    """Start ``network``'s weights as ``style`` (the config's ``network_style``) says.
    "dopamine": Glorot-uniform weights and zero biases in every plain convolution and linear layer,
    as Dopamine's flax networks start them (``kernel_init=nn.initializers.xavier_uniform()``, flax's
    default zero bias); noisy layers keep NoisyNet's initialization, as Dopamine's ``NoisyNetwork``.
    "pytorch": PyTorch's default initialization, left as built."""
    if style != "dopamine":
        return
    for module in network.modules():
        if isinstance(module, (nn.Conv2d, nn.Linear)):
            nn.init.xavier_uniform_(module.weight)
            nn.init.zeros_(module.bias)
