"""Scoring the best policy found during training, re-evaluated (``EvaluationSchedule.best_policy``).

Mnih et al. 2015 and Hessel et al. 2018 evaluated their agents regularly during training and
reported the best policy found; Machado et al. 2018 (section 3, "Evaluation of the Best Policy")
describe how: at the end of training the best policy plays a number of evaluation episodes with
no learning, and they point out that the best round's own score is biased upwards, so that a
second, independent evaluation of the agent at that point in time is needed. SABER (section
2.1, "Reporting") calls that score statistically biased too. Under such a protocol a unit:

1. keeps the agent checkpoint its best evaluation round so far played (highest mean raw score,
   :meth:`EvaluationRounds.best_round`; the earliest of equal rounds): the checkpoint pruning
   of ``benchgen.run.execution.checkpoints`` keeps it, inside the run directory;
2. after training and its last round, once the final agent's checkpoint is on disk, loads that
   checkpoint and plays one round of the schedule's quota with new environment seeds, recorded
   under ``<unit phase>_best`` (``benchgen.phases.best_policy_phase``) with the round it
   re-evaluates and that round's frame counter in each episode's extras. The episodes are the
   task score; the rounds still show the agent at the end of training.

The re-evaluation loads the best checkpoint into the unit's own agent, after the final
checkpoint is written and with no save after it, rather than building a second agent: an agent
whose checkpoint holds its replay memory (DQN's is a million frames) would otherwise be in memory
twice. A kill during the re-evaluation is continued like any round on ``resume``: the best round
is read back from the store, its checkpoint reloaded, and the episodes already recorded count
toward the quota.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from benchgen.errors import UsageError
from benchgen.phases import best_policy_phase
from benchgen.run.evaluation.rounds import CheckpointEvaluation, EvaluationRounds
from benchgen.run.execution.build import COPY_HINT, load_checkpoint
from benchgen.run.execution.signals import STOP

#: the ``extras`` keys of a re-evaluation episode: the round whose agent it re-evaluates, and
#: the training frame counter that round began at (its checkpoint)
BEST_ROUND_KEY = "best_round"
BEST_FRAMES_KEY = "best_round_frames"

#: added to the unit's evaluation seed: the re-evaluation's environments and exploration draws
#: are not those of the round that chose the agent
_SEED_OFFSET = 104_729


class BestPolicy:
    """A unit's best-round bookkeeping and its re-evaluation phase; ``rounds`` are its
    evaluation rounds (their schedule has ``best_policy``)."""

    def __init__(self, rounds: EvaluationRounds, checkpoint_dir: Callable[[int], Path]):
        self.rounds = rounds
        #: the unit's checkpoint folder at a frame count (``RunDir.checkpoint_dir``)
        self.checkpoint_dir = checkpoint_dir
        once = dataclasses.replace(rounds.schedule, interval_frames=0, best_policy=False)
        self.reevaluation = EvaluationRounds(
            once,
            rounds.unit,
            rounds.recorder,
            rounds.env_tasks,
            rounds.seed + _SEED_OFFSET,
            phase=best_policy_phase(rounds.unit.phase),
        )

    def kept_frames(self) -> set[int]:
        """The frame count of the best complete round's checkpoint (none before one is done)."""
        k = self.rounds.best_round()
        return {self.rounds.began[k]} if k is not None else set()

    @property
    def due(self) -> bool:
        """Whether the re-evaluation is to be played: the last round is complete, the
        re-evaluation is not, and no stop was asked for."""
        last = len(self.rounds.points)
        return not STOP.requested and self.rounds.complete(last) and not self.reevaluation.complete(1)

    def play(self, evaluation: CheckpointEvaluation) -> None:
        """Load the best round's checkpoint into ``evaluation``'s agent and play the
        re-evaluation's due round with it (no save before it)."""
        if not self.due:
            return
        k = self.rounds.best_round()
        frames = self.rounds.began[k]
        path = self.checkpoint_dir(frames)
        if not path.is_dir():
            raise UsageError(
                f"unit {self.rounds.unit.unit_id}: the checkpoint of its best evaluation round ({k}, at {frames:,} "
                f"frames) is missing at {path}; restore it from a copy of the run"
            )
        self.reevaluation.extras = {BEST_ROUND_KEY: k, BEST_FRAMES_KEY: frames}
        load_checkpoint(
            evaluation.agent, path, f"unit {self.rounds.unit.unit_id}: its best round's checkpoint", COPY_HINT
        )
        evaluation.play_once(self.reevaluation)
