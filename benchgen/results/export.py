"""``benchgen export``: one row per recorded episode, raw scores, suite extras as columns."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

from benchgen.errors import UsageError
from benchgen.results.rundir import RunDir, write_atomically

BASE_COLUMNS = ["task", "seed", "episode", "frames_total", "length_frames", "score"]


def episode_rows(run_dir: Path) -> tuple[list[str], list[dict]]:
    """Column names and rows (dicts) of every recorded episode, in recording order."""
    rundir = RunDir(run_dir)
    extra_cols = list(rundir.record().episode_fields)
    columns = BASE_COLUMNS + extra_cols + ["end_reason", "phase", "unit_id", "env_index", "events", "wall_time"]
    store = rundir.store(readonly=True)
    rows = []
    try:
        for ep in store.episodes():
            row = {c: ep.get(c) for c in columns if c in ep}
            for c in extra_cols:
                row[c] = ep["extras"].get(c)
            row["events"] = json.dumps(ep["events"]) if ep["events"] else ""
            rows.append(row)
    finally:
        store.close()
    return columns, rows


def export_episodes(run_dir: Path, fmt: str = "csv", output: Path | None = None) -> Path | None:
    """Write the episode table; returns the path written (None when written to stdout).

    The file is written under a temporary name and renamed, and never replaces a file of a run."""
    columns, rows = episode_rows(run_dir)
    if str(output) == "-":
        if fmt != "csv":
            raise UsageError(f"--format {fmt} cannot be written to standard output; give a file with --output")
        _write_csv(sys.stdout, columns, rows)
        return None
    path = Path(output) if output is not None else Path(run_dir) / f"episodes.{fmt}"
    for place in {Path(run_dir), path.parent}:  # the run exported, or any run the file would land in
        if RunDir(place).is_run() and RunDir(place).owns(path):
            raise UsageError(f"{path} is part of run {place}; write the export somewhere else")
    if fmt == "parquet":
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise UsageError("parquet export needs pyarrow: pip install 'benchgen[parquet]'")
        table = pa.table({c: [r.get(c) for r in rows] for c in columns})
        return write_atomically(path, lambda tmp: pq.write_table(table, tmp))

    def write_csv(tmp: Path) -> None:
        with open(tmp, "w", newline="") as handle:
            _write_csv(handle, columns, rows)

    return write_atomically(path, write_csv)


def _write_csv(handle, columns, rows) -> None:
    writer = csv.DictWriter(handle, fieldnames=columns)
    writer.writeheader()
    writer.writerows(rows)
