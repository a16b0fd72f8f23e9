"""Clean stops: SIGINT/SIGTERM let the running unit save a checkpoint, then the run exits resumable."""

from __future__ import annotations

import contextlib
import signal
import threading

#: the signals that stop a run cleanly
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopRequested(Exception):
    """Raised after a SIGINT/SIGTERM once the unit's state was saved."""


class _StopFlag:
    """Set by SIGINT/SIGTERM: the running unit saves a checkpoint and the run exits resumable."""

    requested = False


STOP = _StopFlag()


def install_stop_handler() -> None:
    """Turn SIGINT/SIGTERM into a clean stop (call once, early, in the main thread)."""

    def handler(signum, frame):
        STOP.requested = True

    try:
        for sig in STOP_SIGNALS:
            signal.signal(sig, handler)
    except ValueError:  # not the main thread (Ray workers, threads): no handler
        pass


@contextlib.contextmanager
def stop_handlers_kept():
    """Give SIGINT/SIGTERM their handlers back after the block, for code that installs its own:
    ``ray.init`` makes SIGTERM exit the process (in Python) and its C++ core makes it abort (exit
    134), either of which would end a run half-way instead of letting its units save."""
    if threading.current_thread() is not threading.main_thread():  # only the main thread has them
        yield
        return
    saved = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in saved.items():
            if handler is not None:  # (None: installed outside Python, not ours to restore)
                signal.signal(sig, handler)  # (re-installed even if Python still holds it: C code may have replaced it)
