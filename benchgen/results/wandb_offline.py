"""``benchgen export --format wandb``: a run's episodes as Weights & Biases offline runs.

One W&B run per unit of the benchgen run (one task and seed, or a joint unit), written by the
``wandb`` library itself in offline mode: no account and no network. ``wandb sync DIR/wandb``
uploads them later to any project, where the Open RL Benchmark tools read them like CleanRL's runs,
because the names follow CleanRL's (the runs the Open RL Benchmark collects; Huang et al. 2024,
"Open RL Benchmark", and CleanRL's ``--track`` option):

- config ``env_id`` (the task), ``exp_name`` (the agent's registered name) and ``seed``; the whole
  run record (``run.json``: suite, protocol, agent settings, versions) under ``benchgen``;
- ``charts/episodic_return`` and ``charts/episodic_length`` (emulator frames, as CleanRL's
  ``RecordEpisodeStatistics`` under frame skipping counts them) at ``global_step`` (agent steps, the
  run's frames divided by its ``frames_per_step``), for the episodes a unit plays while it learns;
- the same two under the phase's own name for its evaluation and re-evaluation episodes
  (``train_eval/episodic_return``, :mod:`benchgen.phases`), so evaluation never mixes into the
  training curve; ``frames`` (the run's frame count at the episode's end) beside each, and the
  suite's numeric episode fields (e.g. a score at a time cap) under the same prefix.

Raw scores only: a normalized score is computed from these, never logged in their place.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

from benchgen.errors import UsageError
from benchgen.phases import evaluated_phase
from benchgen.results.export import episode_rows
from benchgen.results.rundir import RunDir
from benchgen.suite import frames_to_steps

#: the folder W&B writes its runs into, under the directory it is given (``wandb sync`` reads it)
WANDB_FOLDER = "wandb"
#: where the library keeps its cache and settings while exporting, inside the export (removed after)
_LIBRARY_STATE = ".wandb-state"
#: CleanRL's prefix for the curves of the episodes an agent plays while it learns
LEARNING_PREFIX = "charts"


def metric_prefix(phase: str) -> str:
    """The W&B prefix of an episode's metrics: CleanRL's ``charts`` for the episodes a unit plays
    itself; an evaluation or re-evaluation phase's own name (``train_eval``) for the others."""
    return LEARNING_PREFIX if evaluated_phase(phase) is None else phase


def run_id(benchgen_run_id: str, unit_id: str) -> str:
    """A W&B run id fixed by the benchgen run and unit: syncing an export twice updates the same
    W&B run instead of adding a copy (W&B ids: lower-case letters and digits)."""
    return hashlib.sha1(f"{benchgen_run_id}/{unit_id}".encode()).hexdigest()[:16]


def export_wandb(run_dir: Path, output: Path | None = None) -> Path:
    """Write one W&B offline run per unit of ``run_dir`` under ``OUTPUT/wandb`` (default: the run
    directory itself); returns that folder. Refuses a folder that already holds W&B runs or is a
    link, so that an export never mixes with another nor writes through a link."""
    try:
        import wandb
    except ImportError:
        raise UsageError("W&B export needs the wandb package: pip install 'benchgen[wandb]'")
    run_dir = Path(run_dir)
    rundir = RunDir(run_dir)
    record = rundir.record()
    _, rows = episode_rows(run_dir)
    base = Path(output) if output is not None else run_dir
    if not base.is_dir():
        raise UsageError(f"{base} is not a folder; create it or give another --output")
    folder = base / WANDB_FOLDER
    if folder.is_symlink() or folder.exists():
        raise UsageError(f"{folder} already exists; remove it or give another --output")
    store = rundir.store(readonly=True)
    try:
        units = {u.unit_id: u for u in store.units()}
    finally:
        store.close()
    by_unit: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_unit[row["unit_id"]].append(row)
    numeric_fields = list(record.episode_fields)
    folder.mkdir()
    with _library_state_inside(folder / _LIBRARY_STATE):
        for unit_id, unit_rows in by_unit.items():
            unit = units[unit_id]
            tasks = sorted(set(unit.tasks))
            env_id = tasks[0] if len(tasks) == 1 else f"{unit.phase}: {len(tasks)} tasks"
            run = wandb.init(
                mode="offline",
                dir=str(base),
                project="benchgen",
                id=run_id(record.run_id, unit_id),
                name=f"{env_id}__{record.agent}__{unit.seed}__{unit.phase}",
                group=f"{record.agent}__{env_id}",
                config={
                    "env_id": env_id,
                    "exp_name": record.agent,
                    "seed": unit.seed,
                    "phase": unit.phase,
                    "benchgen": record.to_json(),
                },
                settings=wandb.Settings(
                    console="off",
                    silent=True,
                    save_code=False,
                    disable_git=True,
                    disable_job_creation=True,
                    x_save_requirements=False,
                    x_disable_stats=True,
                    x_disable_meta=True,
                ),
                reinit="finish_previous",
            )
            run.define_metric("global_step")
            run.define_metric("*", step_metric="global_step")
            for values in _episode_metrics(unit_rows, record.frames_per_step, numeric_fields):
                run.log(values)
            run.finish()
    return folder


def _episode_metrics(rows: list[dict], frames_per_step: int, fields: list[str]) -> Iterator[dict[str, float]]:
    """Each episode's metrics, in the order the run recorded them by its frame count."""
    for row in sorted(rows, key=lambda r: (r["frames_total"], r["episode"])):
        prefix = metric_prefix(row["phase"])
        values = {
            "global_step": frames_to_steps(int(row["frames_total"]), frames_per_step),
            f"{prefix}/frames": int(row["frames_total"]),
            f"{prefix}/episodic_return": float(row["score"]),
            f"{prefix}/episodic_length": int(row["length_frames"]),
        }
        for name in fields:
            if isinstance(row.get(name), (int, float)) and not isinstance(row.get(name), bool):
                values[f"{prefix}/{name}"] = row[name]
        yield values


@contextlib.contextmanager
def _library_state_inside(state: Path) -> Iterator[None]:
    """The wandb library keeps a cache, settings and logs in the user's home folder; pointed here
    instead for the export (and removed after), so that nothing outside the folder the user
    named is written."""
    names = ("WANDB_CACHE_DIR", "WANDB_CONFIG_DIR", "WANDB_DATA_DIR", "WANDB_ARTIFACT_DIR")
    saved = {name: os.environ.get(name) for name in (*names, "WANDB_SILENT", "WANDB_MODE")}
    for name in names:
        (state / name.lower()).mkdir(parents=True, exist_ok=True)
        os.environ[name] = str(state / name.lower())
    os.environ["WANDB_SILENT"] = "true"
    os.environ["WANDB_MODE"] = "offline"
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        shutil.rmtree(state, ignore_errors=True)
