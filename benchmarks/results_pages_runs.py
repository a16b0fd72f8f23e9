"""What the results pages (``results_pages.py``) read runs with, and the pages of the short runs.

The helpers: an exported run (``benchgen export``'s CSV, one row per episode) as curves per phase,
the suites' shipped reference tables, number formatting and the :class:`Page` a topic returns.
The pages: Gymnasium classic control against the RL Baselines3 Zoo, and MinAtar Breakout, each run
again with the command ``docs/measurements/learning.md`` quotes, exported and committed under
``benchmarks/results/gymnasium/`` and ``benchmarks/results/minatar/``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from docs_plots import Panel, draw_panels

from benchgen.inputs import csv_reader
from benchgen.registry import get_registry
from benchgen_gymnasium.published import rl_zoo_scores

RESULTS = Path(__file__).resolve().parent / "results"
DEV_MACHINE = (
    "the development machine: 2 CPU cores (x86-64), no GPU, runs niced beside other work "
    "(README, 'Set up'); one core a run"
)
LEARNING_MD = "[docs/measurements/learning.md](../../measurements/learning.md)"


@dataclass
class Run:
    """One exported run: its file and, per phase, the frames at each episode's end and its raw score."""

    path: Path
    task: str
    seed: int
    phases: dict[str, tuple[np.ndarray, np.ndarray]]

    def curve(self, phase: str = "train") -> tuple[np.ndarray, np.ndarray]:
        return self.phases.get(phase, (np.zeros(0), np.zeros(0)))


def read_run(path: Path) -> Run:
    """An export CSV (one row per episode, ``benchgen export``), through benchgen's CSV reader."""
    with path.open(newline="") as handle:
        return run_of(path, list(csv_reader(handle, str(path))))


def run_of(path: Path, rows: list[dict[str, str]]) -> Run:
    """A run from its exported rows (as read by :func:`read_run` or a table script)."""
    by_phase: dict[str, list[tuple[int, float]]] = {}
    for row in rows:
        by_phase.setdefault(row["phase"], []).append((int(row["frames_total"] or 0), float(row["score"])))
    phases = {p: (np.array([f for f, _ in v]), np.array([s for _, s in v])) for p, v in by_phase.items()}
    return Run(path, rows[0]["task"].removesuffix(":test"), int(rows[0]["seed"]), phases)


def references(suite: str) -> dict:
    """The suite's published tables by name (what ``benchgen references SUITE`` lists)."""
    return {t.name: t for t in get_registry().suite(suite).reference_scores()}


def fmt(value: float | None) -> str:
    return "-" if value is None or not np.isfinite(value) else f"{value:,.1f}"


@dataclass
class Page:
    """One results page: its markdown body, its figures (file name -> drawing function) and inputs."""

    title: str
    body: list[str]
    inputs: list[Path]
    figures: dict[str, Callable[[Path], None]] = field(default_factory=dict)


@dataclass(frozen=True)
class ShortRun:
    """One short learning run committed for the pages, as it was made."""

    agent: str
    task: str
    budget: str
    """The run's budget in the suite's unit, as the command gives or the suite's tuned settings set it."""
    command: str
    """The exact command (without ``--out``), run with ``nice -n 5``."""
    minutes: float
    """Wall time of the training run on the development machine beside the two benchmark lanes."""
    quoted: str
    """What ``docs/measurements/learning.md`` quotes for the same command, as it quotes it."""
    note: str = ""
    """How this run compares with the quoted one, where they differ."""


