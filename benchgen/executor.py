"""Executing a run's units: in this process (the zero-setup default), in N local processes
(``--jobs N``), or on a Ray cluster (``--executor ray``, see ``benchgen.distributed``).

Joint runs chain their units: the joint unit's final checkpoint becomes the starting point
(``init_checkpoint``, recorded in the store as provenance) of the seed's zero-shot and
fine-tuning units, which therefore wait for it.

A unit whose worker dies (killed, crashed) is retried from its last checkpoint up to
``max_retries`` times; the store counts the retries.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import time
from pathlib import Path

from benchgen.cpu_affinity import PIN_WORKERS_ENV
from benchgen.errors import UsageError
from benchgen.runner import ResolvedRun, StopRequested, execute_unit, install_stop_handler, load_meta, resolve_from_meta
from benchgen.store import ResultsStore, Unit

DEPENDENT_PHASES = ("zeroshot", "finetune")


def link_joint_checkpoints(store: ResultsStore) -> None:
    """Point every pending zero-shot/fine-tune unit at its seed's finished joint checkpoint."""
    units = store.units()
    joints = {u.seed: u for u in units if u.phase == "joint" and u.status == "done"}
    later = [u for u in units if u.phase in DEPENDENT_PHASES and u.init_checkpoint is None and u.seed in joints]
    for u in later:
        store.set_init_checkpoint([u.unit_id], joints[u.seed].last_checkpoint)


def ready_units(store: ResultsStore) -> list[Unit]:
    """Unfinished units whose dependencies are done, in plan order."""
    link_joint_checkpoints(store)
    units = store.units()
    blocked_seeds = {u.seed for u in units if u.phase == "joint" and u.status != "done"}
    return [u for u in units if u.status != "done"
            and not (u.phase in DEPENDENT_PHASES and u.init_checkpoint is None and u.seed in blocked_seeds)]


def run_units(run_dir: Path, r: ResolvedRun, progress) -> None:
    """Run the unfinished units of ``run_dir`` with the executor the run config names."""
    if r.run.executor == "ray":
        from benchgen.distributed import run_ray

        run_ray(run_dir, r, progress)
    elif r.run.jobs > 1:
        run_parallel(run_dir, r, progress)
    elif r.run.jobs == 1:
        run_in_process(run_dir, r, progress)
    else:
        raise UsageError("--jobs must be at least 1")


def run_in_process(run_dir: Path, r: ResolvedRun, progress) -> None:
    """Every unfinished unit in order, in this process."""
    while True:
        store = ResultsStore(run_dir)
        try:
            ready = ready_units(store)
        finally:
            store.close()
        if not ready:
            return
        unit = ready[0]
        if progress is not None:
            progress.start_unit(unit.unit_id, unit.label, unit.budget_frames, unit.frames_done)
        execute_unit(run_dir, r, unit.unit_id, progress)
        if progress is not None:
            progress.finish_unit(unit.unit_id)


# -- N local processes -------------------------------------------------------------------------
def _unit_process(run_dir: str, unit_id: str, threads: int) -> None:
    """Child process entry point: rebuild the run from its directory and execute one unit."""
    # Units share the cores: each gets its slice of math-library threads (torch, numpy/BLAS).
    os.environ.setdefault("OMP_NUM_THREADS", str(threads))
    # ... and the CPUs: a unit's env workers must not pin themselves onto the same cores
    os.environ.setdefault(PIN_WORKERS_ENV, "0")

    from benchgen.registry import get_registry

    unit_dir = Path(run_dir) / "units" / unit_id
    unit_dir.mkdir(parents=True, exist_ok=True)
    (unit_dir / "worker.pid").write_text(str(os.getpid()))
    r = resolve_from_meta(get_registry(), load_meta(Path(run_dir)))
    install_stop_handler()
    try:
        execute_unit(Path(run_dir), r, unit_id)
    except StopRequested:
        sys.exit(130)


def run_parallel(run_dir: Path, r: ResolvedRun, progress) -> None:
    """Up to ``jobs`` units at once, one process each, all writing to the run's SQLite store
    (WAL mode serializes their commits). A process that dies is retried from its checkpoint."""
    ctx = multiprocessing.get_context("spawn")  # no fork: torch and emulators hold threads
    running: dict[str, multiprocessing.Process] = {}
    try:
        while True:
            store = ResultsStore(run_dir)
            try:
                _poll_progress(store, running, progress)
                for unit_id, proc in list(running.items()):
                    if proc.is_alive():
                        continue
                    del running[unit_id]
                    if progress is not None:
                        progress.finish_unit(unit_id)
                    if proc.exitcode == 130:
                        raise StopRequested(unit_id)
                    if proc.exitcode != 0:
                        _count_retry(store, store.unit(unit_id), r.run.max_retries, f"exit code {proc.exitcode}")
                ready = [u for u in ready_units(store) if u.unit_id not in running]
                if not ready and not running:
                    return
                for unit in ready[: max(0, r.run.jobs - len(running))]:
                    threads = max(1, len(os.sched_getaffinity(0)) // r.run.jobs)
                    proc = ctx.Process(target=_unit_process, args=(str(run_dir), unit.unit_id, threads), daemon=False)
                    proc.start()
                    running[unit.unit_id] = proc
                    if progress is not None:
                        progress.start_unit(unit.unit_id, unit.label, unit.budget_frames, unit.frames_done)
            finally:
                store.close()
            time.sleep(0.2)
    finally:
        for proc in running.values():
            proc.terminate()
            proc.join(timeout=30)


def _count_retry(store: ResultsStore, unit: Unit, max_retries: int, why: str) -> None:
    """Record a failed attempt; give up (with a one-line error) after ``max_retries`` retries."""
    if unit.retries >= max_retries:
        raise UsageError(f"unit {unit.unit_id} failed {unit.retries + 1} times ({why}); "
                         f"see its logs, then `benchgen resume` the run directory")
    store.update_unit(unit.unit_id, retries=unit.retries + 1)
    print(f"benchgen: unit {unit.unit_id} failed ({why}); retrying from its last checkpoint "
          f"(retry {unit.retries + 1} of {max_retries})", file=sys.stderr)


def _poll_progress(store: ResultsStore, running, progress) -> None:
    if progress is None:
        return
    for unit_id in running:
        unit = store.unit(unit_id)
        episodes = store.conn.execute("SELECT COUNT(*) FROM episodes WHERE unit_id = ?", (unit_id,)).fetchone()[0]
        progress.update_unit(unit_id, unit.frames_done, episodes, float("nan"))


def retries_summary(run_dir: Path) -> int:
    """Retries over all units of a run (printed at the end of a run)."""
    store = ResultsStore(run_dir)
    try:
        return sum(u.retries for u in store.units())
    finally:
        store.close()
