"""The ``procgen`` suite: Procgen's 16 games (Cobbe et al. 2020), train levels against test levels.

Tasks are the games (``coinrun``, ``starpilot``...) and, for each, ``GAME:test``. A unit playing
``coinrun`` trains on the protocol's training levels and, in every test round (the suite's
evaluation phase: ``evaluation_episodes`` episodes every ``evaluation_interval_steps`` and after
training, recorded under ``<phase>_eval``), plays the test levels; both are recorded raw, with each
episode's level seed (:mod:`benchgen_procgen.env` says how the two level sets are kept apart). A
``GAME:test`` task plays the test levels throughout: the held-out task of the ``GAME_levels``
splits, where a joint agent trains on the training levels, is scored zero-shot on test levels,
then fine-tuned on them (``benchgen run procgen ppo_joint --split coinrun_levels --finetune``).

Budgets count agent steps (``timesteps``: one game tick each, no frame skip). Protocols:
``easy200`` (the default) and ``hard500`` (:mod:`benchgen_procgen.protocols`). Scores are normalized
with the paper's (R_min, R_max) for the protocol's mode, or train-procgen's, as the protocol's
``normalization`` says (:mod:`benchgen_procgen.scoring`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym

from benchgen.agent import AgentNeeds
from benchgen.errors import did_you_mean
from benchgen.protocols import changed_parameters
from benchgen.scoring import ReferenceScores, Scorer
from benchgen.suite import EvaluationSchedule, Split, Suite

from . import protocols, scoring
from .env import (
    END_REASONS,
    EPISODE_FIELDS,
    FRAMES_PER_STEP,
    TEST_SUFFIX,
    ProcgenVectorEnv,
    level_range,
    procgen_env_class,
    split_task,
)
from .games import ACTION_COMBOS, GAMES, check_mode


class ProcgenSuite(Suite):
    """Procgen's games under one of the paper's protocols; see the module docstring."""

    name = "procgen"
    description = "Procgen's 16 procedurally generated games (Cobbe et al. 2020): train levels, unseen test levels"
    budget_unit = "timesteps"
    frames_per_step = FRAMES_PER_STEP
    default_checkpoints = ()
    default_num_envs = 64  # the paper's environments per worker (data/ppo_paper_hyperparameters.md)
    episode_fields = EPISODE_FIELDS
    end_reasons = END_REASONS
    task_score_rule = (
        "training levels: mean raw return of the last 100 training episodes; test levels: mean raw return of the "
        "latest test round (the phase <phase>_eval)"
    )
    default_split = "all"
    default_joint_split = "coinrun_levels"
    default_protocol = protocols.DEFAULT
    # the emulator (installed without its pins: README, "Set up"); every run records their versions
    software = ("procgen-mirror", "gym3")
    #: test rounds play test levels: reports show train, test and the gap per game
    held_out_evaluation = True

    def __init__(self, protocol: protocols.ProcgenProtocol = protocols.EASY200):
        self.procgen_protocol = protocol
        self.version = protocol.version
        self.default_budget = protocol.training_steps

    # -- protocols -------------------------------------------------------------------------------
    def protocol_presets(self) -> dict[str, dict[str, Any]]:
        """easy200 and hard500 (:mod:`benchgen_procgen.protocols`)."""
        return {
            name: {
                **p.parameters(),
                "training_steps": p.training_steps,
                "sources": dict(p.sources),
                "open_values": dict(p.open_values),
            }
            for name, p in protocols.PRESETS.items()
        }

    def with_protocol(self, preset: str, changes: Mapping[str, Any]) -> ProcgenSuite:
        """This suite under ``preset`` with ``changes`` (``ProcgenProtocol.CHANGEABLE`` keys)."""
        chosen = protocols.preset(preset)
        custom = chosen.changed(changes)
        changed = changed_parameters(chosen, custom, changes)
        if not changed:
            return type(self)(chosen)
        suite = type(self)(custom)
        suite.protocol_changes = changed
        return suite

    def protocol(self) -> dict[str, Any]:
        p = self.procgen_protocol
        return {
            "protocol": "custom" if self.protocol_changes else p.name,
            **({"protocol_base": p.name} if self.protocol_changes else {}),
            "protocol_version": p.version,
            "frames_per_step": FRAMES_PER_STEP,
            "score": "undiscounted_return",
            **p.parameters(),
        }

    # -- tasks and environments ------------------------------------------------------------------
    def tasks(self) -> list[str]:
        return [*GAMES, *(g + TEST_SUFFIX for g in GAMES)]

    def check_task_available(self, task: str) -> None:
        if task not in self.tasks():
            raise did_you_mean(
                f"task of suite '{self.name}'", task, self.tasks(), listed_by=f"benchgen list {self.name}"
            )
        game, test_task = split_task(task)
        check_mode(game, self.procgen_protocol.distribution_mode)
        if test_task:
            level_range(self.procgen_protocol, game, test=True)  # refuses a protocol without test levels
        procgen_env_class()  # the package: a one-line error with the install command when it is missing

    def make_env(self, tasks: Sequence[str], seed: int, *, mode: str = "train") -> ProcgenVectorEnv:
        """Training levels in "train" mode, test levels in "eval" mode (test rounds, zero-shot units)."""
        for task in set(tasks):
            self.check_task_available(task)
        return ProcgenVectorEnv(tasks, seed, self.procgen_protocol, mode=mode)

    def screens(self, env: ProcgenVectorEnv):
        """The 64x64 frames the package renders (what agents see)."""
        return env.screens()

    def evaluation_schedule(self) -> EvaluationSchedule | None:
        """Test rounds: ``evaluation_episodes`` test-level episodes every ``evaluation_interval_steps``
        and after training, with the agent's own (for PPO: sampled) policy; None without test levels."""
        p = self.procgen_protocol
        if not p.evaluation_episodes:
            return None
        return EvaluationSchedule(
            episodes=p.evaluation_episodes, interval_frames=p.evaluation_interval_steps * FRAMES_PER_STEP
        )

    def agent_wrappers(self, env: gym.vector.VectorEnv, needs: AgentNeeds) -> gym.vector.VectorEnv:
        """The 64x64 RGB frames as the paper's agents saw them, channel-first for agents that ask
        for ``frames`` (:mod:`benchgen_procgen.wrappers`); raw rewards (no clipping or shaping)."""
        from .wrappers import agent_wrappers

        return agent_wrappers(env, needs)

    def action_semantics(self) -> dict[str, int]:
        """Indices of the package's 15 button combinations (``games.ACTION_COMBOS``): UP is the jump
        of the platform games (coinrun, ninja, climber, jumper)."""
        index = {combo: i for i, combo in enumerate(ACTION_COMBOS)}
        return {
            "noop": index[()],
            "right": index[("RIGHT",)],
            "left": index[("LEFT",)],
            "jump": index[("UP",)],
            "right_jump": index[("RIGHT", "UP")],
            "left_jump": index[("LEFT", "UP")],
        }

    def splits(self) -> list[Split]:
        """``all`` (the 16 games), and per game ``GAME_levels``: train on its training levels, hold
        out its test levels (``GAME:test``), for the joint -> zero-shot -> fine-tune workflow."""
        return [
            Split(suite=self.name, name="all", train=GAMES, description="Procgen's 16 games (Cobbe et al. 2020)"),
            *(
                Split(
                    suite=self.name,
                    name=f"{game}_levels",
                    train=(game,),
                    test=(game + TEST_SUFFIX,),
                    description=f"{game}: train on the training levels, zero-shot and fine-tune on the test levels",
                )
                for game in GAMES
            ),
        ]

    # -- scores ----------------------------------------------------------------------------------
    def random_scores(self) -> dict[str, float]:
        """None: the paper normalizes with R_min, a blind PPO policy's score, not random play."""
        return {}

    def reference_scores(self) -> list[ReferenceScores]:
        """R_max (with R_min) per mode and constant set, and openai's released PPO runs
        (:mod:`benchgen_procgen.scoring`)."""
        return scoring.reference_tables()

    def scorer(self) -> Scorer:
        return scoring.ProcgenScorer(scoring.reference_tables())
