"""The data-parallel engine's process group meets on the node's address alone (issue 27 item 7):
on a local Ray instance (node address 127.0.0.1) nothing it opens listens beyond loopback, where
torch's ``TCPStore`` server on its own binds every interface."""

from __future__ import annotations

import os
import sys

import pytest
import torch.distributed as dist

from benchgen_agents.data_parallel import rendezvous
from benchgen_agents.data_parallel.engine import DataParallelWorker, WorkerProgram

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/net/tcp")


class _Program(WorkerProgram):
    def setup(self, env, rank, world_size, averager, state, seed):
        self.ready = True

    def play_round(self, plan):
        return {}

    def state(self):
        return None


class _Env:
    num_envs = 1


def _listening() -> list[str]:
    """This process's listening TCP sockets, as ``/proc/net/tcp{,6}`` writes their local address."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in f.read().splitlines()[1:]:
                fields = line.split()
                if fields[3] == "0A" and fields[9] in inodes:
                    found.append(fields[1].rpartition(":")[0])
    return found


def test_the_process_group_of_a_local_instance_listens_on_loopback_only(monkeypatch):
    ray = pytest.importorskip("ray")
    monkeypatch.setattr(ray.util, "get_node_ip_address", lambda: "127.0.0.1")
    monkeypatch.delenv("GLOO_SOCKET_IFNAME", raising=False)
    monkeypatch.delenv("NCCL_SOCKET_IFNAME", raising=False)
    before = set(_listening())
    worker = DataParallelWorker(_Program(), lambda *a, **k: (_Env(), None), 0, 1, 1, 0, 1)
    host, port = worker.address()
    try:
        worker.join(host, port, None, 30.0)
        assert worker.program.ready
        opened = [addr for addr in _listening() if addr not in before]
        assert opened, "the store listens somewhere"
        loopback = {"0100007F", "00000000000000000000000001000000"}  # 127.0.0.1, ::1
        assert set(opened) <= loopback, opened
        assert os.environ["GLOO_SOCKET_IFNAME"] == rendezvous._loopback_interface()
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()
