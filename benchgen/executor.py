"""Executing a run's units: in this process (the zero-setup default) or elsewhere.

Joint runs chain their units: the joint unit's final checkpoint becomes the starting point
(``init_checkpoint``, recorded in the store as provenance) of the seed's zero-shot and
fine-tuning units.
"""

from __future__ import annotations

from pathlib import Path

from benchgen.runner import ResolvedRun, execute_unit
from benchgen.store import ResultsStore, Unit


def link_joint_checkpoints(run_dir: Path, finished: Unit) -> None:
    """After a joint unit finishes, point its seed's later units at its final checkpoint."""
    if finished.phase != "joint":
        return
    store = ResultsStore(run_dir)
    try:
        final = store.unit(finished.unit_id).last_checkpoint
        later = [u.unit_id for u in store.units() if u.seed == finished.seed and u.phase in ("zeroshot", "finetune")
                 and u.status == "pending"]
        store.set_init_checkpoint(later, final)
    finally:
        store.close()


def pending_units(run_dir: Path) -> list[Unit]:
    store = ResultsStore(run_dir)
    try:
        return [u for u in store.units() if u.status != "done"]
    finally:
        store.close()


def run_local(run_dir: Path, r: ResolvedRun, progress) -> None:
    """Run every unfinished unit in order, in this process."""
    for unit in pending_units(run_dir):
        if unit.phase in ("zeroshot", "finetune") and unit.init_checkpoint is None:
            # A resumed run whose joint unit finished before the kill: re-link from the store.
            store = ResultsStore(run_dir)
            try:
                unit = store.unit(unit.unit_id)
                if unit.init_checkpoint is None:
                    joint = [u for u in store.units() if u.phase == "joint" and u.seed == unit.seed]
                    if joint and joint[0].last_checkpoint:
                        store.set_init_checkpoint([unit.unit_id], joint[0].last_checkpoint)
            finally:
                store.close()
        if progress is not None:
            progress.start_unit(unit.label, unit.budget_frames, unit.frames_done)
        done = execute_unit(run_dir, r, unit.unit_id, progress)
        if progress is not None:
            progress.finish_unit()
        link_joint_checkpoints(run_dir, done)


def run_units(run_dir: Path, r: ResolvedRun, progress) -> None:
    """Run the unfinished units of ``run_dir`` with the executor the run config names."""
    run_local(run_dir, r, progress)
