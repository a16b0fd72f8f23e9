"""The ``minatar`` suite: MinAtar's five games (Young and Tian 2019) under the paper's settings.

Every protocol value and its source is in :meth:`MinAtarSuite.protocol` and the package README.
The suite's data lie next to this module: ``splits/*.yaml`` (``all`` and
``holdout_space_invaders``) and ``data/random_scores.csv`` (measured with ``benchgen run minatar
random``, see the README).

Scoring is raw. No per-game table of the paper's scores can be read precisely (its results are
learning-curve figures), so the suite has no reference to normalize against, and benchgen's
normalized scoring needs one (``(a - r) / |w - r|``): :meth:`MinAtarSuite.scorer` is None and
runs report raw per-game scores (the task score: the mean of the last 100 training episodes).
The random scores ship anyway (``Suite.random_scores``) as the games' floor for readers.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Sequence
from typing import Any

import gymnasium as gym

from benchgen.agent import AgentNeeds
from benchgen.errors import UsageError, did_you_mean
from benchgen.scoring import Scorer
from benchgen.suite import Suite
from benchgen_minatar import env

#: version of the suite's protocol (bump it when anything in ``protocol()`` changes meaning)
VERSION = "1"


def minatar_version() -> str:
    """The installed minatar's version; ``UsageError`` (one line) when it is missing."""
    try:
        return importlib.metadata.version("minatar")
    except importlib.metadata.PackageNotFoundError:
        raise UsageError("the minatar package is not installed; run `pip install minatar==1.0.15`")


class MinAtarSuite(Suite):
    """MinAtar: asterix, breakout, freeway, seaquest, space_invaders."""

    name = "minatar"
    description = "MinAtar's five 10x10 games (Young and Tian 2019): sticky actions 0.1, difficulty ramping"
    version = VERSION
    budget_unit = "frames"
    frames_per_step = env.FRAMES_PER_STEP
    #: the paper trained every agent for 5M frames (``NUM_FRAMES`` of its ``examples/dqn.py``)
    default_budget = 5_000_000
    default_checkpoints = (1_000_000, 2_500_000, 5_000_000)
    #: the paper's agents played one environment each
    default_num_envs = 1
    episode_fields = ("ramp_level",)
    end_reasons = ("game_over", "time_limit")
    task_score_rule = "mean raw score of the last 100 training episodes (Machado et al. 2018)"
    default_split = "all"
    default_joint_split = "holdout_space_invaders"
    #: the package that plays the games: every run records its installed version in run.json
    #: (``versions``), and a resume under another version is refused unless forced
    software = ("minatar",)

    def tasks(self) -> list[str]:
        return list(env.GAMES)

    def protocol(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            "emulator": "minatar",
            "minatar_version": minatar_version(),
            "sticky_action_probability": env.STICKY_ACTION_PROBABILITY,
            "difficulty_ramping": env.DIFFICULTY_RAMPING,
            "action_set": "full_6",
            "frames_per_step": env.FRAMES_PER_STEP,
            "observation": f"grid_{env.OBSERVATION_CHANNELS}x{env.GRID}x{env.GRID}_uint8_channels_first_zero_padded",
            "max_episode_frames": None,
            "games": list(env.GAMES),
        }

    def check_task_available(self, task: str) -> None:
        if task not in env.GAMES:
            raise did_you_mean(f"task of suite '{self.name}'", task, list(env.GAMES))
        minatar_version()

    def make_env(self, tasks: Sequence[str], seed: int, *, mode: str = "train") -> env.MinAtarVectorEnv:
        for task in tasks:
            self.check_task_available(task)
        return env.MinAtarVectorEnv(tasks, seed)

    def agent_wrappers(self, vector_env: gym.vector.VectorEnv, needs: AgentNeeds) -> gym.vector.VectorEnv:
        """The grid as a flat float vector for "frames", unchanged for "native"; the game's reward
        either way (:mod:`benchgen_minatar.wrappers`)."""
        from benchgen_minatar.wrappers import agent_wrappers

        return agent_wrappers(vector_env, needs)

    def scorer(self) -> Scorer | None:
        """None: no published per-game reference exists to normalize against, so runs are
        scored raw (module docstring)."""
        return None
