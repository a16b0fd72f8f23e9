"""Joint Rainbow as Nichol et al. 2018 ran it ("Gotta Learn Fast", section 4.6, Algorithm 2).

"Each GPU corresponds to a single worker, where each worker has its own replay buffer and eight
environments. The environments are all 'joint environments', meaning that they sample a new
training level at the beginning of every episode." Algorithm 2, per worker, with N = 256:
for each environment, take the next transition and add it to R; sample N transitions from R;
compute the loss; update their priorities in R; average the gradient between workers
(AllReduce); take an Adam step with the averaged gradient. "Besides the unusual batch size and
distributed worker setup, all the hyper-parameters are kept the same as for the regular Rainbow."

Each worker (:class:`RainbowWorkerProgram`, run by :mod:`benchgen_agents.data_parallel.engine`)
holds a whole :class:`~benchgen_agents.rainbow.agent.RainbowAgent` (its network, loss, replay and
update, unchanged) over its environments (the unit's joint environments when the run samples a
task every episode, ``rainbow_joint``'s default), and averages the gradients of every update
through the agent's ``reduce_gradients`` hook (the engine's timed all-reduce). Every worker
updates at the same vector steps (the condition counts the steps it played, the same on every
worker), so their collectives meet and their weights stay identical; target copies happen at the
same unit step on every worker. What stays per worker: the replay and its priorities, the
NoisyNet noise samples and the random warm-up (uniform actions until its own replay holds
``learning_starts_steps`` transitions, for an agent that has not learned yet).

The driver (:func:`learn_data_parallel`, the unit's process) ships the learner's state (networks,
optimizer, counters; a fresh agent's drawn from the unit's seed), plays rounds of ``round_steps``
vector steps, records every worker's episodes and adopts rank 0's state after each round, so the
unit's checkpoints are the single agent's (zero-shot and fine-tuning units load them unchanged).
The replays are not in the state: after a restart or a resume, each worker's fills again before
it updates.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from benchgen.agent import AgentEnvironment, TrainingContext
from benchgen_agents.data_parallel.engine import (
    DataParallelGroup,
    GradientAverager,
    RoundPlan,
    WorkerProgram,
    cpu_copy,
    import_ray,
)


def learner_state(agent) -> dict[str, Any]:
    """What every worker starts from and the driver keeps: networks, optimizer, counters."""
    return {
        "online": cpu_copy(agent.online.state_dict()),
        "target": cpu_copy(agent.target.state_dict()),
        "optimizer": cpu_copy(agent.optimizer.state_dict()),
        "counters": dict(agent.counters),
    }


def adopt(agent, state: dict[str, Any]) -> None:
    """Load a learner state into ``agent`` (a worker's agent, or the driver's for checkpoints)."""
    agent.online.load_state_dict(state["online"])
    agent.target.load_state_dict(state["target"])
    agent.optimizer.load_state_dict(state["optimizer"])
    agent.counters.update(state["counters"])
    agent.target_is_online = False  # new weights: equal again only after the next target copy


class RainbowWorkerProgram(WorkerProgram):
    """One Algorithm 2 worker: a Rainbow agent over its environments and its own replay."""

    def __init__(self, config, environment: AgentEnvironment, agent_class: type):
        # ``agent_class``: the single-process agent (``RainbowAgent``), handed in by the agent so
        # that this module does not import it back
        self.config, self.environment, self.agent_class = config, environment, agent_class

    def setup(self, env, rank: int, world_size: int, averager: GradientAverager, state: Any, seed: int) -> None:
        agent = self.agent_class(self.config, self.environment)
        adopt(agent, state)
        agent.generator.manual_seed(seed)  # this worker's noise samples
        agent.np_rng = np.random.default_rng(seed)  # its replay sampling and random actions
        agent.reduce_gradients = lambda: averager.average(agent.online.parameters())
        self.env, self.agent, self.world_size = env, agent, world_size
        self.num_envs = int(env.num_envs)
        agent.replay = agent.new_replay(self.num_envs)
        self.obs, _info = env.reset(seed=seed)
        for e in range(self.num_envs):
            agent.replay.start_episode(e, self.obs[e])
        #: agent steps this worker played since it started (the same on every worker)
        self.worker_steps = 0
        #: uniform random actions until the replay holds learning_starts (an agent that never learned)
        self.warm_up = agent.counters["updates"] == 0
        sample = agent.replay.sample
        self._last_batch: dict[str, np.ndarray] | None = None

        def remembered(*args, **kwargs):
            self._last_batch = sample(*args, **kwargs)
            return self._last_batch

        agent.replay.sample = remembered

    def play_round(self, plan: RoundPlan) -> dict[str, float]:
        agent, cfg, c = self.agent, self.config, self.agent.counters
        E, W = self.num_envs, self.world_size
        losses, qs, start = [], [], time.perf_counter()
        ready = max(cfg.learning_starts_steps, (cfg.n_step + 1) * E)  # every env has a full transition
        for k in range(plan.steps):
            unit_steps = plan.steps_done + (k + 1) * E * W  # all workers' steps after this vector step
            agent.online.reset_noise(agent.generator)  # fresh noise for every step (and every update)
            if self.warm_up and self.worker_steps < cfg.learning_starts_steps:
                actions = agent.random_actions(E)
            else:
                actions = agent.explore_actions(self.obs)
            next_obs, rewards, terminated, truncated, infos = self.env.step(actions)
            agent.replay.add(self.obs, actions, rewards, terminated, truncated, next_obs, infos.get("final_obs"))
            self.obs = next_obs
            self.worker_steps += E
            c["agent_steps"] = unit_steps
            if plan.learn and self.worker_steps >= ready:
                progress = min(1.0, unit_steps / max(1, plan.budget_steps))
                beta = cfg.priority_weight_start + (cfg.priority_weight_end - cfg.priority_weight_start) * progress
                loss, q = agent.update(beta)  # one batch of batch_size, gradients averaged
                losses.append(loss)
                qs.append(q)
            if unit_steps // cfg.target_update_steps > c["target_syncs"]:
                agent.copy_target()
                c["target_syncs"] = unit_steps // cfg.target_update_steps
        stats = {"updates": float(len(losses)), "play_and_update_seconds": time.perf_counter() - start}
        if losses:
            stats |= {"loss": float(np.mean(losses)), "q_taken": float(np.mean(qs))}
        return stats

    def state(self) -> dict[str, Any]:
        return learner_state(self.agent)

    def last_batch(self) -> dict[str, np.ndarray] | None:
        """The last batch the worker sampled (transitions, importance weights, indices)."""
        return self._last_batch


def learn_data_parallel(agent, ctx: TrainingContext) -> None:
    """Train ``agent`` (a ``RainbowAgent``) with ``config.workers`` Algorithm 2 workers until
    ``ctx.finished``; the agent holds the workers' state after every round."""
    cfg = agent.config
    import_ray()
    agent.seed_once(ctx)  # a fresh agent's networks come from the unit's seed
    group = DataParallelGroup(
        ctx.ray(),
        ctx.remote_envs(),
        RainbowWorkerProgram(cfg, agent.environment, type(agent)),
        workers=cfg.workers,
        envs_per_worker=cfg.envs_per_worker,
        unit_seed=ctx.seed,
        worker_cpus=cfg.worker_cpus,
        max_restarts=cfg.worker_restarts,
        timeout_s=cfg.worker_timeout_s,
        pid_dir=str(ctx.unit_dir / "workers"),
    )
    per_step = cfg.workers * cfg.envs_per_worker
    group.start(learner_state(agent), ctx.steps_done)
    try:
        while not ctx.finished:
            steps = min(cfg.round_steps, math.ceil((ctx.budget_steps - ctx.steps_done) / per_step))
            start = time.perf_counter()
            result = group.play_round(RoundPlan(steps, True, ctx.steps_done, ctx.budget_steps))
            wall = time.perf_counter() - start
            for report in result.reports:
                ctx.report_remote_episodes(report)
            adopt(agent, result.state)
            _log_round(ctx, agent.name, result.stats, steps * per_step, wall, group.restarts)
            ctx.maybe_checkpoint()
    finally:
        group.stop()


def _log_round(ctx: TrainingContext, name: str, stats: list[dict], steps: int, wall: float, restarts: int) -> None:
    first = stats[0]
    if "loss" in first:
        ctx.log_scalar(f"{name}/loss", first["loss"])
        ctx.log_scalar(f"{name}/q_taken", first["q_taken"])
    ctx.log_scalar(f"{name}/updates_per_second", first["updates"] / max(wall, 1e-9))
    busy = float(np.mean([s["round_seconds"] for s in stats]))
    comm = float(np.mean([s["communication_seconds"] for s in stats]))
    ctx.log_scalar("data_parallel/steps_per_second", steps / max(wall, 1e-9))
    ctx.log_scalar("data_parallel/communication_share", comm / max(busy, 1e-9))
    ctx.log_scalar("data_parallel/restarts", float(restarts))
