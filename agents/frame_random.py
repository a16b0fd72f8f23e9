"""The ALE paper's Random agent: a uniformly random action at every emulator frame.

Bellemare et al. 2013 (section 3.1.2) compare their learners with three baselines; its Random
"picks a random action on every frame" while the learners act every 5 frames. benchgen's
``random`` agent draws once per agent step, and the suite repeats its action for the step's
frames; this agent draws one action per frame, through the suite's ``frame_actions`` capability
(:mod:`benchgen.capabilities`): its actions have shape ``(num_envs, frames_per_step)``. It is the
Random of the ``ale2013`` preset (``benchgen run atari_saber frame_random --protocol ale2013``),
the agent behind that paper's Random column (Tables 1 and 4); a suite that cannot take an action
per frame refuses it in one line.
"""

from __future__ import annotations

import numpy as np

from benchgen.agent import AgentNeeds, AgentSpec
from benchgen_agents.random_agent import RandomAgent, RandomConfig


class FrameRandomAgent(RandomAgent):
    """Uniform random actions, one per emulator frame (module docstring). Seeding, the loop and
    saving the generator are the random agent's."""

    def _actions(self, num_envs: int) -> np.ndarray:
        frames = max(1, int(self.environment.frames_per_step))
        return self.rng.integers(0, self.action_space.n, size=(num_envs, frames))


SPECS = [
    AgentSpec(
        name="frame_random",
        config_class=RandomConfig,
        factory=FrameRandomAgent,
        description="a uniformly random action at every frame (Bellemare et al. 2013's Random)",
        needs=AgentNeeds(reward="benchmark", capabilities=("frame_actions",)),
    )
]
