"""Data-parallel PPO: Nichol et al. 2018's joint PPO ("Gotta Learn Fast", section 4.5).

"We run 188 parallel workers, each of which is assigned a level from the training set. At every
gradient step, all the workers average their gradients together, ensuring that the policy is
trained evenly across the entire training set." Besides that, the hyperparameters are regular
PPO's: per worker a rollout of 8192 steps, 4 epochs, minibatch 8192.

The math and the speed are separate settings. ``virtual_workers`` is the paper's worker count
(188 on Sonic): each virtual worker (:class:`~benchgen_agents.ppo.rollout.VirtualWorker`) plays its
own environments (one training level each), collects its own rollout, shuffles it into its own
minibatches and normalizes advantages over each of them, as each MPI worker of OpenAI baselines'
PPO, which the paper's code builds on, does. ``workers`` is how many processes host them (Ray
actors, run by :mod:`benchgen_agents.data_parallel.engine`; 0 or 1: the unit's own process,
:class:`~benchgen_agents.data_parallel.in_process.InProcessGroup`), each a contiguous share.

At every gradient step (:meth:`PPOWorkerProgram._update`, the one PPO update of
:mod:`benchgen_agents.ppo.update`) each virtual worker adds the gradient of its PPO loss on its
own i-th minibatch to the policy's gradients; the processes all-reduce these sums, divide by
``virtual_workers``, clip the norm and take the Adam step: the paper's average over its workers,
whatever the number of processes, up to the order of float sums.
Every virtual worker's randomness (environment seed, action sampling, shuffles) comes from the
unit's seed, the steps done and its index alone, so 1 process and 2 play the same episodes
and reach the same weights.

The driver (:func:`learn_data_parallel`, the unit's process) ships the starting state (a fresh
policy drawn from the unit's seed, or the loaded checkpoint), plays rounds (one rollout and its
update per virtual worker; the budget's last, partial round is played but not learned from, as
the single-process agent stops mid-rollout), records every virtual worker's episodes, and writes
the agent's checkpoints from rank 0's state at round ends: the same ``ppo.pt`` as the
single-process agent's, so zero-shot and fine-tuning units load them unchanged. A resumed unit
starts its virtual workers' environments and generators afresh from seeds drawn from (unit seed,
steps done, virtual index), so a resume too does not depend on the number of processes.
"""

from __future__ import annotations

import math
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from benchgen.agent import AgentEnvironment, TrainingContext
from benchgen.errors import UsageError
from benchgen_agents.data_parallel.engine import (
    DataParallelGroup,
    GradientAverager,
    RoundPlan,
    WorkerProgram,
    cpu_copy,
    hosted_share,
    import_ray,
)
from benchgen_agents.data_parallel.in_process import InProcessGroup
from benchgen_agents.ppo.config import PPOConfig
from benchgen_agents.ppo.frames import stackable
from benchgen_agents.ppo.rollout import VirtualWorker
from benchgen_agents.ppo.update import ppo_update, update_chunk
from benchgen_agents.ppo.vec_env import channels_last

GIB = 2**30


