"""The local executor: a run's units in this process, or up to ``--jobs N`` at once in child
processes that all write to the run's SQLite store (WAL mode serializes their commits).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import time

from benchgen.cpu_affinity import PIN_WORKERS_ENV
from benchgen.machine import cpu_count
from benchgen.results.rundir import RunDir
from benchgen.run.execution.schedule import count_retry, ready_units
from benchgen.run.execution.signals import STOP, StopRequested, install_stop_handler
from benchgen.run.execution.unit import execute_unit
from benchgen.run.planning.plan import ResolvedRun, resolve_from_meta


def run_in_process(run_dir: RunDir, r: ResolvedRun, progress) -> None:
    """Every unfinished unit in order, in this process."""
    while True:
        store = run_dir.store()
        try:
            ready = ready_units(store)
        finally:
            store.close()
        if not ready:
            return
        unit = ready[0]
        if progress is not None:
            progress.start_unit(unit.unit_id, unit.label, unit.budget_frames, unit.frames_done)
        finished = execute_unit(run_dir, r, unit.unit_id, progress)
        if progress is not None:
            progress.finish_unit(unit.unit_id, frames=finished.frames_done, done=finished.status == "done")


# -- N local processes -------------------------------------------------------------------------
def _die_with_parent(parent_pid: int) -> None:
    """Ask Linux to send this process SIGTERM when its parent dies (``prctl(PR_SET_PDEATHSIG)``):
    a unit process of a killed run then saves its checkpoint and stops instead of writing on
    beside a later ``resume``. By hand through ctypes: no maintained library wraps the call."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the unit lock still keeps a resume out
        pass
    if os.getppid() != parent_pid:  # the parent died before the request took effect
        sys.exit(130)


def _unit_process(run_dir: str, unit_id: str, threads: int, parent_pid: int) -> None:
    """Child process entry point: rebuild the run from its directory and execute one unit."""
    install_stop_handler()
    _die_with_parent(parent_pid)
    # Units share the cores: each gets its slice of math-library threads (torch, numpy/BLAS).
    os.environ.setdefault("OMP_NUM_THREADS", str(threads))
    # ... and the CPUs: a unit's env workers must not pin themselves onto the same cores
    os.environ.setdefault(PIN_WORKERS_ENV, "0")

    from benchgen.registry import get_registry

    rundir = RunDir(run_dir)
    try:
        with rundir.unit_lock(unit_id):
            execute_unit(rundir, resolve_from_meta(get_registry(), rundir.record()), unit_id)
    except StopRequested:
        sys.exit(130)


def run_parallel(run_dir: RunDir, r: ResolvedRun, progress) -> None:
    """Up to ``jobs`` units at once, one process each. A process that dies is retried from its
    checkpoint."""
    ctx = multiprocessing.get_context("spawn")  # no fork: torch and emulators hold threads
    running: dict[str, multiprocessing.Process] = {}
    try:
        while True:
            if STOP.requested:  # SIGINT/SIGTERM: the finally below stops the units, which save first
                raise StopRequested("run")
            store = run_dir.store()
            try:
                _poll_progress(store, running, progress)
                for unit_id, proc in list(running.items()):
                    if proc.is_alive():
                        continue
                    del running[unit_id]
                    if progress is not None:
                        stored = store.unit(unit_id)
                        progress.finish_unit(
                            unit_id,
                            frames=stored.frames_done,
                            episodes=store.count_episodes(unit_id),
                            recent=store.recent_mean(unit_id),
                            done=stored.status == "done",
                        )
                    if proc.exitcode == 130:
                        raise StopRequested(unit_id)
                    if proc.exitcode != 0:
                        count_retry(store, store.unit(unit_id), r.run.max_retries, f"exit code {proc.exitcode}")
                ready = [u for u in ready_units(store) if u.unit_id not in running]
                if not ready and not running:
                    return
                for unit in ready[: max(0, r.run.jobs - len(running))]:
                    threads = max(1, cpu_count() // r.run.jobs)
                    proc = ctx.Process(
                        target=_unit_process, args=(str(run_dir.path), unit.unit_id, threads, os.getpid()), daemon=False
                    )
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


def _poll_progress(store, running, progress) -> None:
    if progress is None:
        return
    for unit_id in running:
        progress.update_unit(
            unit_id, store.unit(unit_id).frames_done, store.count_episodes(unit_id), store.recent_mean(unit_id)
        )
