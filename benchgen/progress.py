"""Progress display for long runs: frames, episodes, recent score and ETA (rich)."""

from __future__ import annotations

import math
import sys
import time

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn


class RunProgress:
    """One bar per unit; ``tick`` is cheap (throttled) so agents may call it every step."""

    def __init__(self, enabled: bool = True, interval: float = 0.25):
        self.enabled = enabled
        self.interval = interval
        self._last = 0.0
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("frames  ep {task.fields[episodes]}  recent {task.fields[recent]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            disable=not enabled,
            transient=False,
            # Redraw only on our ticks when the output is not a terminal (CI logs stay short).
            auto_refresh=sys.stderr.isatty(),
        )
        self._task = None

    def __enter__(self):
        self._progress.__enter__()
        return self

    def __exit__(self, *exc):
        self._progress.__exit__(*exc)

    def start_unit(self, label: str, total_frames: int, frames_done: int) -> None:
        self._task = self._progress.add_task(label, total=total_frames, completed=frames_done, episodes=0, recent="-")

    def tick(self, recorder, force: bool = False) -> None:
        if self._task is None:
            return
        now = time.monotonic()
        if not force and now - self._last < self.interval:
            return
        self._last = now
        recent = recorder.recent_mean()
        self._progress.update(
            self._task,
            completed=recorder.frames_done,
            episodes=recorder.episodes_recorded,
            recent="-" if math.isnan(recent) else f"{recent:.1f}",
        )

    def finish_unit(self) -> None:
        if self._task is not None:
            self._progress.stop_task(self._task)
            self._task = None