class PPOWorkerProgram(WorkerProgram):
    """One process's share of joint PPO's virtual workers; see the module docstring.
    ``storage``: where rollouts too large for ``config.rollout_memory_gib`` are memory-mapped
    (a directory of the unit's; None: always in memory)."""

    def __init__(self, config: PPOConfig, environment: AgentEnvironment, agent_class: type, storage: str | None = None):
        # ``agent_class``: the single-process agent (``PPOAgent``), whose network and schedules the
        # program takes; handed in by the agent, so that this module does not import it back
        self.config, self.environment, self.agent_class = config, environment, agent_class
        self.storage = storage
        self.workers: list[VirtualWorker] = []
        #: the last update's minibatches: per epoch, per hosted worker, flat indices (last_batch)
        self.last_minibatches: list[list[list[np.ndarray]]] = []

    def setup(self, env, rank: int, world_size: int, averager: GradientAverager, state: Any, seed: int) -> None:
        self.setup_hosted([env], [rank], world_size, rank, world_size, averager, state, [seed])

    def setup_hosted(self, envs, virtual, virtual_workers, rank, world_size, averager, state, seeds) -> None:
        agent = self.agent_class(self.config, self.environment)
        schedules = agent._hyperparameters()  # noqa: SLF001 - the single agent's lr and clip schedules
        self.lr_schedule, self.clip_schedule = schedules["learning_rate"], schedules["clip_range"]
        policy = agent._new_policy()  # noqa: SLF001 - the same network as the single agent
        policy.load_state_dict(state["policy"])
        policy.optimizer.load_state_dict(state["optimizer"])
        self.policy, self.n_updates = policy, int(state["n_updates"])
        self.averager, self.virtual_workers = averager, int(virtual_workers)
        per_worker = rollout_bytes(self.config, self.environment.observation_space, envs[0].num_envs)
        spill = self.storage is not None and per_worker * len(envs) > self.config.rollout_memory_gib * GIB
        storage = Path(self.storage) if spill else None
        self.workers = [VirtualWorker(v, env, seed, self.config, storage) for v, env, seed in zip(virtual, envs, seeds)]

    def play_round(self, plan: RoundPlan) -> dict[str, float]:
        start = time.perf_counter()
        for worker in self.workers:
            worker.collect(self.policy, plan.steps)
        stats: dict[str, float] = {"rollout_seconds": time.perf_counter() - start}
        if plan.learn:
            # the schedules' progress after the round, counted over all virtual workers' steps
            done = plan.steps_done + plan.steps * self.workers[0].n_envs * self.virtual_workers
            start = time.perf_counter()
            stats |= self._update(max(0.0, 1.0 - done / max(1, plan.budget_steps)))
            stats["update_seconds"] = time.perf_counter() - start
        return stats

    def _update(self, progress_remaining: float) -> dict[str, float]:
        """``n_epochs`` passes of the one PPO update (:func:`benchgen_agents.ppo.update.ppo_update`);
        each gradient step takes every hosted virtual worker's own next minibatch, and between
        their backward passes and the step the processes sum their gradients, which are then
        divided by ``virtual_workers``: the mean over all virtual workers (section 4.5)."""
        c, policy = self.config, self.policy
        lr, clip = self.lr_schedule(progress_remaining), self.clip_schedule(progress_remaining)
        self.last_minibatches = []

        def epoch():
            batches = [worker.minibatches() for worker in self.workers]  # each its own shuffle
            self.last_minibatches.append(batches)
            for i in range(len(batches[0])):
                yield [w.minibatch(mb[i], policy.device) for w, mb in zip(self.workers, batches)]

        def average(parameters: list[torch.nn.Parameter]) -> None:
            self.averager.sum(parameters)  # all processes' sum
            for p in parameters:
                p.grad.div_(self.virtual_workers)  # the paper's average over its workers

        stats = ppo_update(
            policy,
            epoch,
            c,
            learning_rate=lr,
            clip_range=clip,
            clip_range_vf=c.clip_range_vf,
            chunk=update_chunk(c, policy.device),
            after_backward=average,
        )
        self.n_updates += stats.pop("epochs")
        stats = {f"train/{key}": value for key, value in stats.items()}
        return stats | {
            "train/learning_rate": float(lr),
            "train/clip_range": float(clip),
            "train/n_updates": self.n_updates,
        }

    def state(self) -> dict[str, Any]:
        policy = self.policy
        return {
            "policy": cpu_copy(policy.state_dict()),
            "optimizer": cpu_copy(policy.optimizer.state_dict()),
            "n_updates": int(self.n_updates),
        }

    def last_batch(self) -> dict[str, Any]:
        """The last rollouts of the hosted virtual workers side by side, as SB3's buffer holds
        them (``(n_steps, sub-environments, ...)`` arrays, observations as float32), and the
        minibatches of the last update (per epoch, per hosted worker, flat indices ``env *
        n_steps + step`` into that worker's rollout): what the update learned from."""
        names = ("observations", "actions", "values", "log_probs", "advantages", "returns")
        out: dict[str, Any] = {}
        for name in names:
            arrays = [np.asarray(getattr(w, name))[: w.steps] for w in self.workers]
            out[name] = np.concatenate(arrays, axis=1).astype(np.float32 if name == "observations" else None)
        out["minibatches"] = self.last_minibatches
        out["virtual"] = [w.index for w in self.workers]
        return out


def rollout_bytes(config: PPOConfig, observation_space, envs: int) -> int:
    """Bytes one virtual worker's rollout observations take: uint8 frames stay uint8 (others
    float32), and frame stacks keep one new frame per step (:mod:`benchgen_agents.ppo.frames`;
    the whole stacks at episode starts come on top, a small share)."""
    shape = _sb3_shape(observation_space)
    item = 1 if observation_space.dtype == np.uint8 else 4
    per_step = int(np.prod(shape[1:] if stackable(shape, observation_space.dtype) else shape))
    return per_step * item * envs * config.n_steps


def _sb3_shape(space) -> tuple[int, ...]:
    """The observation shape the policy sees: channel-last images channel-first, as SB3 wraps them."""
    shape = tuple(space.shape)
    return (shape[-1], *shape[:-1]) if channels_last(space) else shape


def virtual_workers(config: PPOConfig) -> int:
    """The paper's worker count the update averages over: ``virtual_workers``, else one per process."""
    return config.virtual_workers or config.workers


