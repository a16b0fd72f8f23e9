"""Running a run's unfinished units with the executor its config names.

In this process (the zero-setup default), in N local processes (``--jobs N``, see
:mod:`benchgen.run.local`) or on a Ray cluster (``--executor ray``, see
:mod:`benchgen.run.ray_cluster`). The two executors are siblings over
:mod:`benchgen.run.schedule`; only this module chooses between them.
"""

from __future__ import annotations

from benchgen.results.rundir import RunDir
from benchgen.run.plan import ResolvedRun


def run_units(run_dir: RunDir, r: ResolvedRun, progress) -> None:
    """Run the unfinished units of ``run_dir`` (a validated run: see ``benchgen.run.plan``)."""
    if r.run.executor == "ray":
        from benchgen.run.ray_cluster import run_ray

        run_ray(run_dir, r, progress)
        return
    from benchgen.run.local import run_in_process, run_parallel

    if r.run.jobs > 1:
        run_parallel(run_dir, r, progress)
    else:
        run_in_process(run_dir, r, progress)


def preflight(r: ResolvedRun) -> None:
    """Checks of the machine that must pass before anything is written (executor reachable)."""
    if r.run.executor == "ray":
        from benchgen.run.ray_cluster import connect

        connect(r.run.ray_address, r.run.cpus_per_unit, r.run.gpus_per_unit)
