"""Data-parallel PPO: Nichol et al. 2018's joint PPO ("Gotta Learn Fast", section 4.5).

"We run 188 parallel workers, each of which is assigned a level from the training set. At every
gradient step, all the workers average their gradients together, ensuring that the policy is
trained evenly across the entire training set." Besides that, the hyperparameters are regular
PPO's: per worker a rollout of 8192 steps, 4 epochs, minibatch 8192.

Each worker (:class:`PPOWorkerProgram`, run by :mod:`benchgen_agents.data_parallel.engine`) owns a
stable-baselines3 ``PPO`` over its own environments and collects its own rollouts with SB3's
``collect_rollouts``. SB3's ``train`` then does the epochs and minibatches unchanged, except that
the policy's ``evaluate_actions`` (the one forward pass of every minibatch's loss) runs through
``torch.nn.parallel.DistributedDataParallel``: its backward pass averages the gradients over the
workers (the engine's timed all-reduce as DDP's communication hook) before SB3 clips their norm
and Adam steps. Every worker therefore takes the same step from the same weights: the gradient
of the mean loss over all workers' minibatches, the update a single process would take on their
concatenation at the same learning rate. Two things stay per worker, as in OpenAI baselines' MPI
PPO that the paper's code builds on: advantages are normalized over each worker's own minibatch,
and each worker shuffles its own rollout.

The driver (:func:`learn_data_parallel`, the unit's process) ships the starting state (a fresh
policy drawn from the unit's seed, or the loaded checkpoint), plays rounds (one rollout and its
update per worker; the budget's last, partial round is played but not learned from, as the
single-process agent stops mid-rollout), records every worker's episodes, and writes the agent's
checkpoints from rank 0's state: the same ``ppo.pt`` as the single-process agent's, so zero-shot
and fine-tuning units load them unchanged.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.logger import Logger
from stable_baselines3.common.utils import set_random_seed
from torch.nn.parallel import DistributedDataParallel

from benchgen.agent import AgentEnvironment, TrainingContext
from benchgen_agents.data_parallel.engine import (
    DataParallelGroup,
    GradientAverager,
    RoundPlan,
    WorkerProgram,
    cpu_copy,
    import_ray,
)
from benchgen_agents.ppo.config import PPOConfig
from benchgen_agents.ppo.vec_env import BenchgenVecEnv


class _EvaluateActions(torch.nn.Module):
    """The policy's ``evaluate_actions`` as a module's ``forward``, so that DDP can wrap it."""

    def __init__(self, policy):
        super().__init__()
        self.policy = policy

    def forward(self, observations, actions):
        return type(self.policy).evaluate_actions(self.policy, observations, actions)


class PPOWorkerProgram(WorkerProgram):
    """One joint-PPO worker: SB3 PPO over its environments, gradients averaged through DDP."""

    def __init__(self, config: PPOConfig, environment: AgentEnvironment, agent_class: type):
        # ``agent_class``: the single-process agent (``PPOAgent``), whose SB3 settings the worker
        # takes; handed in by the agent, so that this module does not import it back
        self.config, self.environment, self.agent_class = config, environment, agent_class
        self.model: PPO | None = None

    def setup(self, env, rank: int, world_size: int, averager: GradientAverager, state: Any, seed: int) -> None:
        agent = self.agent_class(self.config, self.environment)
        vec = BenchgenVecEnv(env, clip_reward=self.config.clip_reward, reward_scale=self.config.reward_scale)
        set_random_seed(seed)  # this worker's action sampling and minibatch shuffles
        model = PPO(
            agent.policy,
            vec,
            policy_kwargs=agent._policy_kwargs(),  # noqa: SLF001 - the same network as the single agent
            device=self.config.device,
            seed=None,
            verbose=0,
            **agent._hyperparameters(),  # noqa: SLF001
        )
        model.policy.load_state_dict(state["policy"])
        model.policy.optimizer.load_state_dict(state["optimizer"])
        model._n_updates = int(state["n_updates"])  # noqa: SLF001
        ddp = DistributedDataParallel(_EvaluateActions(model.policy), broadcast_buffers=False)
        ddp.register_comm_hook(None, averager.ddp_hook)
        # SB3's train() calls policy.evaluate_actions once per minibatch, then loss.backward():
        # through DDP, that backward leaves the workers' mean gradient in every parameter.
        # (DDP's bound __call__, not DDP itself: a module attribute would become a submodule of
        # the policy, in a cycle with the policy DDP wraps)
        model.policy.evaluate_actions = ddp.__call__
        model.set_logger(Logger(folder=None, output_formats=[]))
        vec.seed(seed)
        # SB3's own set-up of a learn call: episode statistics, the env's (seeded) reset, a callback
        _total, self.callback = model._setup_learn(0, None, reset_num_timesteps=True)  # noqa: SLF001
        self.model, self.world_size, self.ddp = model, world_size, ddp

    def play_round(self, plan: RoundPlan) -> dict[str, float]:
        model = self.model
        start = time.perf_counter()
        model.num_timesteps = plan.steps_done
        model.collect_rollouts(model.env, self.callback, model.rollout_buffer, n_rollout_steps=plan.steps)
        stats: dict[str, float] = {"rollout_seconds": time.perf_counter() - start}
        if plan.learn:
            # SB3's progress after the rollout, counted over all workers' steps (the schedules)
            done = plan.steps_done + plan.steps * model.n_envs * self.world_size
            model._current_progress_remaining = max(0.0, 1.0 - done / max(1, plan.budget_steps))  # noqa: SLF001
            start = time.perf_counter()
            model.train()
            stats["update_seconds"] = time.perf_counter() - start
            values = model.logger.name_to_value
            stats |= {k: float(v) for k, v in values.items() if isinstance(v, (int, float, np.number))}
            values.clear()
            model.logger.name_to_count.clear()
        return stats

    def state(self) -> dict[str, Any]:
        model = self.model
        return {
            "policy": cpu_copy(model.policy.state_dict()),
            "optimizer": cpu_copy(model.policy.optimizer.state_dict()),
            "n_updates": int(model._n_updates),  # noqa: SLF001
        }

    def last_batch(self) -> dict[str, np.ndarray]:
        """The last rollout as SB3's buffer holds it (``(n_steps, n_envs, ...)`` arrays): what the
        worker's last update learned from (to check the averaged update against one process's)."""
        buffer = self.model.rollout_buffer
        names = ("observations", "actions", "values", "log_probs", "advantages", "returns")
        return {name: np.array(getattr(buffer, name), copy=True) for name in names}


def envs_per_worker(config: PPOConfig, tasks: int) -> int:
    """Sub-environments per worker: the config's, else one per task spread over the workers."""
    return config.envs_per_worker or max(1, math.ceil(tasks / config.workers))


