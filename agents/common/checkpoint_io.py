"""Checkpoint files the shared agents write and read: tensors and JSON only, never pickled objects.

A checkpoint directory can come from anyone (``--from DIR``, a shared or copied run directory),
so loading one must not run code. ``torch.load`` unpickles; with ``weights_only=True`` its
unpickler accepts only tensors, dicts, lists, tuples, strings and numbers, and refuses any other
global (a ``__reduce__`` payload, a cloudpickled function). :func:`load_tensors` is the one place
the agents call it, and turns every failure (pickled objects, a damaged or truncated file, a
directory) into a one-line :class:`~benchgen.errors.UsageError`. JSON files go through
:func:`load_json`; :func:`refusing_bad_state` does the same for state that loads but does not fit
the agent. Writers go through :func:`save_files` (:func:`save_tensors` and :func:`save_json`
call it, :func:`as_json` and :func:`as_npz` give it more kinds of file): each file is written to a temporary
file beside it, flushed to disk, and renamed into place only once all of the save's files are
written, so a save that fails or is interrupted leaves the previous files whole and no temporary
file behind, and a reader never sees half a file. torch is imported by the tensor functions only:
the replay (numpy only) uses the rest.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import uuid
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from benchgen.errors import UsageError

#: what to do about a checkpoint file that cannot be loaded
REFUSED_HINT = "start from a checkpoint written by this version of benchgen (or retrain)"


#: writes one checkpoint file into the open binary handle it is given
Writer = Callable[[BinaryIO], object]


def save_files(writers: Mapping[Path, Writer]) -> None:
    """Write the files of one save: ``writers[path](handle)`` fills a temporary file beside ``path``,
    which is flushed and synced; only when every file is written are they renamed into place (and
    their directories synced). A failure or an interrupt while writing leaves each old file as it
    was and removes the temporary files."""
    temps: dict[Path, Path] = {}
    try:
        for path, write in writers.items():
            path = Path(path)
            # open(), not mkstemp: the file gets the umask's permissions (mkstemp's are 0600), as a plain write would
            tmp = temps[path] = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
            with open(tmp, "xb") as handle:
                write(handle)
                handle.flush()
                os.fsync(handle.fileno())
        for path, tmp in temps.items():
            os.replace(tmp, path)
    except BaseException:
        for tmp in temps.values():
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
        raise
    for directory in {path.parent for path in temps}:
        with contextlib.suppress(OSError):  # (not every file system syncs a directory; the rename is done)
            fd = os.open(directory, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


def as_json(obj: Any, indent: int | None = None) -> Writer:
    """The :data:`Writer` of ``obj`` as JSON (``json.dumps``'s text, as ``Path.write_text`` wrote it)."""
    return lambda handle: handle.write(json.dumps(obj, indent=indent).encode())


def as_npz(arrays: Mapping[str, Any], compressed: bool = False) -> Writer:
    """The :data:`Writer` of ``arrays`` as a ``.npz`` archive (``numpy.savez``, or ``savez_compressed``)."""
    import numpy as np

    save = np.savez_compressed if compressed else np.savez
    return lambda handle: save(handle, **arrays)


def save_tensors(obj: dict[str, Any], path: Path) -> None:
    """``torch.save`` ``obj`` (tensors, state dicts, numbers, strings) to ``path``, atomically."""
    import torch

    save_files({Path(path): lambda handle: torch.save(obj, handle)})


def save_json(obj: Any, path: Path, indent: int | None = None) -> None:
    """Write ``obj`` as JSON to ``path``, atomically."""
    save_files({Path(path): as_json(obj, indent)})


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
