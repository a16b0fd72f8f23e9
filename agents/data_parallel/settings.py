"""The plan-time check of a data-parallel agent's worker settings (``AgentSpec.check_config``)."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from benchgen.errors import UsageError
from benchgen.machine import cpu_count


@dataclasses.dataclass(frozen=True)
class WorkerSettingsCheck:
    """``check_config(config, run)`` for an agent with ``workers``, ``worker_cpus`` and
    ``envs_per_worker`` settings (and, for one that accumulates gradients, ``virtual_workers``): refuses, before anything is written, more workers than a local
    run's machine can hold, and says in the plan how the agent will train."""

    agent: str
    """The agent's name, for the plan's line."""
    paper_setup: str = ""
    """The paper's setup, named in the plan when the agent falls back to one process (empty: the
    agent has no distributed setup of its own to fall short of)."""

    def __call__(self, config: Any, run: Any) -> list[str]:
        workers = int(config.workers)
        virtual = int(getattr(config, "virtual_workers", 0) or 0)
        if virtual and workers <= 1:
            return [
                f"{self.agent}: {virtual} virtual workers x {config.envs_per_worker or 'one per task'} "
                "sub-environments each, their gradients accumulated in this process and averaged at every "
                "step (the update of as many data-parallel workers); --set workers=N spreads them over N "
                "Ray processes, which changes the speed, not the update; fine-tuning units run in one process"
                + _rollouts(config, virtual)
            ]
        if workers == 0:
            if not self.paper_setup:
                return []
            return [
                f"{self.agent}: one process over all sub-environments (workers=0), not the paper's setup "
                f"({self.paper_setup}); --set workers=N trains with N data-parallel workers"
            ]
        need = workers * float(config.worker_cpus)
        if run.executor == "local" and not run.ray_address:
            cpus = cpu_count()
            if need > cpus:
                raise UsageError(
                    f"{self.agent}: workers={workers} x worker_cpus={config.worker_cpus:g} need {need:g} CPUs, "
                    f"this machine has {cpus}: lower workers or worker_cpus (0.5 lets two workers share a "
                    "CPU), or run on a Ray cluster (--executor ray --address HOST:PORT)"
                )
        envs = config.envs_per_worker or "one per task"
        if virtual:
            return [
                f"{self.agent}: {virtual} virtual workers x {envs} sub-environments each, hosted by {workers} "
                "data-parallel processes (Ray actors), gradients accumulated and averaged at every step "
                "(torch.distributed); fine-tuning units run in one process" + _rollouts(config, virtual)
            ]
        return [
            f"{self.agent}: {workers} data-parallel workers (Ray actors) x {envs} sub-environments each, "
            "gradients averaged at every step (torch.distributed); fine-tuning units run in one process"
        ]


def _rollouts(config: Any, virtual: int) -> str:
    """Where the virtual workers' rollouts live, for the plan's line."""
    memory = getattr(config, "rollout_memory_gib", None)
    if memory is None:
        return ""
    return (
        f"; rollouts of {virtual} x {config.n_steps} steps per round kept in memory up to "
        f"rollout_memory_gib={memory:g} per process, beyond it memory-mapped under the unit's directory"
    )


def data_parallel_width(config: Any, num_envs: int, tasks: int, fine_tuning: bool) -> int | None:
    """``AgentSpec.vector_width`` of an agent with ``workers`` and ``envs_per_worker`` settings (and,
    for one that accumulates gradients, ``virtual_workers``): every worker's sub-environments
    together (``envs_per_worker`` each, else one per task for virtual workers, the unit's own for
    processes); None for one process, and for fine-tuning units, which always run as one."""
    if fine_tuning:
        return None
    virtual = int(getattr(config, "virtual_workers", 0) or 0)
    workers = int(getattr(config, "workers", 0) or 0)
    if virtual:
        return virtual * int(config.envs_per_worker or max(1, math.ceil(tasks / virtual)))
    if workers > 1:
        return workers * int(config.envs_per_worker or num_envs)
    return None
