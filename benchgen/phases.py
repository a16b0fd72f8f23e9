"""The phases a run's units and episodes are recorded under: one module names them all.

A *unit phase* says what a unit does; the store records every episode under a phase, so these
names are also what a run directory holds (``units.phase``, ``episodes.phase``) and must stay
as they are for old runs to read:

- ``train``: one task, learned from scratch (the single-task protocol);
- ``joint``: one policy learned on a split's train tasks together;
- ``zeroshot``: a joint checkpoint played on a test task without learning;
- ``finetune``: a test task learned from a joint checkpoint;
- ``transfer_zeroshot`` / ``transfer_finetune``: the same two from a joint checkpoint taken
  part-way (``--transfer-curve``);
- ``reeval``: a finished run's checkpoints evaluated again (``benchgen evaluate``);
- ``video``: the episodes recorded for a run's videos (never scored).

A unit's evaluation rounds are recorded under its phase plus :data:`EVALUATION_SUFFIX`
(``train`` -> ``train_eval``); under a protocol that scores the best policy found
(``EvaluationSchedule.best_policy``), the independent re-evaluation of the best round's agent
after training under its phase plus :data:`BEST_SUFFIX` (``train`` -> ``train_best``).
"""

from __future__ import annotations

TRAIN = "train"
JOINT = "joint"
ZEROSHOT = "zeroshot"
FINETUNE = "finetune"
TRANSFER_ZEROSHOT = "transfer_zeroshot"
TRANSFER_FINETUNE = "transfer_finetune"
REEVAL = "reeval"
VIDEO = "video"

#: how the phase of a unit's evaluation episodes is named: ``train`` -> ``train_eval``
EVALUATION_SUFFIX = "_eval"
#: how the phase of a unit's re-evaluated best policy is named: ``train`` -> ``train_best``
BEST_SUFFIX = "_best"

#: every phase a unit runs under (``units.phase``)
UNIT_PHASES = (TRAIN, JOINT, ZEROSHOT, FINETUNE, TRANSFER_ZEROSHOT, TRANSFER_FINETUNE, REEVAL)

#: phases whose units start from a joint checkpoint (they wait for it)
FROM_JOINT = (ZEROSHOT, FINETUNE, TRANSFER_ZEROSHOT, TRANSFER_FINETUNE)
#: phases whose units play a checkpoint without learning
NOT_LEARNING = (ZEROSHOT, TRANSFER_ZEROSHOT)
#: phases whose units fine-tune a test task from a joint checkpoint
FINE_TUNING = (FINETUNE, TRANSFER_FINETUNE)
#: phases whose units learn, and so save checkpoints
LEARNING = (TRAIN, FINETUNE, JOINT, TRANSFER_FINETUNE)
#: phases of the transfer curve (reported as curves of their own)
TRANSFER = (TRANSFER_ZEROSHOT, TRANSFER_FINETUNE)


def evaluation_phase(unit_phase: str) -> str:
    """The phase a unit's evaluation episodes are recorded under (``train`` -> ``train_eval``)."""
    return unit_phase + EVALUATION_SUFFIX


def best_policy_phase(unit_phase: str) -> str:
    """The phase a unit's re-evaluated best policy is recorded under (``train`` -> ``train_best``)."""
    return unit_phase + BEST_SUFFIX


def evaluated_phase(phase: str) -> str | None:
    """The unit phase whose evaluation episodes (rounds, or the re-evaluated best policy)
    ``phase`` holds; None if it holds a unit's own."""
    for suffix in (EVALUATION_SUFFIX, BEST_SUFFIX):
        if phase.endswith(suffix):
            return phase[: -len(suffix)]
    return None


#: the order a run's report lists its phases in
REPORT_ORDER = (
    best_policy_phase(TRAIN),
    evaluation_phase(TRAIN),
    TRAIN,
    REEVAL,
    best_policy_phase(JOINT),
    evaluation_phase(JOINT),
    JOINT,
    ZEROSHOT,
    best_policy_phase(FINETUNE),
    evaluation_phase(FINETUNE),
    FINETUNE,
)

#: which phase's episodes score a task when a run holds several, most preferred first: a
#: protocol's evaluation episodes over the learning ones (its re-evaluated best policy first, for a
#: protocol that scores it), a re-evaluation over the zero-shot play
SCORING_PREFERENCE = (
    best_policy_phase(FINETUNE),
    evaluation_phase(FINETUNE),
    FINETUNE,
    best_policy_phase(TRAIN),
    evaluation_phase(TRAIN),
    TRAIN,
    REEVAL,
    ZEROSHOT,
    best_policy_phase(JOINT),
    evaluation_phase(JOINT),
    JOINT,
)

#: the phases ``benchgen compare --phase`` and similar filters accept
SCORED = (
    TRAIN,
    FINETUNE,
    ZEROSHOT,
    JOINT,
    *(evaluation_phase(p) for p in (TRAIN, FINETUNE, JOINT)),
    REEVAL,
    *(best_policy_phase(p) for p in (TRAIN, FINETUNE, JOINT)),
)


#: every phase an episode can be recorded under (``episodes.phase``): a unit's phase, its
#: evaluation and best-policy phases, and the videos'
EPISODE_PHASES = frozenset(
    {VIDEO, *UNIT_PHASES, *map(evaluation_phase, UNIT_PHASES), *map(best_policy_phase, UNIT_PHASES)}
)


def is_unit_phase(name: object) -> bool:
    """Whether ``name`` is a phase a unit runs under (a store holding another is damaged or crafted)."""
    return name in UNIT_PHASES


def is_episode_phase(name: object) -> bool:
    """Whether ``name`` is a phase an episode can be recorded under; phase names end up in file
    names (the report's plots), so a store's are checked against this list when it is read."""
    return isinstance(name, str) and name in EPISODE_PHASES
