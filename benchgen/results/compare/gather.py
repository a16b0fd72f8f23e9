"""Gathering runs for a comparison: discovery, the protocol check, per-(run, seed) task scores.

Every (run directory, seed) pair is one row of an agent's (runs x tasks) score matrix. Runs
of the same agent with the same agent config are pooled (seeds may be spread over several run
directories); runs of one agent with different configs get labels that name what differs.
Runs are comparable only when every protocol parameter matches: the suite's ``protocol()``
values as the run recorded them (sticky actions, time caps, suite version, ...), plus the
budget of the evaluated phase, the budget unit, frames per step and the per-task score rule.
"""

from __future__ import annotations

import json
import math
import os
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from benchgen.errors import UsageError
from benchgen.phases import SCORING_PREFERENCE, evaluated_phase
from benchgen.results.record import RUN_FILE, RunRecord
from benchgen.results.rundir import RunDir
from benchgen.results.store import DB_NAME, Unit
from benchgen.scoring import Scorer

#: ``--phase auto`` picks the first phase a run has, in this order: the test protocol's
#: learning phase (fine-tuning of a joint agent, or training from scratch; its evaluation phases
#: first, for a protocol that scores those), then zero-shot.
PHASE_PREFERENCE = SCORING_PREFERENCE
#: the ``extras`` key of an episode played in an evaluation round (``benchgen.run.evaluation.rounds``)
ROUND_KEY = "eval_round"
FORCED = "FORCED COMPARISON"


def find_runs(paths: Iterable[str | Path]) -> list[Path]:
    """Run directories named, or found (recursively) under the folders named, in order."""
    found: list[Path] = []
    for p in map(Path, paths):
        if RunDir(p).is_run():
            found.append(p)
            continue
        if not p.is_dir():
            raise UsageError(f"{p} is neither a run directory nor a folder of runs")
        runs = sorted(q.parent for q in p.rglob(RUN_FILE) if RunDir(q.parent).is_run())
        if not runs:
            raise UsageError(f"no benchgen runs under {p} (a run directory holds {RUN_FILE} and {DB_NAME})")
        found += runs
    unique: dict[Path, Path] = {}
    for p in found:
        unique.setdefault(p.resolve(), p)
    return list(unique.values())


#: the view every run has: the raw score of the whole episode
FINAL_VIEW = "score"


def views_of(record: RunRecord) -> dict[str, str]:
    """The run's score views, shortest first, each with its label: the suite's own time views as
    it declared them (``Suite.score_views``, e.g. Atari's 5- and 30-minute scores; the record
    migrates runs made before suites declared them), then the final score."""
    return {**record.score_views, FINAL_VIEW: "final"}


@dataclass
class Run:
    """One run directory, read for one phase."""

    path: Path
    name: str
    record: RunRecord
    """The run's ``run.json``."""
    phase: str
    budget: int
    """Per-unit budget of the evaluated phase, in the suite's budget unit."""
    complete: bool
    views: list[str]
    units: list[Unit] = field(default_factory=list)
    """Every unit of the run, as stored."""
    label: str = ""
    series: dict[tuple[str, int], tuple[np.ndarray, dict[str, np.ndarray]]] = field(default_factory=dict)
    """(task, seed) -> (frames_total of each episode, view -> raw score of each episode)."""
    rounds: bool = False
    """The phase's episodes come in evaluation rounds (``EvaluationSchedule``): a task's score is
    made from its latest round (``Scorer.evaluation_score``), not by the per-task rule."""

    @property
    def agent(self) -> str:
        return self.record.agent

    @property
    def seeds(self) -> list[int]:
        return sorted({s for _, s in self.series})

    def tasks(self, seed: int) -> set[str]:
        return {t for t, s in self.series if s == seed}

    def score(self, scorer: Scorer, task: str, seed: int, view: str, upto_frames: int | None = None) -> float:
        """The suite's per-task score from the episodes finished by ``upto_frames`` (all if None)."""
        if (task, seed) not in self.series:
            return math.nan
        frames, values = self.series[(task, seed)]
        k = len(frames) if upto_frames is None else int(np.searchsorted(frames, upto_frames, side="right"))
        if not k:
            return math.nan
        if self.rounds:
            # an evaluation phase: its latest round by then (a round's episodes share the frame
            # counter at which it began)
            first = int(np.searchsorted(frames, frames[k - 1], side="left"))
            return scorer.evaluation_score(values[view][first:k].tolist())
        return scorer.task_score(values[view][:k].tolist())

    def final_score(self, scorer: Scorer, task: str, seed: int) -> float | None:
        """The suite's second per-task score (``Scorer.final_score``) of all the episodes; None
        when the suite has none, NaN when the seed played no episode of the task."""
        if (task, seed) not in self.series:
            return None if scorer.final_score([0.0]) is None else math.nan
        return scorer.final_score(self.series[(task, seed)][1]["score"].tolist())

    def task_scores(self, scorer: Scorer, view: str, upto_frames: int | None = None) -> dict[str, float]:
        """task -> the per-task score averaged over the run's seeds (``inf`` if a seed reached
        infinite gameplay); tasks without an episode finished by ``upto_frames`` are left out."""
        per_task: dict[str, list[float]] = defaultdict(list)
        for task, seed in self.series:
            value = self.score(scorer, task, seed, view, upto_frames)
            if not math.isnan(value):
                per_task[task].append(value)
        return {t: math.inf if any(math.isinf(v) for v in vs) else float(np.mean(vs)) for t, vs in per_task.items()}


