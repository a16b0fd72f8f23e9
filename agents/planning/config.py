"""The planners' settings: Bellemare et al. 2013's values (appendix C) for breadth-first search and UCT.

Torch- and numpy-free, so listing agents stays fast; each planner's module (``brfs.py``,
``uct.py``) says how it uses them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class BrFSConfig:
    """Bellemare et al. 2013, appendix C (planning: full-tree search), unless a field says otherwise."""

    max_frames_per_action: int = 133_000
    """Emulator frames simulated per action (appendix C: 133,000), the node limit."""
    discount: float = 0.999
    """gamma of the branches' sums of rewards (section 3.1, appendix C: 0.999)."""
    prune_duplicates: bool = False
    """Expand one of the actions whose emulated states are equal (section 3.2.1: UCT's optimization)."""
    reuse_tree: bool = False
    """Keep the subtree of the action taken and search on from it (section 3.2.1: UCT's)."""
    seed_offset: int = 0
    """Added to the unit seed for the action orders' and ties' random generator."""

    def __post_init__(self):
        if self.max_frames_per_action < 1:
            raise ValueError("max_frames_per_action must be >= 1")
        if not 0.0 < self.discount <= 1.0:
            raise ValueError("discount must lie in (0, 1]")


@dataclass
class UCTConfig:
    """Bellemare et al. 2013, appendix C (planning: UCT), unless a field says otherwise."""

    simulations_per_action: int = 500
    """Samples (root visits) per action, ``k`` of appendix B; appendix C: 500."""
    max_depth_frames: int = 300
    """The search horizon ``m`` in emulator frames (appendix C: 300), whole agent steps of the suite's
    frames per step (60 steps of 5 frames)."""
    exploration: float = 0.1
    """UCB's exploration constant (appendix C: 0.1), on raw game rewards."""
    discount: float = 0.999
    """gamma of the returns (section 3.2.2: the discount of section 3.1, appendix C: 0.999)."""
    prune_duplicates: bool = True
    """Search one of the actions whose emulated states are equal (section 3.2.1)."""
    reuse_tree: bool = True
    """Keep the subtree of the action taken for the next step (section 3.2.1)."""
    max_frames_per_action: int = 0
    """benchgen's cap on the frames simulated per action, for budgets below the paper's (0: none,
    only ``simulations_per_action`` bounds a search, as in the paper)."""
    seed_offset: int = 0
    """Added to the unit seed for the rollouts' and the action orders' random generator."""

    def __post_init__(self):
        if self.simulations_per_action < 1 or self.max_depth_frames < 1 or self.max_frames_per_action < 0:
            raise ValueError("simulations_per_action and max_depth_frames must be >= 1, max_frames_per_action >= 0")
        if not 0.0 < self.discount <= 1.0 or self.exploration < 0:
            raise ValueError("discount must lie in (0, 1] and exploration be >= 0")