#: the runs drawn here, seed 0, made 2026-11-28 one after another (``--out runs/results_pages/AGENT-TASK``, not
#: committed), the gymnasium ones then evaluated with ``benchgen evaluate RUN --episodes 100``
GYMNASIUM = (
    ShortRun("ppo", "CartPole-v1", "100K steps (the suite's)",
             "benchgen run gymnasium ppo --tasks CartPole-v1 --seeds 0 --set torch_threads=1", 1.3, "500.0 [500.0]"),
    ShortRun("dqn", "CartPole-v1", "50K steps (the suite's)",
             "benchgen run gymnasium dqn --tasks CartPole-v1 --seeds 0 --set torch_threads=1", 2.2, "500.0 [238.1]"),
    ShortRun("ppo", "MountainCar-v0", "1M steps (the suite's)",
             "benchgen run gymnasium ppo --tasks MountainCar-v0 --seeds 0 --set torch_threads=1", 6.4,
             "-110.6 [-118.2]"),
)  # fmt: skip
MINATAR = (
    ShortRun("ppo", "breakout", "1M frames",
             "benchgen run minatar ppo --tasks breakout --frames 1M --seeds 0 --set torch_threads=1", 4.8,
             "last-100 mean 5.2",
             "a shortfall: last-100 mean 5.07 against the quoted 5.2 (the quoted per-100K means were 1.67 to "
             "5.11, these 1.67 to 5.09), still above the slow check's 5 (random play 0.51); 4.8 min beside two "
             "benchmark lanes against the quoted 2.5"),
)  # fmt: skip
#: the runs of the same pages that take longer than these short ones (not re-run for the pages)
NOT_RUN = {
    "gymnasium": "`dqn` on Acrobot-v1 (24 min) and MountainCar-v0 (11 min) and `ppo` on Acrobot-v1 (12 min)",
    "minatar": "`dqn` (90 min), `rainbow` (1M frames) and `rainbow_iqn` (250K frames)",
}


def last_mean(scores: np.ndarray, n: int = 100) -> float | None:
    return float(np.mean(scores[-n:])) if len(scores) else None


def gymnasium_page() -> Page:
    """Classic control: each run's greedy evaluation beside the RL Zoo's published score."""
    # the RL Zoo's published scores, the suite's data (not a table of ``benchgen references gymnasium``,
    # which has gymnasium's reward thresholds only)
    folder, zoo = RESULTS / "gymnasium", rl_zoo_scores()
    threshold = references("gymnasium")["reward_threshold"]
    body = [
        "The suite's RL Baselines3 Zoo settings and budgets (`plugins/gymnasium_suite/tuned/`), scored as "
        "the RL Zoo scores (`benchmark.md`): the trained agent evaluated greedily, here `benchgen evaluate "
        "RUN --episodes 100`; the last-100 training-episode mean (exploration included) in brackets. "
        "Published: the RL Zoo's `benchmark.md` at commit 22e3ff2 (not shipped as a reference table: "
        "`benchgen references gymnasium` has only gymnasium's `reward_threshold`, shown beside it; the "
        "numbers are the suite's `plugins/gymnasium_suite/data/rl_zoo_benchmark.csv`). "
        f"Quoted: the first measurement of the same command, in {LEARNING_MD}; this run is a second one.",
        "",
        "| agent | task | budget | greedy [training] here | quoted | RL Zoo | reward threshold | minutes | command |",
        "|---|---|---|---:|---:|---:|---:|---:|---|",
    ]
    inputs, panels = [], []
    for run in GYMNASIUM:
        path, eval_path = (folder / f"{run.agent}-{run.task}-seed0{end}.csv" for end in ("", "-eval"))
        if not path.is_file():
            body.append(f"| {run.agent} | {run.task} | {run.budget} | not run | {run.quoted} | "
                        f"{fmt(zoo.get((run.agent, run.task)))} | {fmt(threshold.scores.get(run.task))} | - | `{run.command}` |")  # fmt: skip
            continue
        train = read_run(path)
        inputs.append(path)
        greedy = None
        if eval_path.is_file():
            inputs.append(eval_path)
            _, episodes = next(iter(read_run(eval_path).phases.values()))  # its one phase
            greedy = float(np.mean(episodes))
        frames, scores = train.curve("train")
        ours = f"{fmt(greedy)} [{fmt(last_mean(scores))}]"
        published = zoo.get((run.agent, run.task))
        body.append(f"| {run.agent} | {run.task} | {run.budget} | {ours} | {run.quoted} | {fmt(published)} | "
                    f"{fmt(threshold.scores.get(run.task))} | {run.minutes:.1f} | `{run.command}` |")  # fmt: skip
        panels.append(
            Panel(
                f"{run.agent}, {run.task}",
                [(f"seed {train.seed}, training", frames, scores)],
                [
                    (f"RL Zoo {fmt(published)}", published, "--"),
                    (f"reward threshold {fmt(threshold.scores.get(run.task))}", threshold.scores.get(run.task), ":"),
                ],
                [(f"greedy evaluation {fmt(greedy)}", frames[-1], greedy)] if len(frames) else [],
            )  # fmt: skip
        )
    body += [""] + [f"- {run.agent} on {run.task}: {run.note}." for run in GYMNASIUM if run.note]
    body += ["", f"Not re-run for this page (longer): {NOT_RUN['gymnasium']}; their numbers are in {LEARNING_MD}.", ""]
    figures = {}
    if panels:
        figures["curves.png"] = lambda out: draw_panels(panels, out, xlabel="steps played")
        body += ["![classic control learning curves](curves.png)", ""]
    return Page(
        "Gymnasium classic control against the RL Baselines3 Zoo",
        [f"Machine: {DEV_MACHINE}. Seed: 0. Each command ran with `nice -n 5`.", ""] + body,
        inputs,
        figures,
    )


