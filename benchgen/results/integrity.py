"""The integrity of a run's results store: what every store benchgen writes holds, checked when a
command first opens a run's store (:meth:`benchgen.results.rundir.RunDir.store`), so that a
damaged or tampered store is refused in one line naming the first row that breaks it, never
counted (issue 47: missing or duplicated episodes were counted silently, and a unit's frame
counter raised past what it played made ``resume`` mark it done):

- each unit's episodes of a task are numbered 0, 1, 2, ... once each (the recorder numbers them
  so, in the transaction that commits them);
- every episode belongs to a unit the store plans;
- a unit's frame counter is no higher than what its episodes and checkpoints committed (the
  counter is committed with them), except for a loop outside benchgen
  (``benchgen.api.Recording``), which also commits the frames after its last episode.

Values of the wrong type are left to the row checks of :mod:`benchgen.results.store`, which name
them when the rows are read.
"""

from __future__ import annotations

import sqlite3

from benchgen.errors import UsageError
from benchgen.results.store import DB_NAME, ResultsStore


def check_invariants(store: ResultsStore, exact_frames: bool = True) -> None:
    """One line if ``store`` breaks an invariant of the module docstring (``exact_frames``: the
    frame counter's, off for a loop outside benchgen); a page SQLite cannot read is one line too."""
    try:
        _check(store, exact_frames)
    except sqlite3.OperationalError:
        raise  # (held by another program: the CLI says so in one line)
    except sqlite3.DatabaseError as exc:
        raise UsageError(f"{store.path} is damaged ({exc}); restore it from a copy of the run") from None


def _check(store: ResultsStore, exact_frames: bool) -> None:
    def damaged(what: str) -> UsageError:
        return UsageError(f"the run's {DB_NAME} is damaged: {what}; restore it from a copy of the run")

    numbering = store.conn.execute(
        "SELECT unit_id, task, COUNT(*) AS n, COUNT(DISTINCT episode) AS d, MIN(episode) AS lo, "
        "MAX(episode) AS hi FROM episodes GROUP BY unit_id, task HAVING lo != 0 OR hi != n - 1 OR d != n LIMIT 1"
    ).fetchone()
    if numbering is not None:
        unit_id, task = numbering[0], numbering[1]
        numbers = [r[0] for r in store.conn.execute(
            "SELECT episode FROM episodes WHERE unit_id = ? AND task = ? ORDER BY episode", (unit_id, task)
        )]  # fmt: skip
        if not all(type(n) is int for n in numbers):
            raise damaged(f"unit {unit_id!r}, task {task!r}: an episode number is not a whole number")
        twice = next((a for a, b in zip(numbers, numbers[1:]) if a == b), None)
        missing = next((k for k, number in enumerate(sorted(set(numbers))) if k != number), None)
        what = f"episode {twice} is recorded twice" if twice is not None else f"episode {missing} is missing"
        raise damaged(f"unit {unit_id!r}, task {task!r}: {what} (episodes are numbered 0, 1, 2, ... once each)")
    orphan = store.conn.execute(
        "SELECT id, unit_id FROM episodes WHERE unit_id NOT IN (SELECT unit_id FROM units) LIMIT 1"
    ).fetchone()
    if orphan is not None:
        raise damaged(f"episode {orphan[0]} belongs to unit {orphan[1]!r}, which the store does not plan")
    # (one statement: a consistent snapshot while another process records episodes)
    for unit_id, frames_done, checkpoint, top in store.conn.execute(
        "SELECT u.unit_id, u.frames_done, u.last_checkpoint_frames, e.top FROM units u LEFT JOIN "
        "(SELECT unit_id, MAX(frames_total) AS top FROM episodes GROUP BY unit_id) e ON e.unit_id = u.unit_id"
    ):
        if not all(type(v) is int for v in (frames_done, top or 0, checkpoint or 0)):
            continue  # (a value of the wrong type: named when its row is read)
        committed = max(top or 0, checkpoint or 0)
        if exact_frames and frames_done > committed:
            raise damaged(
                f"unit {unit_id!r} counts {frames_done:,} frames, but its episodes and checkpoints "
                f"committed {committed:,}"
            )
