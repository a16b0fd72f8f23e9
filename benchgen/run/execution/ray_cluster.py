"""Sweeps on a Ray cluster (``benchgen run ... --executor ray [--address ADDR]``).

Ray is an optional extra (``pip install 'benchgen[ray]'``); only this module and
:mod:`benchgen.run.execution.ray_connect` (starting or joining Ray, for this executor and for agents that
use Ray themselves, such as Ape-X, through ``TrainingContext.ray``) import it.

The driver (the ``benchgen`` process) owns the run's results store, the single source of truth.
Each unit runs as a Ray task on whatever node has the resources it asks for
(``cpus_per_unit``, ``gpus_per_unit``); the task streams its episode records, frame counter and
checkpoint rows back through a Ray queue, and the driver commits them. Checkpoint files are
written under the run directory, which must therefore be on storage every node can reach (a
shared filesystem on a cluster; trivially true on one machine).

A task whose worker dies is retried from the unit's last committed checkpoint, with the unit's
committed frame counter and episode numbers, so no episode is lost or recorded twice.

SIGINT and SIGTERM reach the driver alone (never the processes on a cluster's nodes), so the
driver passes the stop on through a Ray actor its units poll (:class:`StopSignal`): each unit
stops at its next step and saves a checkpoint, as a unit of the local executor does, and the run
exits 130, ready for ``benchgen resume``.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any

from benchgen.cpu_affinity import PIN_WORKERS_ENV
from benchgen.results.rundir import RunDir
from benchgen.results.store import EpisodeTally, ResultsStore, Unit
from benchgen.run.execution.ray_connect import _ray, connect
from benchgen.run.execution.schedule import count_retry, ready_units
from benchgen.run.execution.signals import STOP, StopRequested
from benchgen.run.execution.unit import execute_unit
from benchgen.run.planning.plan import ResolvedRun, resolve_from_meta

#: seconds the units of a stopped run get to reach their next step and save; past them the driver
#: stops waiting, Ray ends the tasks, and a resume restarts them from their last committed checkpoint
STOP_GRACE = 60.0


class StreamingStore:
    """What a remote unit writes instead of the SQLite store: a
    :class:`~benchgen.results.store.UnitStore` whose writes go to the driver through a Ray queue."""

    #: seconds between sends of finished episodes (one queue call per batch, not per episode)
    flush_interval = 0.5

    def __init__(self, unit: Unit, next_episodes: dict[str, int], queue, tally: list[EpisodeTally] = ()):
        self._unit = unit
        self._next = dict(next_episodes)
        self._tally = list(tally)
        self._queue = queue
        self._pending: list[dict] = []
        self._last_flush = time.monotonic()

    def _send(self, *message: Any) -> None:
        self._flush()
        self._queue.put(message)  # blocks until the queue actor holds it

    def _flush(self) -> None:
        # Episodes are committed in batches together with the frame counter at the batch's last
        # episode, so a worker that dies between two flushes resumes from a consistent point.
        if self._pending:
            self._queue.put(("episodes", self._unit.unit_id, self._pending, self._pending[-1]["frames_total"]))
            self._pending = []
        self._last_flush = time.monotonic()

    def unit(self, unit_id: str) -> Unit:
        return self._unit

    def next_episode_numbers(self, unit_id: str) -> dict[str, int]:
        return dict(self._next)

    def episode_tally(self, unit_id: str) -> list[EpisodeTally]:
        return list(self._tally)

    def update_unit(self, unit_id: str, **fields: Any) -> None:
        for key, value in fields.items():
            if hasattr(self._unit, key):
                setattr(self._unit, key, value)
        self._send("update", unit_id, fields)

    def record_episodes(self, unit: Unit, records: list[dict], frames_done: int) -> None:
        self._unit.frames_done = frames_done
        self._pending.extend(records)
        if time.monotonic() - self._last_flush >= self.flush_interval:
            self._flush()

    def record_checkpoint(self, unit_id: str, frames: int, path: str) -> None:
        self._unit.last_checkpoint, self._unit.last_checkpoint_frames = path, frames
        self._send("checkpoint", unit_id, frames, path)

    def close(self) -> None:
        self._flush()


class StopSignal:
    """A Ray actor holding the driver's stop request (its SIGINT/SIGTERM), polled by its units."""

    def __init__(self):
        self._requested = False

    def request(self) -> None:
        self._requested = True

    def requested(self) -> bool:
        return self._requested


def _watch_stop(stop, unit_over: threading.Event, every: float = 0.5) -> None:
    """A unit's thread: turn the driver's stop request into this process's :data:`STOP` flag,
    which the unit reads at every step (it then saves a checkpoint and stops)."""
    ray = _ray()
    while not unit_over.wait(every):
        try:
            requested = ray.get(stop.requested.remote())
        except ray.exceptions.RayError:  # the actor is gone with the driver: the run is over
            requested = True
        if requested:
            STOP.requested = True
            return


