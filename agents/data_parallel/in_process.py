"""All of a data-parallel agent's virtual workers in the unit's own process: no Ray, no process group.

Gradient accumulation (:mod:`benchgen_agents.data_parallel.engine`, "Virtual workers") makes the
number of processes a matter of speed: one process hosting all ``V`` virtual workers sums their
gradients and divides by ``V``, the same step ``V`` processes take after their all-reduce. This
group is :class:`~benchgen_agents.data_parallel.engine.DataParallelGroup`'s interface over one
:class:`~benchgen_agents.data_parallel.engine.DataParallelWorker` built here, so the paper's
setup runs on any machine (``workers`` 0 or 1), only slower.
"""

from __future__ import annotations

from typing import Any

from benchgen_agents.data_parallel.engine import DataParallelWorker, RoundPlan, RoundResult, WorkerProgram, worker_seed


class InProcessGroup:
    """One process hosting every virtual worker; ``play_round`` as the Ray group's."""

    def __init__(
        self, env_factory, program: WorkerProgram, *, virtual_workers: int, envs_per_worker: int, unit_seed: int
    ):
        self.env_factory, self.program = env_factory, program
        self.virtual_workers, self.envs_per_worker = int(virtual_workers), int(envs_per_worker)
        self.unit_seed = unit_seed
        #: a lost process is the unit's own: nothing to restart (the runner's retry resumes it)
        self.restarts = 0
        self.state: Any = None
        self.worker: DataParallelWorker | None = None

    def start(self, state: Any, steps_done: int) -> None:
        """Build every virtual worker's environment (seeded as the Ray group seeds them: from the
        unit's seed, the steps done and the virtual worker's index) and the learner."""
        hosted = list(range(self.virtual_workers))
        seeds = [worker_seed(self.unit_seed, steps_done, v, 0) for v in hosted]
        self.state = state
        # threads 0: keep the unit's own torch thread setting
        self.worker = DataParallelWorker(
            self.program, self.env_factory, 0, 1, self.envs_per_worker, seeds[0], 0, hosted, self.virtual_workers, seeds
        )
        self.worker.setup(state)

    def play_round(self, plan: RoundPlan) -> RoundResult:
        reports, stats, state = self.worker.play_round(plan)
        self.state = state
        return RoundResult(reports, [stats], state)

    def stop(self) -> None:
        """Close the hosted environments."""
        if self.worker is None:
            return
        for env in self.worker.envs:
            try:
                env.close()
            except Exception:  # pragma: no cover - closing a broken env
                pass
        self.worker = None
