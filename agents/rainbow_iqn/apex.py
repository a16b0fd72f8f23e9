"""Ape-X Rainbow-IQN: many actors, one learner (SABER's distributed setting; Horgan et al. 2018).

``rainbow_iqn --set actors=N`` starts N actor processes (Ray actors). Each actor

* builds its own copy of the unit's environment with ``actor_envs`` sub-environments and a seed
  of its own, through the agent contract's remote environments (:mod:`benchgen.remote`:
  ``ctx.remote_envs()(actor_envs, seed, worker=actor)`` gives the suite env under an episode
  collector under the suite's agent wrappers);
* acts uniformly at random over all actions while the unit is in its warm-up (the first
  ``learning_starts_steps`` agent steps of the unit, all actors together, as SABER's actors
  each take ``learn_start / nb_actor`` random steps): the learner says with each chunk request
  how many of its vector steps are random, counting from the unit's ``ctx.steps_done``, so a
  resumed unit past its warm-up does not repeat it (``RainbowIQNAgent.warmup_steps``); the
  actor draws them from a numpy generator seeded with its own seed (derived from the unit's);
* then acts with its own copy of the online network and its own noise generator (NoisyNet
  exploration, a fresh noise sample every ``update_period_steps`` of its agent steps, as the
  single agent does);
* steps ``actor_chunk_steps`` vector steps, then computes the *initial priorities* of the n-step
  transitions that the chunk completed (Ape-X: priorities computed by actors before
  insertion) with the learner's loss, using its copies of the online and target networks;
* sends the chunk (the observations, actions, raw rewards, end flags and final observations of
  its streams), the per-transition losses and its collector's sealed report of the finished
  episodes and frames (``collector.report()``).

The learner is the unit's process (``RainbowIQNAgent.learn``). It owns the prioritized replay,
with one stream per (actor, sub-environment), so frame-once storage and n-step logic are the
single agent's; it inserts every chunk and gives the transitions it completed the actor's
priorities. Actors complete transitions with a small replay of their own fed the same steps, so
both sides complete the same transitions in the same order (checked on every chunk). It passes
the report to ``ctx.report_remote_episodes``, which numbers and commits the episodes under the
unit (their ``env_index`` is ``actor * actor_envs + sub-env``) and advances ``ctx.steps_done`` by
their frames. It then updates (``update``, the single agent's), copies the target network every
``target_update_steps`` agent steps, publishes its weights every ``weight_sync_updates`` updates
(one ``ray.put``; each actor receives the newest ones with its next chunk request), and calls
``ctx.maybe_checkpoint()``. Checkpoints are the single agent's: actors are rebuilt from the
saved weights on resume.

Two schedules:

* asynchronous (default, Ape-X): an actor gets its next chunk request as soon as its chunk
  arrives, so it never waits; the learner updates whenever it is not inserting, at most one
  update per ``update_period_steps`` agent steps received;
* ``synchronized=true`` (SABER's single-actor setting): after each chunk of S agent steps the
  learner does S / ``update_period_steps`` updates before that actor continues, so learner and
  actors keep exactly one update per 4 agent steps.

The learner hands out at most the budget: chunk lengths shrink at the end so that the actors
use the unit's budget (rounded up to a multiple of ``actor_envs``) and no more.

Ray is imported here only, when ``actors > 0``, and connected through ``ctx.ray()``: the cluster
of a unit of ``--executor ray``, else a local instance on the loopback interface that the runner
starts for the unit and stops when it ends. Starting, asking and stopping the actors is
:mod:`benchgen_agents.common.ray_engine`'s, shared with the data-parallel groups.
"""

from __future__ import annotations

import copy
import time
from typing import Any

import numpy as np
import torch

from benchgen.agent import TrainingContext
from benchgen.errors import UsageError
from benchgen_agents.common.ray_engine import ActorDriver, RemoteActor, import_ray, seed_from
from benchgen_agents.rainbow_iqn.network import ImplicitQuantileHead
from benchgen_agents.value_based.replay import PrioritizedReplay


def numpy_state(net: torch.nn.Module) -> dict[str, np.ndarray]:
    """A network's state dict as numpy arrays (Ray ships those without copying)."""
    return {k: v.detach().cpu().numpy().copy() for k, v in net.state_dict().items()}


def checksum(state: dict[str, np.ndarray]) -> float:
    """A cheap fingerprint of a state dict (equal weights give equal sums)."""
    items = sorted(state.items())
    return float(sum((i + 1) * float(np.asarray(v, np.float64).sum()) for i, (_, v) in enumerate(items)))


