"""What every executor shares: which units may run next, and what a failed attempt costs.

Joint runs chain their units: the joint unit's final checkpoint becomes the starting point
(``init_checkpoint``, recorded in the store as provenance) of the seed's zero-shot and
fine-tuning units, which therefore wait for it. A unit whose worker dies (killed, crashed) is
retried from its last checkpoint up to ``max_retries`` times; the store counts the retries.
"""

from __future__ import annotations

import sys

from benchgen.errors import UsageError
from benchgen.phases import FROM_JOINT, JOINT, TRANSFER
from benchgen.results.store import ResultsStore, Unit
from benchgen.run.planning.plan import transfer_point

#: phases that start from their seed's joint checkpoint (the transfer phases: from the one
#: kept at or past their point)
DEPENDENT_PHASES = FROM_JOINT


def link_joint_checkpoints(store: ResultsStore) -> None:
    """Point every pending dependent unit at its seed's finished joint checkpoint: the final one,
    or for a transfer unit the first kept at or past its point."""
    units = store.units()
    joints = {u.seed: u for u in units if u.phase == JOINT and u.status == "done"}
    later = [u for u in units if u.phase in DEPENDENT_PHASES and u.init_checkpoint is None and u.seed in joints]
    for u in later:
        joint = joints[u.seed]
        path = joint.last_checkpoint
        if u.phase in TRANSFER:
            point = transfer_point(u.unit_id)
            kept = [row for row in store.checkpoints(joint.unit_id) if row["frames"] >= point]
            path = kept[0]["path"] if kept else path
        store.set_init_checkpoint([u.unit_id], path)


def ready_units(store: ResultsStore) -> list[Unit]:
    """Unfinished units whose dependencies are done, in plan order."""
    link_joint_checkpoints(store)
    units = store.units()
    blocked_seeds = {u.seed for u in units if u.phase == JOINT and u.status != "done"}
    return [
        u
        for u in units
        if u.status != "done"
        and not (u.phase in DEPENDENT_PHASES and u.init_checkpoint is None and u.seed in blocked_seeds)
    ]


def count_retry(store: ResultsStore, unit: Unit, max_retries: int, why: str) -> None:
    """Record a failed attempt; give up (with a one-line error) after ``max_retries`` retries."""
    if unit.retries >= max_retries:
        raise UsageError(
            f"unit {unit.unit_id} failed {unit.retries + 1} times ({why}); "
            f"see its logs, then `benchgen resume` the run directory"
        )
    store.update_unit(unit.unit_id, retries=unit.retries + 1)
    print(
        f"benchgen: unit {unit.unit_id} failed ({why}); retrying from its last checkpoint "
        f"(retry {unit.retries + 1} of {max_retries})",
        file=sys.stderr,
    )
