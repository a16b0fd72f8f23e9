"""The IMPALA CNN (Espeholt et al. 2018, figure 3, "large architecture") as a stable-baselines3
features extractor: the network of the Procgen paper's PPO (Cobbe et al. 2020, section 2.3 and
appendix B: depths 16, 32, 32 and a 256-unit layer).

Built as openai's ``train-procgen`` builds it (``baselines.common.models.build_impala_cnn``):
pixels scaled to [0, 1]; for each depth a 3x3 convolution, a 3x3 max-pool of stride 2 ('same'
padding) and two residual blocks (ReLU, 3x3 convolution, ReLU, 3x3 convolution, plus the input);
then ReLU, flatten and a fully connected layer with ReLU. On Procgen's 64x64 frames the pools
leave 8x8x32 = 2,048 features before the dense layer.

stable-baselines3 ships only the Nature CNN for images (``NatureCNN``); this is the smallest piece
that gives its PPO the paper's network.
"""

from __future__ import annotations

import gymnasium as gym
import torch
from stable_baselines3.common.policies import ActorCriticCnnPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

#: channel depths of the three stages (Espeholt et al. 2018; Cobbe et al. 2020)
DEPTHS = (16, 32, 32)


class ResidualBlock(nn.Module):
    """ReLU, conv, ReLU, conv, plus the input (the block of ``build_impala_cnn``)."""

    def __init__(self, channels: int):
        super().__init__()
        self.conv0 = nn.Conv2d(channels, channels, kernel_size=3, padding=1)
        self.conv1 = nn.Conv2d(channels, channels, kernel_size=3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.conv0(torch.relu(x))
        out = self.conv1(torch.relu(out))
        return out + x


class ConvSequence(nn.Module):
    """A 3x3 convolution to ``depth`` channels, a 3x3/2 max-pool, two residual blocks."""

    def __init__(self, in_channels: int, depth: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, depth, kernel_size=3, padding=1)
        # TensorFlow's 'same' pooling pads only where needed (at the end of a 64-pixel side); padding 1 with a
        # 3x3 window and stride 2 gives the same output size (ceil(n / 2)), but its windows start one pixel
        # earlier, so the maxima are taken over windows shifted by one pixel from baselines' (not expected
        # to change learning: docs/measurements/procgen-diagnosis.md).
        self.pool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.res0 = ResidualBlock(depth)
        self.res1 = ResidualBlock(depth)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.res1(self.res0(self.pool(self.conv(x))))


class ImpalaCNN(BaseFeaturesExtractor):
    """The IMPALA CNN over channel-first ``uint8`` images (SB3 transposes channel-last ones and
    divides by 255 before the extractor, as ``normalize_images`` says); see the module docstring."""

    #: on the CPU, run the network on channels-last (NHWC) tensors: a training pass of the IMPALA CNN
    #: (forward and backward, 256 samples, one thread) about 1.8x faster in bfloat16 and in float32 on
    #: the development machine (benchmarks/bench_procgen_ppo.py sets it False for its "before" contender)
    channels_last = True

    def __init__(
        self,
        observation_space: gym.spaces.Box,
        features_dim: int = 256,
        depths: tuple[int, ...] = DEPTHS,
        precision: str = "float32",
    ):
        super().__init__(observation_space, features_dim)
        #: "bfloat16": the convolutions and the dense layer under torch's autocast; the features come out float32
        self.precision = precision
        channels, height, width = observation_space.shape
        stages = []
        for depth in depths:
            stages.append(ConvSequence(channels, depth))
            channels, height, width = depth, (height + 1) // 2, (width + 1) // 2
        self.stages = nn.Sequential(*stages)
        self.dense = nn.Linear(channels * height * width, features_dim)

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        if self.channels_last and observations.device.type == "cpu":
            # oneDNN's convolutions then run channels-last throughout and the max-pools take torch's
            # vectorized channels-last kernel (its NCHW one cost a quarter of a training pass): the
            # same values up to the convolutions' order of float sums; flatten keeps (C, H, W) order
            observations = observations.contiguous(memory_format=torch.channels_last)
        with torch.autocast(observations.device.type, dtype=torch.bfloat16, enabled=self.precision == "bfloat16"):
            x = self.stages(observations)
            features = torch.relu(self.dense(torch.relu(torch.flatten(x, start_dim=1))))
        return features.float()


class ImpalaCnnActorCriticPolicy(ActorCriticCnnPolicy):
    """SB3's CNN actor-critic with the extractor's weights started as ``extractor_init`` says; the
    two heads keep SB3's orthogonal scales (0.01 for the policy's logits, 1 for the value), which
    are baselines' too.

    Why a subclass: SB3 initializes the extractor inside ``_build``, after the extractor is built,
    so the extractor cannot choose its own start; overriding ``_build`` re-draws it before the
    optimizer ever steps (its Adam state is still empty)."""

    def __init__(self, *args, extractor_init: str = "orthogonal", **kwargs):
        self.extractor_init = extractor_init
        super().__init__(*args, **kwargs)

    def _build(self, lr_schedule) -> None:
        super()._build(lr_schedule)
        if self.extractor_init == "glorot":
            for module in self.features_extractor.modules():
                if isinstance(module, (torch.nn.Conv2d, torch.nn.Linear)):
                    torch.nn.init.xavier_uniform_(module.weight)
                    torch.nn.init.zeros_(module.bias)
