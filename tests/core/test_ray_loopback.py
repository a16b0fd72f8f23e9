"""A local Ray instance (``--executor ray`` without ``--address``, or an agent's ``ctx.ray()``)
listens on loopback only: no Ray process of it accepts connections from the network."""

from __future__ import annotations

import ipaddress
import json
import os
import signal
import subprocess
import sys

import pytest

from tests.conftest import REPO, cli_env

pytest.importorskip("ray")

# Runs in a subprocess so the instance is torn down with it. It starts the instance through
# benchgen's own connect(), makes Ray start a worker, waits until the agents that bind late (their
# HTTP/gRPC servers start after the raylet registers them) listen, then prints every listening TCP
# socket of the processes the instance started (all are descendants of this driver).
_DRIVER = r"""
import json, sys, time
import ray  # first: Ray puts its bundled psutil on sys.path
import psutil
from ray._private.utils import get_dashboard_dependency_error
from benchgen.run.execution.ray_connect import connect

connect(None, 0, 0)
try:
    @ray.remote
    def ping():
        return 0
    ray.get(ping.remote(), timeout=120)  # a worker of its own, besides this driver
    me = psutil.Process()
    wanted = ["gcs_server", "raylet", "RuntimeEnvAgent", "ray::IDLE"]
    if get_dashboard_dependency_error() is None:  # ray[default]: its dashboard agent serves too
        wanted.append("DashboardAgent")
    deadline = time.time() + 60
    while True:
        procs = {p.pid: p for p in me.children(recursive=True)}
        procs[me.pid] = me
        listening = []
        for c in psutil.net_connections(kind="tcp"):
            if c.status == psutil.CONN_LISTEN and c.pid in procs:
                try:
                    name = " ".join(procs[c.pid].cmdline()).strip()[:100]
                except psutil.Error:
                    continue
                listening.append([c.laddr.ip, c.laddr.port, name])
        names = " ".join(n for _, _, n in listening)
        if all(w in names for w in wanted) or time.time() > deadline:
            break
        time.sleep(0.5)
    print("WANTED " + json.dumps(wanted))
    print("LISTENING " + json.dumps(listening))
finally:
    ray.shutdown()
"""


def _is_loopback(ip: str) -> bool:
    addr = ipaddress.ip_address(ip.split("%")[0])
    mapped = getattr(addr, "ipv4_mapped", None)  # ::ffff:127.0.0.1, a dual-stack socket on loopback
    return (mapped or addr).is_loopback


def test_local_ray_instance_listens_on_loopback_only():
    proc = subprocess.Popen(
        [sys.executable, "-c", _DRIVER],
        env=cli_env(),
        cwd=REPO,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # its own session: the driver and what Ray started
        stdout, stderr = proc.communicate()
        pytest.fail(f"local Ray instance did not come up in 300 s: {stderr[-2000:]}")
    assert proc.returncode == 0, stderr[-3000:]
    printed = dict(ln.split(" ", 1) for ln in stdout.splitlines() if ln.startswith(("WANTED ", "LISTENING ")))
    listening, wanted = json.loads(printed["LISTENING"]), json.loads(printed["WANTED"])
    names = " ".join(name for _, _, name in listening)
    # the check means something only if the instance's servers were up when the sockets were
    # listed: Ray's own, its workers', and the dashboard agent's where ray[default] is installed
    # (the minimal install runs that agent without servers)
    assert {"gcs_server", "raylet", "RuntimeEnvAgent", "ray::IDLE"} <= set(wanted)
    for part in wanted:
        assert part in names, f"{part} not listening: {listening}"
    exposed = [(ip, port, name) for ip, port, name in listening if not _is_loopback(ip)]
    assert not exposed, f"Ray listens beyond loopback: {exposed}"
