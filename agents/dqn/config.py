"""DQN settings (Mnih et al. 2015, "Human-level control through deep reinforcement learning",
Extended Data Table 1 and Methods), every field with its source.

The table counts "frames" that are agent steps (each one action repeated over 4 emulator
frames), as DeepMind's released code and Dopamine's ``dqn_nature.gin`` read it: replay start
50K, final exploration 1M and target update 10K agent steps. benchgen states frame-counted
settings in emulator frames (``*_frames``; see
:class:`~benchgen_agents.value_based.config.ValueBasedConfig`), so they appear here times 4.

Variants (``--set variant=NAME``, :data:`VARIANTS`): ``nature``, the defaults below, and
``drq_eps``, DrQ(epsilon): DrQ (Kostrikov, Yarats, Fergus 2021, "Image Augmentation Is All You
Need", its Atari 100K agent, an "Efficient DQN") with the exploration settings of Agarwal et
al. 2021 ("Deep RL at the Edge of the Statistical Precipice", section 5 and appendix), as
Dopamine's ``labs/atari_100k/configs/DrQ_eps.gin`` runs it. A variant only supplies defaults:
settings given with ``--set``/``--config`` override its values.

This module imports neither torch nor numpy, so ``benchgen list`` stays fast.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from benchgen.errors import did_you_mean
from benchgen_agents.value_based.config import ValueBasedConfig, check_int, check_number

#: DrQ(epsilon) on Atari 100K. DrQ's own values (Kostrikov et al. 2021, appendix, Atari 100K
#: hyper-parameters): random-shift augmentation; double and dueling Q-learning without noisy
#: nets, distributional head or prioritized replay; 10-step returns; a learner update at every
#: agent step from 1,600 steps of replay on; a target copy at every update; Adam, lr 1e-4 and
#: eps 1.5e-4 (DER's); epsilon annealed over 5,000 steps. Agarwal et al. 2021's epsilon settings:
#: 0.01 when training (0.001 when evaluating is the ``atari100k`` protocol's). Replay: the whole
#: 100K-step run (DrQ: 100K). Network: the Nature CNN with 512 hidden units, as Dopamine's
#: ``Atari100kRainbowAgent`` (``FullRainbowNetwork``), laid out and started as PyTorch does
#: (``network_style=pytorch``); Dopamine's flax network pads its convolutions ("SAME"), shares one
#: hidden layer between the dueling streams and starts Glorot-uniform with zero biases, which
#: ``network_style=dopamine`` reproduces. Kept PyTorch's: on Freeway, whose outcome is all or
#: nothing, both got the chicken across in about half of their short runs (PyTorch's 3 of 8 seeds,
#: Dopamine's 3 of 6; docs/measurements/atari100k.md), and PyTorch's layout is about a quarter faster here.
#: Frame-counted values are agent steps x 4.
DRQ_EPS: dict[str, object] = {
    "augmentation": "shift_intensity",
    "n_step": 10,
    "double_q": True,
    "dueling": True,
    "priority_exponent": 0.0,
    "learning_starts_frames": 6_400,
    "update_period_steps": 1,
    "target_update_frames": 4,
    "epsilon_end": 0.01,
    "epsilon_decay_frames": 20_000,
    "optimizer": "adam",
    "learning_rate": 1e-4,
    "adam_eps": 1.5e-4,
    "replay_capacity": 100_000,
}

#: ``variant`` -> the config defaults it gives (``AgentSpec.variants``)
VARIANTS: dict[str, dict[str, object]] = {"nature": {}, "drq_eps": DRQ_EPS}


@dataclass
class DQNConfig(ValueBasedConfig):
    """Nature DQN: one-step Q-learning, target network, uniform replay, epsilon-greedy, RMSProp."""

    variant: str = "nature"
    """Which defaults the settings below take (:data:`VARIANTS`): "nature" (Mnih et al. 2015) or
    "drq_eps" (DrQ(epsilon) for Atari 100K: :data:`DRQ_EPS`). Settings given explicitly override
    the variant's."""

    # -- network and targets: the Nature paper's, not Rainbow's ---------------------------------
    dueling: bool = False
    """Dueling streams (DQN: no; one hidden layer of 512 and a linear output per action)."""
    n_step: int = 1
    """Return length (DQN: 1-step Q-learning)."""
    double_q: bool = False
    """Bootstrap action from the online net (double DQN); DQN: no, the target net's max."""

    # -- replay ---------------------------------------------------------------------------------
    priority_exponent: float = 0.0
    """Uniform replay (DQN: transitions sampled uniformly; 0 makes every priority equal)."""

    # -- exploration ----------------------------------------------------------------------------
    epsilon_start: float = 1.0
    """Initial exploration epsilon (DQN: 1.0)."""
    epsilon_end: float = 0.1
    """Final exploration epsilon (DQN: 0.1)."""
    epsilon_decay_frames: int = 4_000_000
    """Frames over which epsilon is annealed linearly from ``epsilon_start`` to ``epsilon_end``,
    counted from the end of the replay start (DQN "final exploration frame": 1M agent steps =
    4M frames; DeepMind's code and Dopamine start the annealing when learning starts)."""

    # -- optimisation and schedule ----------------------------------------------------------------
    optimizer: str = "rmsprop"
    """"rmsprop" (DQN: centered RMSProp, the two settings below) or "adam" (DrQ: Adam with
    ``adam_eps``)."""
    learning_rate: float = 2.5e-4
    """Learning rate (DQN's RMSProp: 0.00025; DrQ's Adam: 0.0001)."""
    rmsprop_decay: float = 0.95
    """RMSProp squared-gradient and gradient momentum (DQN: 0.95 both)."""
    rmsprop_min_squared_gradient: float = 0.01
    """Constant added to the squared-gradient estimate under the square root (DQN: 0.01)."""
    learning_starts_frames: int = 200_000
    """Replay start: uniformly random actions and no learning before this many frames (DQN: 50K
    agent steps = 200K frames)."""
    target_update_frames: int = 40_000
    """Target network update frequency (DQN: 10K agent steps = 40K frames)."""

    # -- derived (computed in __post_init__, not settable) -----------------------------------
    epsilon_decay_steps: int = field(init=False)
    """``epsilon_decay_frames`` in agent steps."""

    def __post_init__(self) -> None:
        from benchgen.suite import frames_to_steps  # (here: importing this module stays light)

        super().__post_init__()
        self.epsilon_decay_steps = max(1, frames_to_steps(self.epsilon_decay_frames, self.frames_per_step))

    def _validate(self) -> None:
        if self.variant not in VARIANTS:
            raise did_you_mean("dqn variant", str(self.variant), VARIANTS)
        if self.optimizer not in ("rmsprop", "adam"):
            raise did_you_mean("dqn optimizer", str(self.optimizer), ("rmsprop", "adam"))
        super()._validate()
        for name in ("epsilon_start", "epsilon_end"):
            value = getattr(self, name)
            check_number(name, value, 0.0 <= value <= 1.0, "in [0, 1]")
        check_int("epsilon_decay_frames", self.epsilon_decay_frames, minimum=1)
        check_number("rmsprop_decay", self.rmsprop_decay, 0.0 <= self.rmsprop_decay < 1.0, "in [0, 1)")
        check_number(
            "rmsprop_min_squared_gradient",
            self.rmsprop_min_squared_gradient,
            self.rmsprop_min_squared_gradient > 0,
            "positive",
        )
