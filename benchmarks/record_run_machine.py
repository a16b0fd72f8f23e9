"""Note which processor a run ran on beside its exported episodes, for the results pages' cost tables.

An exported episodes CSV (``benchgen export``) has no machine in it, and the planner's measured
speeds are per processor (an Atari 100K game took 2-3x longer on the development machine's Intel
Xeon host than on the AMD EPYC one before it), so a run's wall time is read against the plan for
the processor it ran on. This keeps ``machines.csv`` in the CSV's folder: one row per run (the CSV's
name without ``.csv``), its processor from the run record's ``machines`` (" then "-joined when a
resume moved it to another) and the row's source. A run whose record names no machine (made
before benchgen recorded them) gets no row. ``benchmarks/run_or_resume.sh`` runs it after each
export.

Usage: python benchmarks/record_run_machine.py RUN_DIR EPISODES_CSV
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

from benchgen.results.record import RUN_FILE, RunRecord

FILE = "machines.csv"
COLUMNS = ("run", "processor", "source")


def read_machines(folder: Path) -> dict[str, dict[str, str]]:
    """``machines.csv`` of ``folder``: run -> its row (empty when there is none)."""
    path = folder / FILE
    if not path.exists():
        return {}
    with path.open(newline="", encoding="utf-8") as f:
        return {row["run"]: row for row in csv.DictReader(f)}


def write_machines(folder: Path, rows: dict[str, dict[str, str]]) -> None:
    with (folder / FILE).open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows[run] for run in sorted(rows))


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: record_run_machine.py RUN_DIR EPISODES_CSV", file=sys.stderr)
        return 2
    run_dir, episodes = Path(argv[0]), Path(argv[1])
    record = RunRecord.read(run_dir / RUN_FILE)
    processors = [m.get("processor") for m in record.machines if isinstance(m, dict) and m.get("processor")]
    if not processors:
        print(f"{run_dir}: its record names no machine; {FILE} left as it is")
        return 0
    shown = " then ".join(p for i, p in enumerate(processors) if i == 0 or p != processors[i - 1])
    rows = read_machines(episodes.parent)
    rows[episodes.stem] = {"run": episodes.stem, "processor": shown, "source": f"recorded ({RUN_FILE}'s machines)"}
    write_machines(episodes.parent, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
