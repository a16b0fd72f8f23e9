"""Progress of a run's units: frames, frames/s, ETA, episodes and the recent mean score.

On a terminal a rich bar per unit redraws in place. Without one (a log file, CI, ``nohup``, a
pipe) a bar is cut to the width rich guesses and its redraws pile up, so there every ``every``
seconds one plain line per running unit is written instead, plus one when a unit stops (ending in
`` done`` when it finished)::

    [progress] train count-20 seed 0: frames=1200/5000 pct=24.0 fps=560 eta=0:00:07 episodes=3 mean_score=-20.50

``fps`` is the unit's mean rate in this process since its frames started moving (setup excluded), ``eta`` the frames left at that
rate (``-`` until there is one), ``mean_score`` the mean of the unit's last 100 training episodes
(``-`` before the first). :data:`LINE` parses a line back.
"""

from __future__ import annotations

import math
import re
import sys
import time
from dataclasses import dataclass
from typing import TextIO

#: one plain progress line, for tools that read a run's log
LINE = re.compile(
    r"^\[progress\] (?P<label>.+?): frames=(?P<frames>\d+)/(?P<total>\d+) pct=(?P<pct>[\d.]+) "
    r"fps=(?P<fps>[\d.]+|-) eta=(?P<eta>[\d:]+|-) episodes=(?P<episodes>\d+) "
    r"mean_score=(?P<mean_score>\S+)(?P<done> done)?$"
)


@dataclass
class _Unit:
    label: str
    total: int
    frames: int
    started_frames: int
    #: the rate's origin: the last update before the frames moved (the unit built and started)
    started_at: float | None = None
    #: the last update that moved the frames (a unit saving at its end is not slowing down)
    moved_at: float | None = None
    episodes: int = 0
    recent: float = float("nan")

    def observe(self, frames: int, now: float) -> None:
        if self.started_at is None or frames == self.started_frames:
            self.started_at, self.started_frames = now, frames
        elif frames != self.frames:
            self.moved_at = now
        self.frames = frames


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def plain_line(unit: _Unit, done: bool = False) -> str:
    """The plain progress line of ``unit`` as last observed."""
    elapsed = 0.0 if unit.started_at is None or unit.moved_at is None else unit.moved_at - unit.started_at
    ran = unit.frames - unit.started_frames
    fps = ran / elapsed if elapsed > 0 and ran > 0 else None
    eta = "-" if fps is None else _clock(max(unit.total - unit.frames, 0) / fps)
    pct = 100.0 * unit.frames / unit.total if unit.total else 100.0
    score = "-" if math.isnan(unit.recent) else f"{unit.recent:.2f}"
    return (
        f"[progress] {unit.label}: frames={unit.frames}/{unit.total} pct={pct:.1f} "
        f"fps={'-' if fps is None else f'{fps:.0f}'} eta={eta} episodes={unit.episodes} "
        f"mean_score={score}{' done' if done else ''}"
    )


class RunProgress:
    """Progress keyed by unit id: rich bars on a terminal, plain lines every ``every`` seconds
    elsewhere. ``tick`` is cheap (throttled) so agents may call it every step."""

    def __init__(self, enabled: bool = True, interval: float = 0.25, every: float = 30.0, stream: TextIO | None = None):
        self.enabled = enabled
        self.interval = interval
        self.every = every
        self._stream = stream if stream is not None else sys.stderr
        isatty = getattr(self._stream, "isatty", None)
        self.plain = enabled and not (isatty is not None and isatty())
        self._last = 0.0
        self._last_line = time.monotonic()
        self._units: dict[str, _Unit] = {}
        self._tasks: dict[str, int] = {}
        self._current: str | None = None
        self._progress = None
        if enabled and not self.plain:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._progress = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("frames  ep {task.fields[episodes]}  recent {task.fields[recent]}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=Console(file=self._stream),
            )

    def __enter__(self):
        if self._progress is not None:
            self._progress.__enter__()
        return self

    def __exit__(self, *exc):
        if self._progress is not None:
            self._progress.__exit__(*exc)

    def start_unit(self, unit_id: str, label: str, total_frames: int, frames_done: int) -> None:
        if not self.enabled:
            return
        self._current = unit_id
        if self._progress is not None:
            self._tasks[unit_id] = self._progress.add_task(
                label, total=total_frames, completed=frames_done, episodes=0, recent="-"
            )
        else:
            self._units[unit_id] = _Unit(label, total_frames, frames_done, frames_done)

    def update_unit(self, unit_id: str, frames: int, episodes: int, recent: float) -> None:
        if self._progress is not None:
            task = self._tasks.get(unit_id)
            if task is not None:
                self._progress.update(
                    task, completed=frames, episodes=episodes, recent="-" if math.isnan(recent) else f"{recent:.1f}"
                )
            return
        unit = self._units.get(unit_id)
        if unit is None:
            return
        now = time.monotonic()
        unit.observe(frames, now)
        unit.episodes = episodes
        if not math.isnan(recent):
            unit.recent = recent
        if now - self._last_line >= self.every:
            self._last_line = now
            for shown in self._units.values():
                self._write(plain_line(shown))

    def tick(self, recorder, force: bool = False) -> None:
        """In-process update from the current unit's recorder (throttled)."""
        now = time.monotonic()
        if self._current is None or (not force and now - self._last < self.interval):
            return
        self._last = now
        self.update_unit(self._current, recorder.frames_done, recorder.episodes_recorded, recorder.recent_mean())

    def finish_unit(
        self,
        unit_id: str,
        recorder=None,
        *,
        frames: int | None = None,
        episodes: int | None = None,
        recent: float = float("nan"),
        done: bool = False,
    ) -> None:
        """The unit stopped running (``done``: it finished); ``frames``, ``episodes`` and
        ``recent``: its final counts where the caller knows them. Without a terminal its last line
        is written now."""
        if recorder is not None and unit_id == self._current:
            self.tick(recorder, force=True)
        task = self._tasks.pop(unit_id, None)
        if task is not None:
            self._progress.stop_task(task)
        unit = self._units.pop(unit_id, None)
        if unit is not None:
            if frames is not None:
                unit.observe(frames, time.monotonic())
            if episodes is not None:
                unit.episodes = episodes
            if not math.isnan(recent):
                unit.recent = recent
            self._write(plain_line(unit, done=done))
        if self._current == unit_id:
            self._current = None

    def _write(self, line: str) -> None:
        print(line, file=self._stream, flush=True)
