"""The Brute's settings (Machado et al. 2018, section 4.1); ``agent.py``'s docstring says where they come from."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class BruteConfig:
    """Machado et al. 2018's Brute; ``agent.py``'s module docstring says which values the paper leaves open."""

    epsilon: float = 0.005
    """Probability of a uniformly random action at each step (benchgen's choice, ``agent.py``'s docstring)."""
    seed_offset: int = 0
    """Added to the unit seed for the exploration's random generator."""

    def __post_init__(self):
        if not 0.0 <= self.epsilon <= 1.0:
            raise ValueError("epsilon must lie in [0, 1]")
