"""What machine this is, as a run records it and the planner matches measured speeds to it.

Two machines with the same core count can run an agent at speeds 2-3x apart (the development
machine's Atari 100K games took that much longer after it moved from an AMD EPYC to an Intel
Xeon host), so a measured speed names the processor it was measured on and a run records the
one it ran on. Read from ``/proc/cpuinfo`` where there is one (Linux), else from
:func:`platform.processor`: the standard library names no CPU model on Linux.
"""

from __future__ import annotations

import functools
import os
import platform
from pathlib import Path

CPUINFO = Path("/proc/cpuinfo")


@functools.cache
def processor_name() -> str:
    """This machine's CPU model ("Intel(R) Xeon(R) Processor", "AMD EPYC 7R13 Processor"); empty
    when the system does not say."""
    try:
        for line in CPUINFO.read_text(encoding="utf-8", errors="replace").splitlines():
            key, sep, value = line.partition(":")
            if sep and key.strip() == "model name" and value.strip():
                return value.strip()
    except OSError:
        pass
    return platform.processor().strip()


def cpu_count() -> int:
    """CPU cores this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def machine_facts() -> dict[str, object]:
    """What ``run.json`` records of a machine a run ran on (an entry of ``machines``)."""
    return {"processor": processor_name(), "cpus": cpu_count()}


def same_processor(named: str, name: str | None = None) -> bool:
    """Whether ``named`` (a speed row's processor: the model or a distinctive part of it, "AMD
    EPYC") names ``name`` (default: this machine's), case aside."""
    name = processor_name() if name is None else name
    return bool(named.strip()) and named.strip().lower() in name.lower()