def learn_data_parallel(agent, ctx: TrainingContext, state: dict[str, Any]) -> dict[str, Any]:
    """Train ``agent`` (a ``PPOAgent``) with ``config.workers`` data-parallel workers from ``state``
    until ``ctx.finished``; returns the last synchronized state. ``agent.data_parallel_state``
    is kept current for the unit's checkpoints."""
    cfg = agent.config
    import_ray()
    envs = envs_per_worker(cfg, len(set(ctx.tasks)) or 1)
    group = DataParallelGroup(
        ctx.ray(),
        ctx.remote_envs(),
        PPOWorkerProgram(cfg, agent.environment, type(agent)),
        workers=cfg.workers,
        envs_per_worker=envs,
        unit_seed=ctx.seed,
        worker_cpus=cfg.worker_cpus,
        max_restarts=cfg.worker_restarts,
        timeout_s=cfg.worker_timeout_s,
        pid_dir=str(ctx.unit_dir / "workers"),
    )
    per_round = cfg.workers * envs * cfg.n_steps
    agent.data_parallel_state = state
    group.start(state, ctx.steps_done)
    rounds = 0
    try:
        while not ctx.finished:
            remaining = ctx.budget_steps - ctx.steps_done
            learn = remaining >= per_round
            steps = cfg.n_steps if learn else math.ceil(remaining / (cfg.workers * envs))
            start = time.perf_counter()
            result = group.play_round(RoundPlan(steps, learn, ctx.steps_done, ctx.budget_steps))
            wall = time.perf_counter() - start
            for report in result.reports:
                ctx.report_remote_episodes(report)
            state = agent.data_parallel_state = result.state
            rounds += 1
            if learn and rounds % cfg.log_interval == 0:
                _log_round(ctx, result.stats, steps * envs * cfg.workers, wall, group.restarts)
            ctx.maybe_checkpoint()
    finally:
        group.stop()
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
