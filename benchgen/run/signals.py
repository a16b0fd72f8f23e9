"""Clean stops: SIGINT/SIGTERM let the running unit save a checkpoint, then the run exits resumable."""

from __future__ import annotations

import signal


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
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, handler)
    except ValueError:  # not the main thread (Ray workers, threads): no handler
        pass