def actor_seed(unit_seed: int, steps_done: int, actor: int) -> int:
    """A seed per actor, different on every resume (fresh envs should not replay old episodes)."""
    return seed_from(unit_seed, steps_done, actor)


def local_capacity(config, num_envs: int) -> int:
    """Slots an actor's n-step builder needs: a chunk, the n - 1 steps before it and their
    stacks, with the pad and end slots of as many episodes as steps."""
    S = config.frame_stack
    return num_envs * ((config.actor_chunk_steps + config.n_step) * (S + 1) + 2 * S + 4)


class ApexActor(ImplicitQuantileHead, RemoteActor):
    """One Ape-X actor (run as a Ray actor by :class:`ApexLearner`; plain Python otherwise)."""

    def __init__(
        self,
        env_factory,
        num_envs: int,
        config,
        obs_shape,
        obs_dtype,
        num_actions: int,
        index: int,
        seed: int,
        online: dict,
        target: dict,
        version: int = 0,
    ):
        with self._building():
            self._init(
                env_factory, num_envs, config, obs_shape, obs_dtype, num_actions, index, seed, online, target, version
            )

    def _init(
        self, env_factory, num_envs, config, obs_shape, obs_dtype, num_actions, index, seed, online, target, version
    ):
        threads = max(1, int(config.actor_cpus))
        torch.set_num_threads(threads)
        self.config, self.index = config, index
        self.device = torch.device("cpu")
        self.env, self.collector = env_factory(num_envs, seed, worker=index)
        self.num_envs = int(self.env.num_envs)  # a joint unit's env has one per task at least
        shape = tuple(self.env.single_observation_space.shape)
        if shape != tuple(obs_shape) or int(self.env.single_action_space.n) != num_actions:
            raise UsageError(
                f"actor {index}: the environment's spaces ({self.env.single_observation_space}, "
                f"{self.env.single_action_space}) differ from the learner's"
            )
        self.obs_shape, self.obs_dtype = tuple(obs_shape), np.dtype(obs_dtype)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self.online = self.build_network(self.obs_shape, num_actions).requires_grad_(False)
        self.target = copy.deepcopy(self.online)
        self.generator = torch.Generator()
        self.generator.manual_seed(seed)
        self.action_rng = np.random.default_rng(seed)  # warm-up actions
        self.num_actions = int(num_actions)
        self.version = -1
        self._load(online, target, version)
        self.local = PrioritizedReplay(
            local_capacity(config, self.num_envs),
            self.num_envs,
            self.obs_shape,
            self.obs_dtype,
            config.frame_stack,
            config.n_step,
            config.gamma,
            config.priority_exponent,
            config.reward_clip,
            num_actions,
        )
        self.obs, _ = self.env.reset(seed=seed)
        for e in range(self.num_envs):
            self.local.start_episode(e, self.obs[e])
        self.fresh = True  # the learner must start this actor's streams with the first observations
        self.steps = 0  # agent steps this actor took
        self.noise_epoch = -1

    def _load(self, online: dict | None, target: dict | None, version: int) -> None:
        if online is not None:
            self.online.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in online.items()})
            self.version = version
            self.noise_epoch = -1  # the learner's noise came with the weights: draw this actor's own
        if target is not None:
            self.target.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in target.items()})

    def ready(self) -> int:
        """This actor's sub-environment count, once it is built (or its construction's error)."""
        self._check_built()
        return self.num_envs

    def parameters(self) -> tuple[int, dict[str, np.ndarray], dict[str, np.ndarray]]:
        """(weights version, online state, target state), for tests and diagnostics."""
        return self.version, numpy_state(self.online), numpy_state(self.target)

    def collect(
        self,
        steps: int,
        online: dict | None = None,
        target: dict | None = None,
        version: int = -1,
        random_steps: int = 0,
    ) -> dict:
        """Take ``steps`` vector steps, the first ``random_steps`` of them uniformly at random over
        all actions (the unit's warm-up); return the chunk for the learner (see the module
        docstring)."""
        self._load(online, target, version)
        loaded = (self.version, checksum(numpy_state(self.online))) if online is not None else None
        E, period = self.num_envs, self.config.update_period_steps
        t0 = time.perf_counter()
        start_obs = np.array(self.obs) if self.fresh else None
        self.fresh = False
        obs = np.empty((steps + 1, E, *self.obs_shape), self.obs_dtype)
        obs[0] = self.obs
        actions = np.empty((steps, E), np.int64)
        rewards = np.empty((steps, E), np.float32)
        terminated = np.empty((steps, E), bool)
        truncated = np.empty((steps, E), bool)
        finals: dict[int, np.ndarray] = {}
        completed = []
        for t in range(steps):
            if self.steps // period != self.noise_epoch:  # NoisyNet exploration, as the single agent
                self.online.reset_noise(self.generator)
                self.noise_epoch = self.steps // period
            if t < random_steps:  # the unit's warm-up: uniform over all actions
                actions[t] = self.action_rng.integers(self.num_actions, size=E)
            else:
                actions[t] = self.greedy_actions(obs[t])
            next_obs, rewards[t], terminated[t], truncated[t], infos = self.env.step(actions[t])
            done = terminated[t] | truncated[t]
            final = None
            if done.any():
                if "final_obs" not in infos:
                    raise UsageError(
                        "rainbow_iqn needs SAME_STEP autoreset with info['final_obs'] (the suite env contract)"
                    )
                final = np.zeros((E, *self.obs_shape), self.obs_dtype)
                for e in np.flatnonzero(done):
                    final[e] = infos["final_obs"][e]
                finals[t] = final
            obs[t + 1] = next_obs
            completed.append(
                self.local.add(obs[t], actions[t], rewards[t], terminated[t], truncated[t], next_obs, final)
            )
            self.steps += E
        self.obs = obs[-1]
        t1 = time.perf_counter()
        indices = np.concatenate(completed)
        losses = self._losses(indices)
        return {
            "actor": self.index,
            "start_obs": start_obs,
            "obs": obs,
            "actions": actions,
            "rewards": rewards,
            "terminated": terminated,
            "truncated": truncated,
            "final_obs": finals,
            "losses": losses,
            "episodes": self.collector.report(),
            "version": self.version,
            "loaded": loaded,
            "act_seconds": t1 - t0,
            "priority_seconds": time.perf_counter() - t1,
            "random_steps": min(random_steps, steps),
        }

    @torch.no_grad()
    def _losses(self, indices: np.ndarray) -> np.ndarray:
        """The learner's per-sample loss of each completed transition, from this actor's nets."""
        if len(indices) == 0:
            return np.zeros(0, np.float32)
        per_sample, _ = self.sample_losses(self.local.transitions(indices))
        self.noise_epoch = -1  # the loss drew its own noise: act with a fresh sample
        return per_sample.float().cpu().numpy()


