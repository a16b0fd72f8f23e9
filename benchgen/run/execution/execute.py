"""Running a run's unfinished units with the executor its config names.

In this process (the zero-setup default), in N local processes (``--jobs N``, see
:mod:`benchgen.run.execution.local`) or on a Ray cluster (``--executor ray``, see
:mod:`benchgen.run.execution.ray_cluster`). The two executors are siblings over
:mod:`benchgen.run.execution.schedule`; only this module chooses between them.
"""

from __future__ import annotations

from pathlib import Path

from benchgen.results.rundir import RunDir
from benchgen.run.planning.plan import ResolvedRun


def run_units(run_dir: RunDir, r: ResolvedRun, progress) -> None:
    """Run the unfinished units of ``run_dir`` (a validated run: see ``benchgen.run.planning.plan``)."""
    if r.run.executor == "ray":
        from benchgen.run.execution.ray_cluster import run_ray

        run_ray(run_dir, r, progress)
        return
    from benchgen.run.execution.local import run_in_process, run_parallel

    if r.run.jobs > 1:
        run_parallel(run_dir, r, progress)
    else:
        run_in_process(run_dir, r, progress)


def preflight(r: ResolvedRun, checkpoint: str | None = None) -> None:
    """Checks that must pass before anything is written: the executor is reachable, the agent
    can be built for the suite's spaces (an agent that cannot handle them refuses in one line
    here, not after the run directory exists), and ``checkpoint`` (a ``--from`` checkpoint, the
    first agent a re-evaluation plays; None: none) loads into it (a crafted, foreign or damaged
    one is refused here too)."""
    if r.run.executor == "ray":
        from benchgen.run.execution.ray_connect import connect

        connect(r.run.ray_address, r.run.cpus_per_unit, r.run.gpus_per_unit)
    from benchgen.run.execution.build import build_agent, load_checkpoint

    task = (r.split.test or r.split.train)[0] if r.split else r.tasks[0]
    env = r.suite.agent_wrappers(r.suite.make_env([task], seed=0, mode="eval"), r.spec.needs)
    try:
        agent = build_agent(r, env, [task])
        if checkpoint:
            load_checkpoint(agent, Path(checkpoint), "checkpoint", "restore it from a copy of its run, or give another")
    finally:
        env.close()
