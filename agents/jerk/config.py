"""JERK's settings: Algorithm 1's parameters (Nichol et al. 2018) and the named actions it needs."""

from __future__ import annotations

from dataclasses import dataclass

#: action names JERK needs from ``Suite.action_semantics()`` (its ``AgentNeeds.actions``)
REQUIRED_ACTIONS = ("right", "left", "right_jump", "left_jump", "noop")


@dataclass
class JerkConfig:
    """Algorithm 1's parameters; defaults are the paper's (Nichol et al. 2018, Algorithm 1)."""

    exploit_bias: float = 0.25
    """beta: the exploitation probability at the start; it grows by T / Tmax to 1 at the budget."""
    right_steps: int = 100
    """Rn: timesteps of each move to the right."""
    left_steps: int = 70
    """Ln: timesteps of the move to the left after a right move that gained no reward."""
    jump_repeat: int = 4
    """Jn: consecutive timesteps the jump button is held once a jump starts."""
    jump_prob: float = 0.1
    """Jp: per-timestep probability of starting a jump while not jumping."""
    seed_offset: int = 0
    """Added to the unit seed for the agent's random streams."""

    def __post_init__(self) -> None:
        if not 0 <= self.exploit_bias <= 1 or not 0 <= self.jump_prob <= 1:
            raise ValueError("exploit_bias and jump_prob are probabilities: they must lie in [0, 1]")
        if self.right_steps < 1 or self.left_steps < 0 or self.jump_repeat < 1:
            raise ValueError("right_steps and jump_repeat must be >= 1 and left_steps >= 0")