def envs_per_worker(config: PPOConfig, tasks: int) -> int:
    """Sub-environments per virtual worker: the config's, else one per task spread over them."""
    return config.envs_per_worker or max(1, math.ceil(tasks / virtual_workers(config)))


def rollout_storage(config: PPOConfig, observation_space, envs: int, unit_dir: Path) -> Path | None:
    """Where the rollouts go: None (memory) if the busiest process's share fits
    ``rollout_memory_gib``, else ``unit_dir/rollouts`` (memory-mapped files), after checking that
    its disk holds all of them: a one-line ``UsageError`` saying what is needed otherwise."""
    total_workers, processes = virtual_workers(config), max(1, config.workers)
    per_worker = rollout_bytes(config, observation_space, envs)
    busiest = len(hosted_share(0, processes, total_workers)) * per_worker
    if busiest <= config.rollout_memory_gib * GIB:
        return None
    directory = Path(unit_dir) / "rollouts"
    need = total_workers * per_worker
    free = shutil.disk_usage(Path(unit_dir)).free
    if need > free:
        raise UsageError(
            f"joint PPO's {total_workers} virtual workers keep {need / GIB:.1f} GiB of rollouts per round "
            f"({total_workers} x {envs} x {config.n_steps} observations); {busiest / GIB:.1f} GiB per process "
            f"exceeds rollout_memory_gib={config.rollout_memory_gib:g} and the run directory's disk has "
            f"{free / GIB:.1f} GiB free: free disk space, raise rollout_memory_gib, or lower n_steps"
        )
    return directory


def learn_data_parallel(agent, ctx: TrainingContext, state: dict[str, Any]) -> dict[str, Any]:
    """Train ``agent`` (a ``PPOAgent``) with its virtual workers, hosted by ``config.workers``
    processes (0 or 1: this one), from ``state`` until ``ctx.finished``; returns the last
    synchronized state. ``agent.data_parallel_state`` is kept current for the unit's checkpoints."""
    cfg = agent.config
    total = virtual_workers(cfg)
    envs = envs_per_worker(cfg, len(set(ctx.tasks)) or 1)
    storage = rollout_storage(cfg, agent.environment.observation_space, envs, ctx.unit_dir)
    program = PPOWorkerProgram(cfg, agent.environment, type(agent), None if storage is None else str(storage))
    if cfg.workers <= 1:
        group = InProcessGroup(
            ctx.remote_envs(), program, virtual_workers=total, envs_per_worker=envs, unit_seed=ctx.seed
        )
    else:
        import_ray()
        group = DataParallelGroup(
            ctx.ray(),
            ctx.remote_envs(),
            program,
            workers=cfg.workers,
            virtual_workers=total,
            envs_per_worker=envs,
            unit_seed=ctx.seed,
            worker_cpus=cfg.worker_cpus,
            max_restarts=cfg.worker_restarts,
            timeout_s=cfg.worker_timeout_s,
            pid_dir=str(ctx.unit_dir / "workers"),
        )
    per_round = total * envs * cfg.n_steps
    agent.data_parallel_state = state
    rounds = 0
    try:
        group.start(state, ctx.steps_done)
        while not ctx.finished:
            remaining = ctx.budget_steps - ctx.steps_done
            learn = remaining >= per_round
            steps = cfg.n_steps if learn else math.ceil(remaining / (total * envs))
            start = time.perf_counter()
            result = group.play_round(RoundPlan(steps, learn, ctx.steps_done, ctx.budget_steps))
            wall = time.perf_counter() - start
            for report in result.reports:
                ctx.report_remote_episodes(report)
            state = agent.data_parallel_state = result.state
            rounds += 1
            if learn and rounds % cfg.log_interval == 0:
                _log_round(ctx, result.stats, steps * envs * total, wall, group.restarts)
            ctx.maybe_checkpoint()
    finally:
        group.stop()
        if storage is not None and storage.is_dir() and not storage.is_symlink():
            shutil.rmtree(storage, ignore_errors=True)  # the round's rollouts, written by this unit
    return state


def _log_round(ctx: TrainingContext, stats: list[dict[str, float]], steps: int, wall: float, restarts: int) -> None:
    """Rank 0's SB3 statistics, and the round's speed and communication share over all workers."""
    for key, value in stats[0].items():
        if key.startswith("train/"):
            ctx.log_scalar(key, value)
    busy = float(np.mean([s["round_seconds"] for s in stats]))
    comm = float(np.mean([s["communication_seconds"] for s in stats]))
    ctx.log_scalar("data_parallel/steps_per_second", steps / max(wall, 1e-9))
    ctx.log_scalar("data_parallel/communication_share", comm / max(busy, 1e-9))
    ctx.log_scalar("data_parallel/restarts", float(restarts))
