"""Progress display for long runs: frames, episodes, recent score and ETA (rich), one bar per unit."""

from __future__ import annotations

import math
import sys
import time

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn


class RunProgress:
    """Bars keyed by unit id. ``tick`` is cheap (throttled) so agents may call it every step."""

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
            # Redraw only on our updates when the output is not a terminal (CI logs stay short).
            auto_refresh=sys.stderr.isatty(),
        )
        self._tasks: dict[str, int] = {}
        self._current: str | None = None

    def __enter__(self):
        self._progress.__enter__()
        return self

    def __exit__(self, *exc):
        self._progress.__exit__(*exc)

    def start_unit(self, unit_id: str, label: str, total_frames: int, frames_done: int) -> None:
        self._tasks[unit_id] = self._progress.add_task(
            label, total=total_frames, completed=frames_done, episodes=0, recent="-"
        )
        self._current = unit_id

    def update_unit(self, unit_id: str, frames: int, episodes: int, recent: float) -> None:
        task = self._tasks.get(unit_id)
        if task is not None:
            self._progress.update(
                task, completed=frames, episodes=episodes, recent="-" if math.isnan(recent) else f"{recent:.1f}"
            )

    def tick(self, recorder, force: bool = False) -> None:
        """In-process update from the current unit's recorder (throttled)."""
        now = time.monotonic()
        if self._current is None or (not force and now - self._last < self.interval):
            return
        self._last = now
        self.update_unit(self._current, recorder.frames_done, recorder.episodes_recorded, recorder.recent_mean())

    def finish_unit(self, unit_id: str, recorder=None) -> None:
        if recorder is not None and unit_id == self._current:
            self.tick(recorder, force=True)
        task = self._tasks.pop(unit_id, None)
        if task is not None:
            self._progress.stop_task(task)
        if self._current == unit_id:
            self._current = None
