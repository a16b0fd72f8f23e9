"""The ``device`` setting shared by the torch agents: checked when the run's config is resolved,
before anything is written, and turned into a ``torch.device`` when the agent is built.

torch is imported where it is used: the agents' config modules import this one, and listing
suites and agents (``benchgen list``) must not pay for torch."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from benchgen.errors import UsageError
from benchgen.machine import cpu_count

#: the ``precision`` settings of the agents' networks: float32 (the papers') or bfloat16 matrix products
PRECISIONS = ("float32", "bfloat16")

if TYPE_CHECKING:
    import torch


def check_device(name: str) -> None:
    """Refuse, in one line, a device that is misspelled or that this machine does not have."""
    if not (name in ("auto", "cpu", "cuda") or (name.startswith("cuda:") and name[5:].isdigit())):
        raise UsageError(f"device must be 'auto', 'cpu', 'cuda' or 'cuda:N', not {name!r}")
    if name.startswith("cuda"):
        import torch

        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        index = int(name[5:]) if ":" in name else 0
        if index >= count:
            have = f"{count} CUDA device{'s' * (count != 1)}" if count else "no CUDA device"
            raise UsageError(f"device={name} but torch sees {have}; use device=auto or device=cpu")


def pick_device(name: str) -> torch.device:
    """A checked device; "auto": CUDA when available, else CPU."""
    import torch

    check_device(name)
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def device_kind(config: Any) -> str:
    """``AgentSpec.device`` of the torch agents: "cuda" for a ``device`` setting of "cuda" or
    "cuda:N", or of "auto" where torch sees a CUDA device; "cpu" otherwise. torch is imported
    only for "auto"."""
    name = str(config.device)
    if name == "auto":
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    return "cuda" if name.startswith("cuda") else "cpu"


def cpu_threads(requested: int = 0) -> int:
    """torch's CPU threads for an agent that steps its environment on the same thread between
    its updates: ``requested`` if given, else ``OMP_NUM_THREADS`` (the share a runner gives a
    unit, ``--jobs``), else every core this process may use but one, left to the emulator.

    Why not every core: torch's OpenMP workers spin-wait after each parallel region, and while
    the emulator steps they hold the core it needs. Measured on the 2-core development machine,
    Data-Efficient Rainbow's update took 19 ms with 2 threads and 25 ms with 1 when the machine
    was otherwise idle, but 306 ms with 2 threads beside one other busy process (a test run),
    where 1 thread stays at 25 ms; ``OMP_WAIT_POLICY=PASSIVE`` must be set before torch starts and
    cost 1.5x on the idle machine (28.6 ms). Leaving a core to the emulator keeps the spinning
    threads off it (``benchmarks/bench_value_e2e.py`` measures the loop against its parts)."""
    if requested:
        return requested
    share = int(os.environ.get("OMP_NUM_THREADS", "0") or 0)
    if share > 0:
        return share
    return max(1, cpu_count() - 1)
