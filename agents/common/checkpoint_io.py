"""Checkpoint files the shared agents write and read: tensors and JSON only, never pickled objects.

A checkpoint directory can come from anyone (``--from DIR``, a shared or copied run directory),
so loading one must not run code. ``torch.load`` unpickles; with ``weights_only=True`` its
unpickler accepts only tensors, dicts, lists, tuples, strings and numbers, and refuses any other
global (a ``__reduce__`` payload, a cloudpickled function). :func:`load_tensors` is the one place
the agents call it, and turns every failure (pickled objects, a damaged or truncated file, a
directory) into a one-line :class:`~benchgen.errors.UsageError`. JSON files go through
:func:`load_json`; :func:`refusing_bad_state` does the same for state that loads but does not fit
the agent. Writers go through a temporary file and a rename, so a reader never sees half a file.
torch is imported by the tensor functions only: the replay (numpy only) uses the rest.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import uuid
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from benchgen.errors import UsageError

#: what to do about a checkpoint file that cannot be loaded
REFUSED_HINT = "start from a checkpoint written by this version of benchgen (or retrain)"


def _write_atomically(path: Path, write) -> None:
    path = Path(path)
    # open(), not mkstemp: the file gets the umask's permissions (mkstemp's are 0600), as a plain write would
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        with open(tmp, "xb") as handle:
            write(handle)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def save_tensors(obj: dict[str, Any], path: Path) -> None:
    """``torch.save`` ``obj`` (tensors, state dicts, numbers, strings) to ``path``, atomically."""
    import torch

    _write_atomically(path, lambda handle: torch.save(obj, handle))


def save_json(obj: Any, path: Path, indent: int | None = None) -> None:
    """Write ``obj`` as JSON to ``path``, atomically."""
    _write_atomically(path, lambda handle: handle.write(json.dumps(obj, indent=indent).encode()))


def _first_line(exc: BaseException) -> str:
    """The message's first line, with the next one when the first only announces it (torch's
    "Error(s) in loading state_dict for X:" is followed by the keys that differ)."""
    lines = [s.strip() for s in str(exc).splitlines() if s.strip()] or [type(exc).__name__]
    line = f"{lines[0]} {lines[1]}" if lines[0].endswith(":") and len(lines) > 1 else lines[0]
    return line if len(line) <= 200 else line[:197] + "..."


def load_tensors(path: Path, what: str, keys: Iterable[str] = (), hint: str = REFUSED_HINT) -> dict[str, Any]:
    """The dict of tensors saved at ``path`` by :func:`save_tensors`, loaded on the CPU.

    ``what`` names the file in messages ("PPO checkpoint"); the dict must hold ``keys``. Anything
    else is a one-line ``UsageError`` that ends with ``hint``: nothing in the file is executed.
    """
    import torch

    path = Path(path)
    try:
        with warnings.catch_warnings():
            # torch warns (on stderr) about the pickle protocol of a legacy or foreign file it then refuses
            warnings.simplefilter("ignore")
            obj = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:
        # torch's message is several lines about weights_only=False, which is exactly what must not be done
        raise UsageError(
            f"{what} {path} holds pickled Python objects or is not a torch file, and benchgen loads "
            f"tensors only; {hint}"
        ) from None
    except Exception as exc:  # noqa: BLE001 - whatever a damaged or crafted file raises, refuse it in one line
        raise UsageError(f"{what} {path} cannot be read ({_first_line(exc)}); {hint}") from None
    missing = [k for k in keys if not (isinstance(obj, dict) and k in obj)]
    if missing:
        raise UsageError(f"{what} {path} does not hold {', '.join(missing)}; {hint}")
    return obj


def load_json(path: Path, what: str, hint: str = REFUSED_HINT) -> dict[str, Any]:
    """The JSON object in ``path``; a missing, unreadable or non-object file is a one-line ``UsageError``."""
    path = Path(path)
    try:
        obj = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise UsageError(f"{what} {path} cannot be read ({_first_line(exc)}); {hint}") from None
    if not isinstance(obj, dict):
        raise UsageError(f"{what} {path} is not a JSON object; {hint}")
    return obj


@contextlib.contextmanager
def refusing_bad_state(what: str, path: Path, hint: str) -> Iterator[None]:
    """Turn what applying loaded state raises (``load_state_dict`` on tensors of other names or shapes,
    an RNG state of the wrong type, a missing JSON key, a missing or pickled ``.npy``) into a one-line
    ``UsageError`` ending with ``hint``."""
    try:
        yield
    except (OSError, RuntimeError, ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
        # torch's load_state_dict lists every mismatched tensor, over many lines: keep the first
        raise UsageError(f"{what} {path} cannot be used here ({_first_line(exc)}); {hint}") from None
