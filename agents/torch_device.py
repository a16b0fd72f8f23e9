"""The ``device`` setting shared by the torch agents: checked when the run's config is resolved,
before anything is written, and turned into a ``torch.device`` when the agent is built."""

from __future__ import annotations

import torch

from benchgen.errors import UsageError


def check_device(name: str) -> None:
    """Refuse, in one line, a device that is misspelled or that this machine does not have."""
    if not (name in ("auto", "cpu", "cuda") or (name.startswith("cuda:") and name[5:].isdigit())):
        raise UsageError(f"device must be 'auto', 'cpu', 'cuda' or 'cuda:N', not {name!r}")
    if name.startswith("cuda"):
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        index = int(name[5:]) if ":" in name else 0
        if index >= count:
            have = f"{count} CUDA device{'s' * (count != 1)}" if count else "no CUDA device"
            raise UsageError(f"device={name} but torch sees {have}; use device=auto or device=cpu")


def pick_device(name: str) -> torch.device:
    """A checked device; "auto": CUDA when available, else CPU."""
    check_device(name)
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)
