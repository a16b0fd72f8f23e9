"""Starting or joining Ray: for the Ray executor (:mod:`benchgen.run.execution.ray_cluster`) and for
agents that use Ray themselves (``TrainingContext.ray``, e.g. Ape-X), whichever executor runs
their unit. Ray is an optional extra (``pip install 'benchgen[ray]'``); only this module and the
Ray executor import it.

A local instance listens on 127.0.0.1 only (docs/ARCHITECTURE.md, "Sockets").
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

from benchgen.errors import UsageError
from benchgen.run.execution.signals import stop_handlers_kept


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
        # Ray's own SIGTERM handlers (exit, or abort in its C++ core) would end a run half-way
        with stop_handlers_kept(), _loopback_only() if local else contextlib.nullcontext():
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
