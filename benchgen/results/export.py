"""``benchgen export``: one row per recorded episode, raw scores, suite extras as columns."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

from benchgen.errors import UsageError
from benchgen.results.rundir import RunDir

BASE_COLUMNS = ["task", "seed", "episode", "frames_total", "length_frames", "score"]


def episode_rows(run_dir: Path) -> tuple[list[str], list[dict]]:
    """Column names and rows (dicts) of every recorded episode, in recording order."""
    rundir = RunDir(run_dir)
    extra_cols = list(rundir.meta().get("episode_fields", []))
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
    """Write the episode table; returns the path written (None when written to stdout)."""
    columns, rows = episode_rows(run_dir)
    if fmt == "parquet":
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise UsageError("parquet export needs pyarrow: pip install 'benchgen[parquet]'")
        path = output or Path(run_dir) / "episodes.parquet"
        table = pa.table({c: [r.get(c) for r in rows] for c in columns})
        pq.write_table(table, path)
        return path
    if str(output) == "-":
        _write_csv(sys.stdout, columns, rows)
        return None
    path = output or Path(run_dir) / "episodes.csv"
    with open(path, "w", newline="") as handle:
        _write_csv(handle, columns, rows)
    return path


def _write_csv(handle, columns, rows) -> None:
    writer = csv.DictWriter(handle, fieldnames=columns)
    writer.writeheader()
    writer.writerows(rows)
