"""Pinning a vector env's worker processes to distinct, idle CPUs.

A synchronous vector env with one worker process per sub-environment waits for its slowest
worker on every step. Linux wakes a worker on whichever CPU the scheduler picks; with as many
workers as cores it regularly queues two workers on one core while another core idles (the
waiting worker is "cache hot" and is not migrated), and that step then takes twice as long.
Pinning worker ``i`` to its own CPU removes those stalls (Sample Factory pins its workers the
same way). On the 2-core development machine this raised the Sonic suite's 2-worker throughput
from 0.81 to about 0.9 of two free-running emulators.

Pinning is only safe when this process owns the CPUs it picks, so it is skipped when
``BENCHGEN_PIN_WORKERS=0`` (the parallel executors set it for their unit processes, which share
the machine) and for fewer than two workers or more workers than usable CPUs. Among the CPUs this
process may use, the most idle ones (sampled from ``/proc/stat``) are chosen, so two separate runs
started one after the other land on different cores.

Written by hand: ``os.sched_setaffinity`` is the whole mechanism, and the only library offering
per-CPU idle times (psutil) is not otherwise a dependency; the ``/proc/stat`` read is a few lines.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence

#: environment variable that turns worker pinning off when set to "0"
PIN_WORKERS_ENV = "BENCHGEN_PIN_WORKERS"


def _idle_ticks() -> dict[int, int]:
    """Idle + iowait clock ticks per CPU since boot (Linux ``/proc/stat``)."""
    ticks: dict[int, int] = {}
    with open("/proc/stat") as handle:
        for line in handle:
            name, *fields = line.split()
            if name.startswith("cpu") and name != "cpu":
                ticks[int(name[3:])] = int(fields[3]) + int(fields[4])
    return ticks


def most_idle_cpus(count: int, allowed: Sequence[int], sample_seconds: float = 0.05) -> list[int]:
    """The ``count`` CPUs of ``allowed`` that were the most idle over ``sample_seconds``
    (``allowed`` order where ``/proc/stat`` cannot be read)."""
    try:
        before = _idle_ticks()
        time.sleep(sample_seconds)
        after = _idle_ticks()
    except (OSError, ValueError, IndexError):
        return list(allowed)[:count]
    idle = {cpu: after.get(cpu, 0) - before.get(cpu, 0) for cpu in allowed}
    return sorted(allowed, key=lambda cpu: -idle[cpu])[:count]


def pin_workers(pids: Sequence[int]) -> list[int] | None:
    """Pin process ``pids[i]`` to a CPU of its own; returns the CPUs, or None when not pinned
    (see the module docstring for when pinning is skipped)."""
    if os.environ.get(PIN_WORKERS_ENV, "1") == "0" or not hasattr(os, "sched_setaffinity"):
        return None
    allowed = sorted(os.sched_getaffinity(0))
    if not 2 <= len(pids) <= len(allowed):
        return None
    cpus = most_idle_cpus(len(pids), allowed)
    try:
        for pid, cpu in zip(pids, cpus):
            os.sched_setaffinity(pid, {cpu})
    except OSError:  # a worker already gone, or a sandbox refusing affinity changes
        return None
    return cpus