class ApexLearner(ActorDriver):
    """The learner side of Ape-X Rainbow-IQN, driving the actors (see the module docstring).

    ``train()`` = ``start()`` + ``run()`` + ``stop()``; tests call them one by one."""

    #: seconds between two looks at ``ctx.finished`` while waiting for a chunk
    poll_seconds = 1.0
    #: seconds the actors may take to be scheduled and build their environments
    start_timeout = 300.0

    def __init__(self, agent, env, ctx: TrainingContext):
        cfg = agent.config
        self.agent, self.ctx, self.config = agent, ctx, cfg
        self.num_actors = cfg.actors
        self.actor_envs = cfg.actor_envs or int(env.num_envs)
        self.streams = self.num_actors * self.actor_envs
        self.ray = import_ray()  # missing Ray: said in one line before anything starts; start() connects
        self.actors: list = []
        self.pending: dict[Any, int] = {}  # chunk request -> actor
        self.assigned = 0  # agent steps recorded or requested
        self.random_until = 0  # the unit's agent steps before which actors act at random (start())
        self.version = 0  # weights published so far - 1
        self.refs: dict[int, tuple[Any, Any]] = {}  # version -> (online ref, target ref)
        self.actor_version = [0] * self.num_actors
        self.actor_target = [0] * self.num_actors
        self.target_version = 0
        self.published_target = 0
        self.checksums: dict[int, float] = {}
        self.updates_at_publish = 0
        self.stats = {
            "chunks": [0] * self.num_actors,
            "steps": [0] * self.num_actors,
            "episodes": [0] * self.num_actors,
            "transitions": [0] * self.num_actors,
            "random_steps": [0] * self.num_actors,  # agent steps taken uniformly at random (warm-up)
            "weights_verified": 0,
            "max_version": [0] * self.num_actors,
            "act_seconds": 0.0,
            "priority_seconds": 0.0,
            "insert_seconds": 0.0,
            "update_seconds": 0.0,
            "wait_seconds": 0.0,
        }
        self._log = {"loss": 0.0, "q": 0.0, "n": 0, "t": time.perf_counter()}

    # -- lifecycle ------------------------------------------------------------------------------
    def train(self) -> None:
        try:
            self.start()
            self.run()
        finally:
            self.stop()

    def start(self) -> None:
        """Connect to (or start) Ray, publish the weights, start the actors."""
        agent, cfg, ctx = self.agent, self.config, self.ctx
        ray = self.ray = ctx.ray()
        self.require_cpus(
            self.num_actors,
            "actors",
            "actor_cpus",
            cfg.actor_cpus,
            "lower actors or actor_cpus (actor_cpus=0 lets actors share CPUs)",
        )
        self.assigned = ctx.steps_done
        self.random_until = agent.warmup_steps()
        self._publish()
        online, target = self.refs[self.version]
        factory = ctx.remote_envs()
        shape = (cfg, agent.obs_shape, agent.obs_dtype, agent.num_actions)
        arguments = [
            (factory, self.actor_envs, *shape, i, actor_seed(ctx.seed, ctx.steps_done, i), online, target, self.version)
            for i in range(self.num_actors)
        ]

        def late(missing: int, started: int) -> str:
            free = ray.available_resources().get("CPU", 0.0)
            return (
                f"{missing} of {started} actors did not start within "
                f"{self.start_timeout:g} s (Ray has {free:g} CPUs free, each actor asks for "
                f"actor_cpus={cfg.actor_cpus:g}); lower actors or actor_cpus (under --executor ray "
                "each unit also holds cpus_per_unit)"
            )

        ready = self.start_actors(
            ApexActor, arguments, timeout_s=self.start_timeout, late=late, num_cpus=cfg.actor_cpus
        )
        counts = set(ready)
        if len(counts) != 1:  # pragma: no cover - the same factory and count build the same envs
            raise RuntimeError(f"actors built different sub-environment counts: {sorted(counts)}")
        self.actor_envs = counts.pop()
        self.streams = self.num_actors * self.actor_envs
        if agent.replay is None or agent.replay.num_envs != self.streams:
            agent.replay = agent.new_replay(self.streams)  # one stream per (actor, sub-environment)
        self.actor_version = [self.version] * self.num_actors
        self.actor_target = [self.published_target] * self.num_actors

    def stop(self) -> None:
        super().stop()
        self.pending = {}

    # -- weights --------------------------------------------------------------------------------
    def _publish(self) -> None:
        """Put the online net (and the target net, when it changed) in the object store once."""
        online = numpy_state(self.agent.online)
        self.version += 1 if self.refs else 0
        if not self.refs or self.target_version != self.published_target:
            target_ref = self.ray.put(numpy_state(self.agent.target))
            self.published_target = self.target_version
        else:
            target_ref = self.refs[max(self.refs)][1]
        self.refs[self.version] = (self.ray.put(online), target_ref)
        self.checksums[self.version] = checksum(online)
        held = set(self.actor_version) | {self.version}
        for v in [v for v in self.refs if v not in held]:
            del self.refs[v]
            self.checksums.pop(v, None)
        self.updates_at_publish = self.agent.counters["updates"]

    # -- the loop -------------------------------------------------------------------------------
    def _submit(self, i: int) -> None:
        """Ask actor ``i`` for its next chunk (with the newest weights if it lacks them)."""
        ctx, E = self.ctx, self.actor_envs
        left = ctx.budget_steps - self.assigned
        if left <= 0 or ctx.finished:
            return
        steps = min(self.config.actor_chunk_steps, -(-left // E))
        # the warm-up's random steps are the first learning_starts_steps the learner hands out
        random_steps = min(steps, max(0, -(-(self.random_until - self.assigned) // E)))
        online = target = None
        if self.actor_version[i] != self.version:
            online_ref, target_ref = self.refs[self.version]
            online = online_ref
            if self.actor_target[i] != self.published_target:
                target = target_ref
            self.actor_version[i], self.actor_target[i] = self.version, self.published_target
        ref = self.actors[i].collect.remote(steps, online, target, self.version, random_steps)
        self.pending[ref] = i
        self.assigned += steps * E

    def run(self) -> None:
        """Insert chunks, update, publish, until the budget is used (or a stop is requested)."""
        cfg, c, ctx, ray = self.config, self.agent.counters, self.ctx, self.ray
        for i in range(self.num_actors):
            self._submit(i)
        while self.pending and not ctx.finished:
            can_update = not cfg.synchronized and c["update_credit"] >= cfg.update_period_steps
            t0 = time.perf_counter()
            ready, _ = ray.wait(list(self.pending), num_returns=1, timeout=0 if can_update else self.poll_seconds)
            if not can_update:
                self.stats["wait_seconds"] += time.perf_counter() - t0
            for ref in ready:
                i = self.pending.pop(ref)
                chunk = self.get(ref)
                if not cfg.synchronized:
                    self._submit(i)  # the actor goes on while the learner inserts and updates
                self._insert(i, chunk)
                if cfg.synchronized:
                    while c["update_credit"] >= cfg.update_period_steps:
                        self._update()
                    self._submit(i)
            if not cfg.synchronized and c["update_credit"] >= cfg.update_period_steps:
                self._update()
            ctx.maybe_checkpoint()

    def _insert(self, i: int, chunk: dict) -> None:
        cfg, c, ctx, replay, E = self.config, self.agent.counters, self.ctx, self.agent.replay, self.actor_envs
        t0 = time.perf_counter()
        streams = np.arange(i * E, (i + 1) * E)
        if chunk["start_obs"] is not None:
            for e in range(E):
                replay.start_episode(int(streams[e]), chunk["start_obs"][e])
        obs, steps = chunk["obs"], len(chunk["actions"])
        completed = [
            replay.add(
                obs[t],
                chunk["actions"][t],
                chunk["rewards"][t],
                chunk["terminated"][t],
                chunk["truncated"][t],
                obs[t + 1],
                chunk["final_obs"].get(t),
                streams=streams,
            )
            for t in range(steps)
        ]
        indices = np.concatenate(completed)
        if len(indices) != len(chunk["losses"]):
            raise RuntimeError(
                f"actor {i} computed {len(chunk['losses'])} priorities for a chunk that completed "
                f"{len(indices)} transitions here"
            )
        replay.insert_priorities(indices, chunk["losses"])
        ends = ctx.report_remote_episodes(chunk["episodes"])
        c["agent_steps"] += steps * E
        if replay.num_added >= cfg.learning_starts_steps and replay.num_valid > 0:
            c["update_credit"] += steps * E
        if c["agent_steps"] // cfg.target_update_steps > c["target_syncs"]:
            self._sync_target()
        s = self.stats
        s["chunks"][i] += 1
        s["steps"][i] += steps * E
        s["episodes"][i] += len(ends)
        s["transitions"][i] += len(indices)
        s["random_steps"][i] += chunk["random_steps"] * E
        s["max_version"][i] = max(s["max_version"][i], int(chunk["version"]))
        s["act_seconds"] += chunk["act_seconds"]
        s["priority_seconds"] += chunk["priority_seconds"]
        if chunk["loaded"] is not None:
            version, value = chunk["loaded"]
            expected = self.checksums.get(version)
            if expected is not None:
                if not np.isclose(value, expected, rtol=1e-9, atol=1e-6):
                    raise RuntimeError(f"actor {i} holds other weights than version {version} the learner sent")
                s["weights_verified"] += 1
        s["insert_seconds"] += time.perf_counter() - t0

    def _sync_target(self) -> None:
        c = self.agent.counters
        self.agent.copy_target()
        c["target_syncs"] = c["agent_steps"] // self.config.target_update_steps
        self.target_version += 1

    def _update(self) -> None:
        cfg, c, ctx, log = self.config, self.agent.counters, self.ctx, self._log
        t0 = time.perf_counter()
        c["update_credit"] -= cfg.update_period_steps
        # beta annealed linearly from its start value to its end over the unit's budget
        progress = min(1.0, ctx.steps_done / max(1, ctx.budget_steps))
        beta = cfg.priority_weight_start + (cfg.priority_weight_end - cfg.priority_weight_start) * progress
        loss, q = self.agent.update(beta)
        log["loss"] += loss
        log["q"] += q
        log["n"] += 1
        if log["n"] == cfg.log_every_updates:
            self.agent.log_updates(ctx, log, beta)
            self._log_apex()
        if c["updates"] - self.updates_at_publish >= cfg.weight_sync_updates:
            self._publish()
        self.stats["update_seconds"] += time.perf_counter() - t0

    def _log_apex(self) -> None:
        s, ctx = self.stats, self.ctx
        ctx.log_scalar("apex/weights_version", self.version)
        ctx.log_scalar(
            "apex/actor_seconds_priorities_share",
            s["priority_seconds"] / max(s["act_seconds"] + s["priority_seconds"], 1e-9),
        )
