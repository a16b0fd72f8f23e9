"""The protocol parameters of the Sonic suite (Nichol et al. 2018).

Every value here must match for two runs to be compared; ``SonicSuite.protocol()`` records them
all. Tests scale ``max_timesteps`` down through the same code path the benchmark uses.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class SonicProtocol:
    """Time, stochasticity and reward of one Sonic episode."""

    frame_skip: int = 4
    """Emulator frames per agent timestep (about 1/15 s at 60 Hz)."""
    sticky_prob: float = 0.25
    """Sticky frame skip: probability that a new action is delayed by one frame (the previous
    action is applied on the first frame of the step). Never on the first step after a reset."""
    max_timesteps: int = 4500
    """Time limit: episodes are cut after this many timesteps (18,000 frames, about 5 minutes)."""
    progress_reward: float = 9000.0
    """Total reward for going from the start to the level's end offset."""
    completion_bonus: float = 1000.0
    """Bonus for completing the level, ``completion_bonus * (1 - t / time limit)``."""

    def __post_init__(self):
        if self.frame_skip < 1:
            raise ValueError(f"frame_skip must be >= 1, got {self.frame_skip}")
        if not 0.0 <= self.sticky_prob < 1.0:
            raise ValueError(f"sticky_prob must lie in [0, 1), got {self.sticky_prob}")
        if self.max_timesteps < 1:
            raise ValueError(f"max_timesteps must be >= 1, got {self.max_timesteps}")

    @property
    def max_frames(self) -> int:
        """The time limit in emulator frames (the completion bonus is measured against it)."""
        return self.max_timesteps * self.frame_skip

    def as_dict(self) -> dict:
        """The parameters as a flat dict (for ``Suite.protocol()``)."""
        return {**asdict(self), "max_frames": self.max_frames}