def load_phases(path: Path, name: str) -> dict[str, Run]:
    """Read a run's episodes once: phase -> its :class:`Run` (phases with episodes only)."""
    rundir = RunDir(path)
    record = rundir.record()
    views = list(views_of(record))
    store = rundir.store(readonly=True)
    try:
        units = store.units()
        raw: dict[str, dict[tuple[str, int], tuple[list, dict[str, list]]]] = defaultdict(dict)
        in_rounds: set[str] = set()
        for ep in store.episodes():
            series = raw[ep["phase"]]
            if ROUND_KEY in ep["extras"]:
                in_rounds.add(ep["phase"])
            key = (ep["task"], ep["seed"])
            if key not in series:
                series[key] = ([], {v: [] for v in views})
            series[key][0].append(ep["frames_total"])
            for v in views:
                series[key][1][v].append(ep["score"] if v == FINAL_VIEW else ep["extras"].get(v, ep["score"]))
    finally:
        store.close()
    complete = all(u.status == "done" for u in units)
    runs = {}
    for phase, series in raw.items():
        of = evaluated_phase(phase) or phase  # an evaluation phase has its units' budget
        frames = max((u.budget_frames for u in units if u.phase == of), default=0)
        budget = record.from_frames(frames)
        run = runs[phase] = Run(path, name, record, phase, budget, complete, views, units, rounds=phase in in_rounds)
        for key, (f, vals) in series.items():
            order = np.argsort(np.asarray(f), kind="stable")
            run.series[key] = (
                np.asarray(f, dtype=np.int64)[order],
                {v: np.asarray(x, dtype=float)[order] for v, x in vals.items()},
            )
    return runs


def load_run(path: Path, name: str, phase: str = "auto") -> Run | None:
    """Read one run's episodes of one phase; None if it recorded no episode."""
    phases = load_phases(path, name)
    if not phases:
        return None
    if phase == "auto":
        phase = next(p for p in (*PHASE_PREFERENCE, *sorted(phases)) if p in phases)
    elif phase not in phases:
        raise UsageError(
            f"run {name} has no '{phase}' episodes (it has: {', '.join(sorted(phases))}); "
            "pick another --phase or leave it out"
        )
    return phases[phase]


def load_runs(
    paths: Iterable[str | Path], phase: str = "auto", execution_settings: ExecutionSettings | None = None
) -> tuple[list[Run], list[str]]:
    """Every run found under ``paths`` (see ``find_runs``), labelled (``execution_settings``: see
    :func:`assign_labels`); and notes for the report."""
    dirs = find_runs(paths)
    resolved = [d.resolve() for d in dirs]
    root = Path(os.path.commonpath(resolved)) if len(dirs) > 1 else resolved[0].parent
    runs, notes = [], []
    seen_ids: dict[str, str] = {}
    for d, r in zip(dirs, resolved):
        name = str(r.relative_to(root)) if r != root else r.name
        run = load_run(d, name, phase)
        if run is None:
            notes.append(f"run {name} has no recorded episodes; left out")
            continue
        run_id = run.record.run_id  # runs made before run ids existed are told apart by path
        if run_id in seen_ids:
            notes.append(f"run {name} is a copy of run {seen_ids[run_id]} (the same run id): counted once")
            continue
        if run_id:
            seen_ids[run_id] = name
        if not run.complete:
            notes.append(f"run {name} is incomplete (some units did not finish): its scores are provisional")
        runs.append(run)
    if not runs:
        raise UsageError("none of the runs has recorded episodes; nothing to compare")
    suites = defaultdict(list)
    for r in runs:
        suites[r.record.suite].append(r.name)
    if len(suites) > 1:
        raise UsageError(
            "runs are of different suites ("
            + "; ".join(f"{s}: {', '.join(n[:3])}" for s, n in suites.items())
            + "); compare runs of one suite"
        )
    notes += assign_labels(runs, execution_settings)
    notes += drop_repeated_seeds(runs)
    return runs, notes


