"""What an agent asks of a suite (:class:`AgentNeeds`): the declared traits through which agents
and suites meet without naming each other. An agent declares them (``AgentSpec.needs``) and the
suite's agent wrappers answer them (``Suite.agent_wrappers``). A module of its own, below both
:mod:`benchgen.agent` and :mod:`benchgen.suite`: each imports it, neither imports the other for
it. ``benchgen.agent.AgentNeeds`` names the same class.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchgen.capabilities import check_names

#: values of ``AgentNeeds.observations``
OBSERVATION_NEEDS = ("frames", "native")
#: values of ``AgentNeeds.reward``
REWARD_NEEDS = ("learning", "benchmark")


@dataclass(frozen=True)
class AgentNeeds:
    """What an agent asks of a suite's agent-side wrappers (``Suite.agent_wrappers``), which answer
    each need the way the suite's papers preprocessed for such agents."""

    observations: str = "frames"
    """``"frames"``: what the suite's papers fed learning agents: on suites of screens, 84x84
    grayscale frames, the last 4 stacked, ``uint8`` ``(4, 84, 84)`` (Mnih et al. 2015; Sonic's
    wrappers make them from its RGB screens, Atari SABER's protocol already does); suites whose
    observations are not screens give their own. ``"native"``: the suite env's observations as
    its protocol defines them (Sonic: the 224x320 RGB screen), as arrays of the agent's own."""
    reward: str = "learning"
    """``"learning"``: the suite's reward shaping for learning agents (Sonic: allow-backtracking,
    Nichol et al. 2018 section 4.1); ``"benchmark"``: the benchmark reward unchanged, for agents
    that keep score-unit statistics (JERK's running means) or ignore rewards (random play).
    Either way the recorded score is the raw one."""
    actions: tuple[str, ...] = ()
    """Actions the agent needs the suite to name (``Suite.action_semantics``), e.g. JERK's right,
    left, right_jump, left_jump and noop: the suite gives such an agent an action set that holds
    them (Sonic: JERK's 10 button combinations instead of the paper's 7) and a suite that cannot
    name them is refused before a run writes anything."""
    capabilities: tuple[str, ...] = ()
    """What the agent needs from the emulator beyond observations (:mod:`benchgen.capabilities`):
    ``"ram"``, ``"palette_screen"``, ``"clone_state"``, ``"frame_actions"``. A suite that does not
    offer them all (``Suite.capabilities``) is refused in one line when the run is planned; one
    that does builds its envs to offer them (``Suite.with_capabilities``) and the agent reads
    them through ``Agent.emulators``."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "capabilities", check_names(self.capabilities, "AgentNeeds"))
        if self.observations not in OBSERVATION_NEEDS:
            raise ValueError(f"AgentNeeds.observations must be one of {OBSERVATION_NEEDS}, not {self.observations!r}")
        if self.reward not in REWARD_NEEDS:
            raise ValueError(f"AgentNeeds.reward must be one of {REWARD_NEEDS}, not {self.reward!r}")