def _remote_unit(
    run_dir: str, unit: Unit, next_episodes: dict[str, int], queue, tally: list[EpisodeTally], stop
) -> bool:
    """A Ray task: run one unit, streaming its records to the driver; whether it finished (False:
    it stopped at the driver's request, its checkpoint saved)."""
    from benchgen.registry import get_registry

    os.environ[PIN_WORKERS_ENV] = "0"  # units share Ray's nodes: none pins env workers to cores
    STOP.requested = False  # (a worker process Ray reuses keeps the flag of an earlier task)
    rundir = RunDir(run_dir)
    rundir.write_pid_file(unit.unit_id)
    r = resolve_from_meta(get_registry(), rundir.record())
    store = StreamingStore(unit, next_episodes, queue, tally)
    unit_over = threading.Event()
    threading.Thread(target=_watch_stop, args=(stop, unit_over), daemon=True).start()
    try:
        execute_unit(rundir, r, unit.unit_id, store=store)
    except StopRequested:
        return False
    finally:
        unit_over.set()
        store.close()  # finished episodes reach the driver even if the unit raised
    return True


def _commit(store: ResultsStore, message: tuple, progress, counts: dict[str, int]) -> None:
    kind, unit_id = message[0], message[1]
    if kind == "episodes":
        records, frames_done = message[2], message[3]
        store.record_episodes(store.unit(unit_id), records, frames_done)
        counts[unit_id] = counts.get(unit_id, 0) + len(records)
        if progress is not None:
            scores = [r["score"] for r in records]
            progress.update_unit(unit_id, frames_done, counts[unit_id], sum(scores) / len(scores))
    elif kind == "checkpoint":
        store.record_checkpoint(unit_id, message[2], message[3])
    elif kind == "update":
        store.update_unit(unit_id, **message[2])


def _drain(queue, store, progress, counts) -> None:
    while not queue.empty():
        _commit(store, queue.get(), progress, counts)


def run_ray(run_dir: RunDir, r: ResolvedRun, progress) -> None:
    """Run every unfinished unit as a Ray task; commit what they stream; retry dead workers; on
    SIGINT/SIGTERM have every unit save and stop, then raise :class:`StopRequested`."""
    ray = _ray()
    from ray.util.queue import Queue

    connect(r.run.ray_address, r.run.cpus_per_unit, r.run.gpus_per_unit)
    remote = ray.remote(max_retries=0)(_remote_unit)
    queue = Queue()
    stop = ray.remote(num_cpus=0)(StopSignal).remote()
    stop_by: float | None = None  # once stopping: when the units must have saved
    store = run_dir.store()
    futures: dict[Any, str] = {}
    counts: dict[str, int] = {}
    try:
        while True:
            if STOP.requested and stop_by is None:
                stop.request.remote()
                stop_by = time.monotonic() + STOP_GRACE
            if futures:
                done, _ = ray.wait(list(futures), num_returns=1, timeout=0.2)
            else:
                done = []
            _drain(queue, store, progress, counts)
            for ref in done:
                unit_id = futures.pop(ref)
                if progress is not None:
                    stored = store.unit(unit_id)
                    progress.finish_unit(unit_id, frames=stored.frames_done, done=stored.status == "done")
                try:
                    ray.get(ref)
                except ray.exceptions.RayError as exc:
                    _drain(queue, store, progress, counts)
                    lines = [ln for ln in str(exc).strip().splitlines() if ln.strip()]
                    why = f"{type(exc).__name__}: {lines[-1] if lines else ''}"
                    if stop_by is None:  # (a unit lost while the run stops resumes like a stopped one)
                        count_retry(store, store.unit(unit_id), r.run.max_retries, why)
            if stop_by is not None:
                if futures and time.monotonic() < stop_by:
                    continue
                for ref in futures:  # past the grace: their last committed checkpoints stand
                    ray.cancel(ref, force=True)
                raise StopRequested("run")
            busy = set(futures.values())
            ready = [u for u in ready_units(store) if u.unit_id not in busy]
            if not ready and not futures:
                return
            for unit in ready:
                options = {"num_cpus": r.run.cpus_per_unit, "num_gpus": r.run.gpus_per_unit}
                ref = remote.options(**options).remote(
                    str(run_dir.path),
                    unit,
                    store.next_episode_numbers(unit.unit_id),
                    queue,
                    store.episode_tally(unit.unit_id),
                    stop,
                )
                futures[ref] = unit.unit_id
                if progress is not None:
                    progress.start_unit(unit.unit_id, unit.label, unit.budget_frames, unit.frames_done)
    except KeyboardInterrupt:
        for ref in futures:
            ray.cancel(ref, force=True)
        raise
    finally:
        store.close()
        ray.shutdown()  # disconnects from a cluster; stops a local instance
        sys.stdout.flush()