def drop_repeated_seeds(runs: list[Run]) -> list[str]:
    """Keep one (run, seed) row per agent label and seed: a seed run twice (two run directories
    of one agent with the same seed) is the same experiment repeated, not an independent sample,
    so only its first run counts. Returns a note per dropped row."""
    notes, first = [], {}
    for run in runs:
        for seed in run.seeds:
            key = (run.label, seed)
            if key not in first:
                first[key] = run.name
                continue
            run.series = {k: v for k, v in run.series.items() if k[1] != seed}
            notes.append(
                f"seed {seed} of {run.label} appears in runs {first[key]} and {run.name}: counted once "
                f"(from {first[key]}); give each run its own seeds"
            )
    return notes


#: agent name -> the names of its config's settings of how it runs, not what it learns
#: (``benchgen.config.execution_settings`` of the agent's config class; empty for an agent unknown here)
ExecutionSettings = Callable[[str], frozenset[str]]


def assign_labels(runs: list[Run], execution_settings: ExecutionSettings | None = None) -> list[str]:
    """Label = agent name; runs of one agent with different configs add what differs. Settings of
    how an agent runs (``execution_settings(agent)``: device, threads, logging) do not tell runs
    apart: their seeds pool, and a note names the values they ran with. Returns those notes."""
    by_agent: dict[str, list[Run]] = defaultdict(list)
    for r in runs:
        by_agent[r.agent].append(r)
    notes = []
    for agent, rs in by_agent.items():
        configs = [r.record.agent_config or {} for r in rs]
        keys = sorted({k for c in configs for k in c})
        differ = [k for k in keys if len({json.dumps(c.get(k), sort_keys=True, default=str) for c in configs}) > 1]
        how_it_ran = execution_settings(agent) if execution_settings is not None else frozenset()
        pooled = [k for k in differ if k in how_it_ran]
        differ = [k for k in differ if k not in how_it_ran]
        for r, c in zip(rs, configs):
            r.label = agent if not differ else f"{agent}({', '.join(f'{k}={c.get(k)}' for k in differ)})"
        if pooled:
            ran = "; ".join(
                f"{k}: " + ", ".join(f"{_show(c.get(k))} in {r.name}" for r, c in zip(rs, configs)) for k in pooled
            )
            notes.append(
                f"{agent}: settings of how the runs ran, not of what they learn, do not tell them apart ({ran})"
            )
    return notes


# -- the protocol check ------------------------------------------------------------------------
def protocol_params(run: Run) -> dict[str, Any]:
    """The values that must match for ``run`` to be compared with another run."""
    record = run.record
    params: dict[str, Any] = {str(k): v for k, v in (record.protocol or {}).items()}
    for key in ("suite_version", "budget_unit", "frames_per_step", "task_score_rule"):
        if getattr(record, key) is not None:  # (absent from runs that predate it)
            params.setdefault(key, getattr(record, key))
    params["budget"] = run.budget
    return params


def _show(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)


def protocol_differences(runs: list[Run]) -> dict[str, dict[str, list[str]]]:
    """parameter -> shown value -> names of the runs with that value, for every parameter that differs."""
    params = [protocol_params(r) for r in runs]
    keys = list(dict.fromkeys(k for p in params for k in p))
    out: dict[str, dict[str, list[str]]] = {}
    for key in keys:
        values: dict[str, list[str]] = {}
        for run, p in zip(runs, params):
            values.setdefault(_show(p[key]) if key in p else "(absent)", []).append(run.name)
        if len(values) > 1:
            out[key] = values
    return out


def describe_differences(diffs: dict[str, dict[str, list[str]]], max_names: int = 2) -> str:
    """``sticky_prob (0.25 in a, b; 0.0 in c)`` for each differing parameter."""
    parts = []
    for key, values in diffs.items():
        shown = []
        for value, names in values.items():
            more = f" +{len(names) - max_names} more" if len(names) > max_names else ""
            shown.append(f"{value} in {', '.join(names[:max_names])}{more}")
        parts.append(f"{key} ({'; '.join(shown)})")
    return ", ".join(parts)


def check_protocols(runs: list[Run], force: bool) -> tuple[dict, str | None]:
    """Refuse runs whose protocols differ unless forced; return the differences and the label
    every output of a forced comparison carries (None when the protocols match)."""
    diffs = protocol_differences(runs)
    if not diffs:
        return diffs, None
    if not force:
        raise UsageError(
            f"runs differ in protocol parameters: {describe_differences(diffs)}; compare runs of one "
            f"protocol, or pass --force to compare them anyway (every output is then labelled {FORCED})"
        )
    return diffs, f"{FORCED}: protocols differ in {describe_differences(diffs)}"
