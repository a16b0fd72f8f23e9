"""Sweeps on a Ray cluster (``benchgen run ... --executor ray [--address ADDR]``).

Ray is an optional extra (``pip install 'benchgen[ray]'``); only this module imports it, and
agents that use Ray themselves (Ape-X) get it connected through ``TrainingContext.ray``.

The driver (the ``benchgen`` process) owns the run's results store, the single source of truth.
Each unit runs as a Ray task on whatever node has the resources it asks for
(``cpus_per_unit``, ``gpus_per_unit``); the task streams its episode records, frame counter and
checkpoint rows back through a Ray queue, and the driver commits them. Checkpoint files are
written under the run directory, which must therefore be on storage every node can reach (a
shared filesystem on a cluster; trivially true on one machine).

A task whose worker dies is retried from the unit's last committed checkpoint, with the unit's
committed frame counter and episode numbers, so no episode is lost or recorded twice.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from typing import Any

from benchgen.cpu_affinity import PIN_WORKERS_ENV
from benchgen.errors import UsageError
from benchgen.results.rundir import RunDir
from benchgen.results.store import EpisodeTally, ResultsStore, Unit
from benchgen.run.plan import ResolvedRun, resolve_from_meta
from benchgen.run.schedule import count_retry, ready_units
from benchgen.run.unit import execute_unit


def _ray(otherwise: str = " or use --executor local"):
    try:
        import ray
    except ImportError:
        raise UsageError(f"Ray is not installed; install it with `pip install 'benchgen[ray]'`{otherwise}")
    return ray


def connect(address: str | None, cpus_per_unit: float, gpus_per_unit: float) -> None:
    """Start or join Ray and check that some node can run a unit; one-line errors otherwise."""
    ray = _ray()
    if ray.is_initialized():
        return
    env_vars = {
        k: os.environ[k]
        for k in ("BENCHGEN_PLUGINS", "PYTHONPATH", "BENCHGEN_DISABLE_PLUGIN_AUTOLOAD")
        if k in os.environ
    }
    if address not in (None, "auto", "local"):
        _check_reachable(address)
    kwargs: dict[str, Any] = {}
    local = address in (None, "local")
    if local:
        kwargs["_node_ip_address"] = "127.0.0.1"  # a local instance stays on loopback
        # "local": a fresh instance even if `ray start` left one on this machine or RAY_ADDRESS
        # names one (ray.init(address=None) would join those); --address auto joins them
        address = "local"
    try:
        with _loopback_only() if local else contextlib.nullcontext():
            ray.init(
                address=address,
                include_dashboard=False,
                log_to_driver=True,
                logging_level="ERROR",
                configure_logging=True,
                runtime_env={"env_vars": env_vars} if env_vars else None,
                **kwargs,
            )
    except (ConnectionError, RuntimeError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UsageError(
            f"cannot reach a Ray cluster at '{address}' ({first}); start one with `ray start --head` "
            "or omit --address for a local instance"
        )
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    if local and any(n.get("NodeManagerAddress") != "127.0.0.1" for n in nodes):
        # this Ray version placed the instance on a routable address despite _loopback_only:
        # refuse rather than run reachable from the network
        where = ", ".join(sorted({str(n.get("NodeManagerAddress")) for n in nodes}))
        ray.shutdown()
        raise UsageError(
            f"Ray {ray.__version__} started its local instance on {where}, not 127.0.0.1, so it "
            "would be reachable from the network; pass --address to a Ray cluster you started"
        )
    fits = [
        n
        for n in nodes
        if n["Resources"].get("CPU", 0) >= cpus_per_unit and n["Resources"].get("GPU", 0) >= gpus_per_unit
    ]
    if not fits:
        have = ", ".join(f"{n['Resources'].get('CPU', 0):g} CPU/{n['Resources'].get('GPU', 0):g} GPU" for n in nodes)
        ray.shutdown()
        raise UsageError(
            f"no Ray node can give a unit {cpus_per_unit:g} CPU and {gpus_per_unit:g} GPU (nodes: {have}); "
            "lower cpus_per_unit/gpus_per_unit or add nodes"
        )


@contextlib.contextmanager
def _loopback_only():
    """While a local instance starts, keep Ray from replacing ``_node_ip_address="127.0.0.1"``
    with this machine's routable address.

    ``ray.init`` passes the node address through ``resolve_ip_for_localhost``, which maps
    loopback to the routable address unless Ray clusters are disabled (Ray's own default on
    macOS and Windows, ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``). The environment variable is read
    once, when Ray is first imported, so the flag it sets is switched instead, for this call
    only. With the node address on loopback, every process Ray starts binds to it: GCS, raylet
    and object manager, workers, the dashboard and runtime-env agents and the metrics exporters
    (each binds 127.0.0.1 when its node address is local, all interfaces otherwise); the
    dashboard web UI is not started (``include_dashboard=False``).
    """
    try:
        from ray._private import ray_constants as constants
    except ImportError:
        constants = None
    if not hasattr(constants, "ENABLE_RAY_CLUSTER"):  # another Ray layout: connect's check decides
        yield
        return
    saved, constants.ENABLE_RAY_CLUSTER = constants.ENABLE_RAY_CLUSTER, False
    try:
        yield
    finally:
        constants.ENABLE_RAY_CLUSTER = saved


def connect_for_agent() -> tuple[Any, bool]:
    """``ray``, connected, for an agent of a unit (``TrainingContext.ray``): the cluster this
    process already belongs to (a unit of ``--executor ray``), else a fresh local instance on
    loopback (:func:`connect`); and whether this call started that instance (its caller stops it)."""
    ray = _ray(otherwise="")  # the agent needs it: no executor can do without
    if ray.is_initialized():
        return ray, False
    connect(None, 0, 0)
    return ray, True


def _check_reachable(address: str, timeout: float = 3.0) -> None:
    """Ray retries an unreachable GCS for minutes; a plain TCP connect answers at once."""
    import socket

    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise UsageError(f"Ray address '{address}' is not HOST:PORT (or 'auto' for a running cluster)")
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as exc:
        raise UsageError(
            f"cannot reach a Ray cluster at '{address}' ({exc.strerror or exc}); start it with "
            "`ray start --head` on that node, or omit --address for a local instance"
        )


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


def _remote_unit(run_dir: str, unit: Unit, next_episodes: dict[str, int], queue, tally: list[EpisodeTally]) -> str:
    """A Ray task: run one unit, streaming its records to the driver."""
    from benchgen.registry import get_registry

    os.environ[PIN_WORKERS_ENV] = "0"  # units share Ray's nodes: none pins env workers to cores
    rundir = RunDir(run_dir)
    rundir.write_pid_file(unit.unit_id)
    r = resolve_from_meta(get_registry(), rundir.meta())
    store = StreamingStore(unit, next_episodes, queue, tally)
    try:
        execute_unit(rundir, r, unit.unit_id, store=store)
    finally:
        store.close()  # finished episodes reach the driver even if the unit raised
    return unit.unit_id


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
    """Run every unfinished unit as a Ray task; commit what they stream; retry dead workers."""
    ray = _ray()
    from ray.util.queue import Queue

    connect(r.run.ray_address, r.run.cpus_per_unit, r.run.gpus_per_unit)
    remote = ray.remote(max_retries=0)(_remote_unit)
    queue = Queue()
    store = run_dir.store()
    futures: dict[Any, str] = {}
    counts: dict[str, int] = {}
    try:
        while True:
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
                    count_retry(store, store.unit(unit_id), r.run.max_retries, why)
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
