"""A fixture agent that plays only in other processes: any agent can use the agent contract's
remote environments (:mod:`benchgen.remote`), not only Ape-X, and without Ray.

``remote_random`` starts ``workers`` processes (multiprocessing, spawned). Worker ``w`` builds the
unit's environment with the factory of ``ctx.remote_envs()`` (``worker=w``), plays uniformly random
actions for each chunk of vector steps the agent asks for, and sends back its collector's sealed
report; the agent passes every report to ``ctx.report_remote_episodes``. It asks for at most the
budget, so the unit's frame counter ends exactly at a budget that is a multiple of a round.

``forge`` makes it pass one doctored report after its first real one, as a test of the
protocol's integrity: ``"score"`` raises an episode's score in a real report and keeps its seal,
``"invent"`` makes a report by hand, ``"again"`` passes a real report a second time. The runner
refuses each (the run fails, nothing of the doctored report is recorded).
"""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import benchgen
from benchgen.agent import Agent, AgentSpec
from benchgen.errors import UsageError
from benchgen.remote import RemoteEpisodes

FORGED_SCORE = 1e6
FORGERIES = ("", "score", "invent", "again")


@dataclass
class RemoteRandomConfig:
    """Workers and their chunks; ``forge`` for integrity tests only."""

    workers: int = 2
    """Processes that play the unit's environment."""
    chunk_steps: int = 10
    """Vector steps a worker plays per request."""
    forge: str = ""
    """Empty (honest), or "score", "invent", "again": the doctored report to pass (module docstring)."""

    def __post_init__(self):
        if self.workers < 1 or self.chunk_steps < 1:
            raise UsageError("remote_random needs workers >= 1 and chunk_steps >= 1; set them with --set")
        if self.forge not in FORGERIES:
            raise UsageError(f"forge must be one of {list(FORGERIES)}; got '{self.forge}'")


def play(factory, num_envs: int, seed: int, worker: int, conn) -> None:
    """A worker process: build the unit's env, then play each chunk asked for and send its report."""
    try:
        env, collector = factory(num_envs, seed, worker=worker)
        env.reset(seed=seed)
    except Exception as exc:  # the agent raises it in the unit's process
        conn.send(exc)
        return
    conn.send(int(env.num_envs))
    rng = np.random.default_rng(seed)
    for steps in iter(conn.recv, None):
        for _ in range(steps):
            env.step(rng.integers(0, env.single_action_space.n, env.num_envs))
        conn.send(collector.report())
    env.close()


def receive(conn):
    """A worker's next message; its exception, raised here."""
    message = conn.recv()
    if isinstance(message, Exception):
        raise message
    return message


def doctored(report: RemoteEpisodes, forge: str) -> RemoteEpisodes:
    """The report ``forge`` names, made from a real one."""
    facts = json.loads(report.payload)
    if forge == "score":
        facts["episodes"][0]["score"] = FORGED_SCORE
        return RemoteEpisodes(json.dumps(facts).encode(), report.seal)
    if forge == "invent":
        made_up = {
            "collector": "by-hand",
            "sequence": 0,
            "frames": 0,
            "episodes": [dict(facts["episodes"][0], score=FORGED_SCORE)],
        }
        return RemoteEpisodes(json.dumps(made_up).encode(), bytes(len(report.seal)))
    return report  # "again"


class RemoteRandomAgent(Agent):
    """Uniform random actions, played by worker processes only (see the module docstring)."""

    def learn(self, env, ctx) -> None:
        cfg = self.config
        factory = ctx.remote_envs()
        spawn = multiprocessing.get_context("spawn")
        seeds = np.random.SeedSequence([ctx.reset_seed]).generate_state(cfg.workers)
        pipes, procs = [], []
        try:
            for w in range(cfg.workers):
                mine, theirs = spawn.Pipe()
                proc = spawn.Process(target=play, args=(factory, env.num_envs, int(seeds[w]), w, theirs), daemon=True)
                proc.start()
                pipes.append(mine)
                procs.append(proc)
            sizes = [receive(pipe) for pipe in pipes]
            assigned, forged = ctx.steps_done, False
            while not ctx.finished:
                asked = []
                for pipe, size in zip(pipes, sizes):
                    steps = min(cfg.chunk_steps, -(-(ctx.budget_steps - assigned) // size))
                    if steps > 0:
                        pipe.send(steps)
                        assigned += steps * size
                        asked.append(pipe)
                if not asked:
                    break
                for pipe in asked:
                    report = receive(pipe)
                    ctx.report_remote_episodes(report)
                    if cfg.forge and not forged and report.episodes:
                        forged = True
                        ctx.report_remote_episodes(doctored(report, cfg.forge))
                ctx.maybe_checkpoint()
        finally:
            for pipe in pipes:
                try:
                    pipe.send(None)
                except OSError:  # pragma: no cover - the worker is gone
                    pass
            for proc in procs:
                proc.join(timeout=30)
                if proc.is_alive():  # pragma: no cover
                    proc.terminate()

    def act(self, observations, greedy: bool = True) -> np.ndarray:
        return np.random.default_rng().integers(0, self.action_space.n, len(observations))

    def save(self, directory: Path) -> None:
        (Path(directory) / "remote_random.json").write_text(json.dumps(dataclasses.asdict(self.config)))

    def load(self, directory: Path) -> None:
        pass  # nothing learned: the workers' RNGs are seeded afresh from ctx.reset_seed


@benchgen.hookimpl
def benchgen_agents():
    return [
        AgentSpec(
            name="remote_random",
            config_class=RemoteRandomConfig,
            factory=RemoteRandomAgent,
            description="random actions played in worker processes (remote-environment fixture)",
        )
    ]
