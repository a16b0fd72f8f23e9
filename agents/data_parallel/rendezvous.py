"""Where a data-parallel group's processes meet: the ``torch.distributed`` store on the node's
address alone (issue 27 item 7), and the collectives kept on the loopback interface on a local
Ray instance. Used by :class:`benchgen_agents.data_parallel.engine.DataParallelWorker`."""

from __future__ import annotations

import datetime
import ipaddress
import os
import socket

import torch.distributed as dist


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def _loopback_interface() -> str:
    """The name of this machine's loopback interface (``lo`` on Linux, ``lo0`` on macOS)."""
    names = [name for _index, name in socket.if_nameindex()]
    return next((name for name in names if name.startswith("lo")), "lo")


def _listen(host: str) -> socket.socket:
    """A listening socket for the process group's store, bound to ``host`` only (torch's
    ``TCPStore`` server binds every interface when it opens its own socket)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.bind((host, 0))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


def rendezvous_store(host: str, port: int, rank: int, world_size: int, timeout_s: float, listener=None):
    """The process group's ``TCPStore``: rank 0 serves it on ``listener`` (a socket bound to
    ``host`` alone, see :func:`_listen`), the other ranks connect to ``host:port``. On a loopback
    ``host`` (a local Ray instance) the collectives' own sockets are kept on the loopback
    interface too (``GLOO_SOCKET_IFNAME``/``NCCL_SOCKET_IFNAME``, unless already set)."""
    if _is_loopback(host):
        interface = _loopback_interface()
        os.environ.setdefault("GLOO_SOCKET_IFNAME", interface)
        os.environ.setdefault("NCCL_SOCKET_IFNAME", interface)
    timeout = datetime.timedelta(seconds=timeout_s)
    if rank == 0:
        if listener is None:
            raise RuntimeError("rank 0 serves the store on the socket its address() call opened")
        return dist.TCPStore(host, port, world_size, True, timeout=timeout, master_listen_fd=listener.fileno())
    return dist.TCPStore(host, port, world_size, False, timeout=timeout)