def minatar_page() -> Page:
    """MinAtar Breakout: the training curve and its last-100 mean (no published table is shipped)."""
    folder = RESULTS / "minatar"
    body = [
        "The `examples/minatar` plugin's settings for each agent. MinAtar ships no reference table "
        "(`benchgen references minatar` lists none): Young and Tian's (2019) numbers are not shipped, so "
        "none is drawn. Quoted: the first measurement of the same command, "
        f"in {LEARNING_MD}; this run is a second one.",
        "",
        "| agent | task | budget | mean score per 100K frames | last-100 mean (episodes) | quoted | minutes | command |",
        "|---|---|---|---|---:|---:|---:|---|",
    ]
    inputs, panels = [], []
    for run in MINATAR:
        path = folder / f"{run.agent}-{run.task}-seed0.csv"
        if not path.is_file():
            body.append(
                f"| {run.agent} | {run.task} | {run.budget} | not run | - | {run.quoted} | - | `{run.command}` |"
            )
            continue
        inputs.append(path)
        train = read_run(path)
        frames, scores = train.curve("train")
        bins = [scores[(frames > lo) & (frames <= lo + 100_000)] for lo in range(0, int(frames.max()), 100_000)]
        per_100k = ", ".join(f"{np.mean(b):.2f}" for b in bins if len(b))
        last = last_mean(scores)
        body.append(f"| {run.agent} | {run.task} | {run.budget} | {per_100k} | {last:.2f} ({len(scores):,}) | "
                    f"{run.quoted} | {run.minutes:.1f} | `{run.command}` |")  # fmt: skip
        panels.append(Panel(f"{run.agent}, {run.task}", [(f"seed {train.seed}", frames, scores)], [],
                            [(f"last-100 mean {fmt(last)}", frames[-1], last)]))  # fmt: skip
    body += [""] + [f"- {run.agent} on {run.task}: {run.note}." for run in MINATAR if run.note]
    body += ["", f"Not re-run for this page (longer): {NOT_RUN['minatar']}; their numbers are in {LEARNING_MD}.", ""]
    figures = {}
    if panels:
        figures["curves.png"] = lambda out: draw_panels(panels, out)
        body += ["![MinAtar Breakout learning curve](curves.png)", ""]
    return Page(
        "MinAtar Breakout",
        [f"Machine: {DEV_MACHINE}. Seed: 0. Each command ran with `nice -n 5`.", ""] + body,
        inputs,
        figures,
    )
