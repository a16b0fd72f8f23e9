"""DQN settings (Mnih et al. 2015, "Human-level control through deep reinforcement learning",
Extended Data Table 1 and Methods), every field with its source.

The table counts "frames" that are agent steps (each one action repeated over 4 emulator
frames), as DeepMind's released code and Dopamine's ``dqn_nature.gin`` read it: replay start
50K, final exploration 1M and target update 10K agent steps. benchgen states frame-counted
settings in emulator frames (``*_frames``; see
:class:`~benchgen_agents.value_based.config.ValueBasedConfig`), so they appear here times 4.

This module imports neither torch nor numpy, so ``benchgen list`` stays fast.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from benchgen_agents.value_based.config import ValueBasedConfig, check_int, check_number


@dataclass
class DQNConfig(ValueBasedConfig):
    """Nature DQN: one-step Q-learning, target network, uniform replay, epsilon-greedy, RMSProp."""

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
    learning_rate: float = 2.5e-4
    """RMSProp learning rate (DQN: 0.00025)."""
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
        super().__post_init__()
        self.epsilon_decay_steps = max(1, self.epsilon_decay_frames // self.frames_per_step)

    def _validate(self) -> None:
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
