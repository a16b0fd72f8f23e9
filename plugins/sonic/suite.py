"""The Sonic suite: "Gotta Learn Fast" (Nichol et al. 2018) on stable-retro.

58 levels of three Genesis games, a 47/11 train/test split, and the test protocol: each test
level is played for 1,000,000 timesteps from scratch (or from a joint policy trained on the
training levels), scored by the mean total reward over all its episodes; the aggregate is the
mean over the test levels.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from benchgen.agent import AgentNeeds
from benchgen.errors import did_you_mean
from benchgen.scoring import PublishedAggregate
from benchgen.suite import Suite
from benchgen_sonic import paper
from benchgen_sonic.levels import LEVELS, Level, end_offsets_digest
from benchgen_sonic.progress import COMPLETED, LIFE_LOST, SPECIAL_STAGE, TIME_LIMIT
from benchgen_sonic.protocol import SonicProtocol
from benchgen_sonic.roms import check_level_files
from benchgen_sonic.scoring import AggregateReference, SonicScorer, paper_tables, published_aggregates
from benchgen_sonic.vector import EPISODE_FIELDS, SonicVectorEnv


class SonicSuite(Suite):
    """The Sonic benchmark (see the module docstring)."""

    name = "sonic"
    description = "Sonic 1/2/3&K, 58 levels (stable-retro): generalization to unseen levels (Nichol et al. 2018)"
    version = "1"
    budget_unit = "timesteps"
    default_budget = 1_000_000  # the test protocol: 1M timesteps per test level
    default_checkpoints = (250_000, 500_000, 750_000, 1_000_000)
    default_num_envs = 1  # the paper's PPO and Rainbow ran one environment per test level
    episode_fields = EPISODE_FIELDS
    end_reasons = (COMPLETED, LIFE_LOST, TIME_LIMIT, SPECIAL_STAGE)
    task_score_rule = "mean total reward over all episodes of the budget (learning while playing)"
    default_split = "test"
    default_joint_split = "contest"
    #: every run records their versions: the emulator, and OpenCV, which resizes every frame (wrappers.py)
    software = ("stable-retro", "opencv-python-headless")

    def __init__(self, levels: Sequence[Level] = LEVELS, protocol: SonicProtocol = SonicProtocol()):
        """``levels`` and ``protocol`` default to the benchmark's; tests pass a test integration
        and a shorter time limit, which then run through exactly the benchmark's code."""
        self.levels = {level.task: level for level in levels}
        self.sonic_protocol = protocol

    @property
    def frames_per_step(self) -> int:
        """Emulator frames per timestep: the protocol's frame skip (4)."""
        return self.sonic_protocol.frame_skip

    def tasks(self) -> list[str]:
        return list(self.levels)

    def level(self, task: str) -> Level:
        """The level behind a task name."""
        if task not in self.levels:
            raise did_you_mean(f"task of suite '{self.name}'", task, self.levels)
        return self.levels[task]

    def protocol(self) -> dict[str, Any]:
        import stable_retro

        return {
            "version": self.version,
            "emulator": "stable-retro",
            "stable_retro_version": stable_retro.__version__.strip(),
            **self.sonic_protocol.as_dict(),
            "episode_ends": "level completed (end offset), life lost, special stage (Sonic 2, 3&K), time limit",
            "reward": "9000 * progress increase; + completion_bonus * (1 - frames / max_frames) on completion",
            "end_offsets": "stable-retro contest scenario (script.lua level_max_x)",
            "end_offsets_digest": end_offsets_digest(tuple(self.levels.values())),
            "observation": "224x320x3 uint8 RGB screen",
            "action": "Discrete(4096): the 12 Genesis buttons as bits (B, A, MODE, START, UP, DOWN, LEFT, "
            "RIGHT, C, Y, X, Z), stable-retro FILTERED combinations",
            "task_score": self.task_score_rule,
            "aggregate": "mean of per-level scores",
        }

    def check_task_available(self, task: str) -> None:
        """One-line ``UsageError`` if the game's ROM is missing or is not the right revision."""
        level = self.level(task)
        check_level_files(level.game, level.state)

    def capabilities(self) -> frozenset[str]:
        """The Genesis RAM and state clone/restore (``benchgen_sonic.emulators`` says why not the
        palette screen)."""
        from benchgen_sonic.emulators import SONIC_CAPABILITIES

        return SONIC_CAPABILITIES

    def make_env(self, tasks: Sequence[str], seed: int, *, mode: str = "train") -> SonicVectorEnv:
        """One worker process per task; ``mode`` does not change the protocol. Observations are
        the workers' shared-memory screens, valid until the next ``step``/``reset``."""
        levels = [self.level(task) for task in tasks]
        for task in dict.fromkeys(tasks):
            self.check_task_available(task)
        # no observation copies: agent_wrappers (always between this env and an agent) turn each
        # screen into an 84x84 frame, or a copy, of the agent's own before the next step reuses it
        return SonicVectorEnv(levels, seed=seed, protocol=self.sonic_protocol, copy_observations=False)

    def screens(self, env):
        """The workers' 224x320 RGB screens after the last ``reset`` or ``step`` (the protocol's own
        observations, before the agent wrappers shrink them), copied."""
        screens = getattr(env, "screens", None)
        return None if screens is None else np.array(screens, dtype=np.uint8)

    def agent_wrappers(self, env: gym.vector.VectorEnv, needs: AgentNeeds) -> gym.vector.VectorEnv:
        """The paper's preprocessing: 7 button combinations (10 for agents that need named
        actions), allow-backtracking reward for learners, 84x84 gray frames stacked 4; see
        :func:`benchgen_sonic.wrappers.agent_wrappers`."""
        from benchgen_sonic.wrappers import agent_wrappers  # imports OpenCV: only when needed

        return agent_wrappers(env, needs)

    def scorer(self) -> SonicScorer:
        """Per-level mean of all episodes, mean over levels, compared with the paper's tables
        (:class:`~benchgen_sonic.scoring.SonicScorer`)."""
        return SonicScorer({table.name: table for table in self.reference_scores()})

    def reference_scores(self) -> list[AggregateReference]:
        """The paper's per-level tables with their printed aggregates
        (:func:`~benchgen_sonic.scoring.paper_tables`), on this suite's levels."""
        return paper_tables(self.levels)

    def published_aggregates(self) -> list[PublishedAggregate]:
        """The paper's printed aggregates recomputed from the shipped per-level tables
        (:func:`~benchgen_sonic.scoring.published_aggregates`); none for a suite built on other
        levels, which ships no per-level table of the paper."""
        named = {row.task for row in paper.level_rows()}
        return published_aggregates() if named <= set(self.levels) else []

    def action_semantics(self) -> dict[str, int]:
        """Indices in the action set of agents that need named actions (JERK's 10 combinations);
        left, right and jump have the same indices in every agent's set."""
        from benchgen_sonic.wrappers import ACTION_SEMANTICS

        return dict(ACTION_SEMANTICS)
