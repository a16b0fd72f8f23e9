"""The data-parallel engine: a group of Ray actors joined in one ``torch.distributed`` process group.

Nichol et al. 2018 ("Gotta Learn Fast", sections 4.5-4.6 and Algorithm 2) train one joint model
with many workers, each on its own environments and its own data (PPO: a rollout per worker;
Rainbow: a replay per worker), whose gradients are averaged at every optimization step. Here:

* **Workers are Ray actors** (:class:`DataParallelWorker`), started by the unit's process (the
  *driver*: the agent's ``learn``) through ``ctx.ray()`` (the cluster of a ``--executor ray`` run,
  else a local instance). Each builds its own copy of the unit's environment through the agent
  contract's remote environments (``ctx.remote_envs()``, :mod:`benchgen.remote`): the suite env
  under an episode collector under the suite's agent wrappers, with its share of the unit's tasks
  (``worker=rank, workers=world_size``).
* **Gradients are averaged with torch.distributed**: the workers join one process group (gloo on
  CPU, NCCL where the worker sees a GPU) at an address and free port that rank 0 reports from its
  node, so the same code runs 2 workers on one machine and 188 on a cluster. The group's store
  listens on that address alone (rank 0 binds the socket and hands it to ``TCPStore``, whose own
  server would bind every interface): 127.0.0.1 on a local Ray instance, where the collectives'
  sockets are kept on the loopback interface as well, the node's cluster address on a cluster. A program averages
  with :class:`GradientAverager` (one flat all-reduce per step, timed), or through
  ``DistributedDataParallel`` with :meth:`GradientAverager.ddp_hook` as its communication hook
  (also timed). Every worker starts from the same state (the driver ships it), so after each
  averaged step all workers hold identical weights.
* **Rounds**: the driver asks every worker to play one round (:class:`RoundPlan`: so many vector
  steps, then the program's updates) and waits for all of them. Each worker answers with its
  collector's sealed report of the episodes and frames of the round, its statistics, and rank 0
  with the synchronized learner state. The driver relays the reports to
  ``ctx.report_remote_episodes`` in rank order (episodes are recorded and counted once the whole
  round is done), keeps the state (the agent's checkpoints are written from it), and checkpoints.
* **Fault tolerance**: a worker that dies (killed, its node lost) fails the round. The driver
  kills the other workers (whose collective would otherwise wait for the dead peer), starts a new
  group from the last synchronized state (the state after the last completed round) with fresh
  environments and seeds, and plays the round again. The failed round's episodes and frames were
  never reported, so nothing is recorded twice or counted without being recorded; the episodes
  in progress when the worker died are lost, as a killed unit's are (a partial episode has no
  score). Data held only by the workers (a replay memory) starts empty again. After
  ``max_restarts`` restarts in one unit the error is raised and the runner's own retry resumes
  the unit from its last checkpoint.

* **Virtual workers** (gradient accumulation): a program may host several of the paper's workers
  in one process (``virtual_workers`` > ``workers``). Each process hosts a contiguous share of
  them (:func:`hosted_share`), builds one environment per hosted virtual worker (``factory(...,
  worker=v, workers=V)``, seeded from the unit's seed and ``v`` alone) and reports each one's
  episodes in virtual order; the program sums its hosted workers' gradients and the group
  all-reduces the sums (:meth:`GradientAverager.sum`), so the average over ``V`` workers does not
  depend on how many processes hold them. :class:`~benchgen_agents.data_parallel.in_process.InProcessGroup`
  runs one process's share in the unit's own process, without Ray.

Ray actors rather than Ray Train: the unit's process must stay the one that records episodes
(sealed reports) and writes benchgen's checkpoints, which Ray Train would move into its own
worker loop and checkpoint store; the actors give that with Ray's placement and failure
detection, and ``torch.distributed`` does the averaging. Starting, asking and stopping the actors
is :mod:`benchgen_agents.common.ray_engine`'s, shared with Ape-X.
"""

from __future__ import annotations

import abc
import dataclasses
import datetime
import os
import time
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

from benchgen_agents.common.ray_engine import (
    ActorDriver,
    RemoteActor,
    import_ray,  # noqa: F401 - the programs ask for Ray here
    seed_from,
)
from benchgen_agents.data_parallel.rendezvous import _listen, rendezvous_store


def cpu_copy(value: Any) -> Any:
    """A state dict (nested dicts/lists of tensors) with every tensor copied to the CPU: what a
    worker ships to the driver and the driver to new workers."""
    if isinstance(value, torch.Tensor):
        return value.detach().to("cpu", copy=True)
    if isinstance(value, dict):
        return {k: cpu_copy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(cpu_copy(v) for v in value)
    return value


@dataclasses.dataclass(frozen=True)
class RoundPlan:
    """What every worker does in one round."""

    steps: int
    """Vector steps each worker plays."""
    learn: bool
    """Whether the round ends in the program's updates (False: the budget's last, partial round,
    played but not learned from, as a single-process learner stops mid-rollout)."""
    steps_done: int
    """The unit's agent steps before the round, all workers together (schedules run on it)."""
    budget_steps: int
    """The unit's budget in agent steps, all workers together."""


class WorkerProgram(abc.ABC):
    """One algorithm's side of a data-parallel worker. Built (and pickled) in the driver, then
    :meth:`setup` runs in the worker process once the process group is up."""

    @abc.abstractmethod
    def setup(self, env, rank: int, world_size: int, averager: GradientAverager, state: Any, seed: int) -> None:
        """Build the learner over ``env`` (this worker's environments) from ``state`` (the
        synchronized state, identical on every rank; None: the program's fresh start, which
        must then be the same on every rank, e.g. drawn from a seed shared by all)."""

    def setup_hosted(
        self,
        envs: list,
        virtual: list[int],
        virtual_workers: int,
        rank: int,
        world_size: int,
        averager: GradientAverager,
        state: Any,
        seeds: list[int],
    ) -> None:
        """Build the learner over ``envs``, the environments of the virtual workers ``virtual``
        (of ``virtual_workers`` in all) this process hosts, each seeded with its ``seeds`` entry.
        The default is one worker per process: :meth:`setup` with the one env."""
        if len(envs) != 1 or virtual_workers != world_size:
            raise NotImplementedError(f"{type(self).__name__} hosts one worker per process (virtual_workers=workers)")
        self.setup(envs[0], rank, world_size, averager, state, seeds[0])

    @abc.abstractmethod
    def play_round(self, plan: RoundPlan) -> dict[str, float]:
        """Play ``plan.steps`` vector steps and (``plan.learn``) update with averaged gradients;
        return statistics (numbers) for the driver's logs."""

    @abc.abstractmethod
    def state(self) -> Any:
        """The synchronized learner state (weights, optimizer, counters): what a restarted group
        and the agent's checkpoint start from. Picklable (tensors on the CPU)."""

    def last_batch(self) -> Any:
        """The data of the worker's last update (to check the averaged update against one
        process's); None if the program does not keep it."""
        return None


class GradientAverager:
    """Averages gradients across the process group's workers and times it (the benchmark's
    communication share)."""

    def __init__(self, world_size: int):
        self.world_size = int(world_size)
        #: seconds spent in all-reduce calls (waiting for the slowest worker included)
        self.seconds = 0.0
        #: all-reduce calls made
        self.calls = 0

    def average(self, parameters) -> None:
        """Replace every parameter's gradient by its mean over the workers: one all-reduce of all
        gradients flattened into one buffer (the ``AllReduce(G)`` of Algorithm 2)."""
        self._flat_all_reduce(parameters, mean=True)

    def sum(self, parameters) -> None:
        """Replace every parameter's gradient by its sum over the workers (one flat all-reduce):
        the processes' accumulated gradients of their hosted virtual workers, which the program
        then divides by the number of virtual workers."""
        self._flat_all_reduce(parameters, mean=False)

    def _flat_all_reduce(self, parameters, mean: bool) -> None:
        grads = [p.grad for p in parameters if p.grad is not None]
        if not grads or self.world_size == 1:
            return
        flat = torch.cat([g.reshape(-1) for g in grads])
        self._all_reduce(flat, mean)
        offset = 0
        for g in grads:
            g.copy_(flat[offset : offset + g.numel()].view_as(g))
            offset += g.numel()

    def ddp_hook(self, state, bucket):  # no annotations: DDP checks them, and they are strings here
        """A ``DistributedDataParallel`` communication hook (``state`` unused): the same mean,
        timed, done in place (synchronously) on each ``dist.GradBucket`` DDP hands over;
        returns a completed ``torch.futures.Future``."""
        buffer = bucket.buffer()
        self._all_reduce(buffer, mean=True)
        future: torch.futures.Future = torch.futures.Future()
        future.set_result(buffer)
        return future

    def _all_reduce(self, tensor: torch.Tensor, mean: bool) -> None:
        start = time.perf_counter()
        dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
        if mean:
            tensor.div_(self.world_size)
        self.seconds += time.perf_counter() - start
        self.calls += 1


def worker_seed(unit_seed: int, steps_done: int, rank: int, restart: int) -> int:
    """A seed per worker (``rank``: the virtual worker's index where processes host several),
    different after every resume and every restart (fresh environments should not replay the
    episodes they began with); independent of how many processes share the workers."""
    return seed_from(unit_seed, steps_done, rank, restart)


def hosted_share(rank: int, workers: int, virtual_workers: int) -> list[int]:
    """The virtual workers process ``rank`` of ``workers`` hosts: a contiguous share, sizes
    differing by at most one (4 over 2: [0, 1] and [2, 3])."""
    return list(range(rank * virtual_workers // workers, (rank + 1) * virtual_workers // workers))


class DataParallelWorker(RemoteActor):
    """One worker process (a Ray actor, or the unit's own process for an
    :class:`~benchgen_agents.data_parallel.in_process.InProcessGroup`): the environments and
    collectors of the virtual workers it hosts (one, by default: itself), its place in the
    process group."""

    def __init__(
        self,
        program: WorkerProgram,
        env_factory,
        rank: int,
        world_size: int,
        num_envs: int,
        seed: int,
        threads: int,
        hosted: list[int] | None = None,
        virtual_workers: int | None = None,
        seeds: list[int] | None = None,
    ):
        self.program, self.rank, self.world_size, self.seed = program, int(rank), int(world_size), int(seed)
        self.hosted = list(hosted) if hosted is not None else [self.rank]
        self.virtual_workers = int(virtual_workers or world_size)
        self.seeds = list(seeds) if seeds is not None else [self.seed]
        self.envs: list[Any] = []
        self.collectors: list[Any] = []
        with self._building():
            if threads:
                torch.set_num_threads(max(1, int(threads)))
            for virtual, seed_v in zip(self.hosted, self.seeds, strict=True):
                env, collector = env_factory(num_envs, seed_v, worker=virtual, workers=self.virtual_workers)
                self.envs.append(env)
                self.collectors.append(collector)
            self.env, self.collector = self.envs[0], self.collectors[0]

    def ready(self, pid_dir: str | None) -> tuple[int, int]:
        """(sub-environments, process id), once built; the pid is also written to
        ``pid_dir/rank<R>.pid`` (to see, or stop, a worker of a running unit)."""
        self._check_built()
        if pid_dir:
            Path(pid_dir).mkdir(parents=True, exist_ok=True)
            (Path(pid_dir) / f"rank{self.rank}.pid").write_text(str(os.getpid()))
        return sum(int(env.num_envs) for env in self.envs), os.getpid()

    def address(self) -> tuple[str, int]:
        """Where the process group meets (asked of rank 0): this node's address (127.0.0.1 on a
        local Ray instance, the node's cluster address on a cluster) and the port of a socket
        rank 0 keeps listening on that address alone, to serve the group's store from."""
        import ray

        host = ray.util.get_node_ip_address()
        self._listener = _listen(host)
        return host, int(self._listener.getsockname()[1])

    def join(self, host: str, port: int, state: Any, timeout_s: float) -> None:
        """Join the process group and build the learner from ``state`` (the program resets the
        env, with this worker's seed)."""
        backend = "nccl" if torch.cuda.is_available() else "gloo"
        store = rendezvous_store(host, port, self.rank, self.world_size, timeout_s, getattr(self, "_listener", None))
        dist.init_process_group(
            backend,
            store=store,
            rank=self.rank,
            world_size=self.world_size,
            timeout=datetime.timedelta(seconds=timeout_s),
        )
        self.setup(state)

    def setup(self, state: Any) -> None:
        """Build the program's learner over the hosted environments (the process group, if
        any, is up)."""
        self._check_built()
        self.averager = GradientAverager(self.world_size)
        self.program.setup_hosted(
            self.envs,
            self.hosted,
            self.virtual_workers,
            self.rank,
            self.world_size,
            self.averager,
            state,
            self.seeds,
        )

    def play_round(self, plan: RoundPlan) -> tuple[list[Any], dict[str, float], Any]:
        """(sealed episode reports of the hosted virtual workers in their order, statistics,
        rank 0's state or None) of one round."""
        start, comm = time.perf_counter(), self.averager.seconds
        stats = dict(self.program.play_round(plan))
        stats["round_seconds"] = time.perf_counter() - start
        stats["communication_seconds"] = self.averager.seconds - comm
        reports = [collector.report() for collector in self.collectors]
        return reports, stats, self.program.state() if self.rank == 0 else None

    def last_batch(self) -> Any:
        return self.program.last_batch()

    def state(self) -> Any:
        """This worker's learner state (every rank's equals rank 0's after a round)."""
        return self.program.state()

    def peak_memory_bytes(self) -> int:
        """This worker process's peak resident memory (Linux ``ru_maxrss``, in kilobytes there)."""
        import resource

        return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024

    def ping(self) -> int:
        return self.rank


@dataclasses.dataclass
class RoundResult:
    """What a completed round gives the driver."""

    reports: list[Any]
    """Each virtual worker's sealed episode report, in virtual order (for
    ``ctx.report_remote_episodes``)."""
    stats: list[dict[str, float]]
    """Each worker's statistics, in rank order."""
    state: Any
    """The synchronized learner state after the round."""


class WorkerLost(Exception):
    """A worker of the group died during a round."""


class DataParallelGroup(ActorDriver):
    """The driver's side: starts the workers, plays rounds, restarts a group that lost a worker."""

    #: seconds the workers may take to build their environments
    start_timeout = 600.0

    def __init__(
        self,
        ray,
        env_factory,
        program: WorkerProgram,
        *,
        workers: int,
        envs_per_worker: int,
        unit_seed: int,
        worker_cpus: float,
        worker_gpus: float = 0.0,
        max_restarts: int = 3,
        timeout_s: float = 600.0,
        pid_dir: str | None = None,
        virtual_workers: int | None = None,
    ):
        self.ray, self.env_factory, self.program = ray, env_factory, program
        self.workers, self.envs_per_worker = int(workers), int(envs_per_worker)
        #: the algorithm's workers, hosted ``virtual_workers / workers`` to a process (None: one each)
        self.virtual_workers = int(virtual_workers or workers)
        if self.virtual_workers < self.workers:
            raise ValueError(f"{self.workers} processes cannot share {self.virtual_workers} virtual workers")
        self.unit_seed, self.worker_cpus, self.worker_gpus = unit_seed, float(worker_cpus), float(worker_gpus)
        self.max_restarts, self.timeout_s, self.pid_dir = int(max_restarts), float(timeout_s), pid_dir
        #: restarts done so far (each after a lost worker)
        self.restarts = 0
        #: the state the group (re)starts from: the last completed round's
        self.state: Any = None
        self.actors: list[Any] = []
        self.pids: list[int] = []

    # -- starting -------------------------------------------------------------------------------
    def start(self, state: Any, steps_done: int) -> None:
        """Start the workers from ``state`` (None: the program's fresh start)."""
        self.require_cpus(
            self.workers,
            "workers",
            "worker_cpus",
            self.worker_cpus,
            "lower workers or worker_cpus (worker_cpus=0.5 lets two workers share a CPU), "
            "or run on a larger Ray cluster (--executor ray --address ...)",
        )
        self.state = state
        threads = max(1, int(self.worker_cpus))
        arguments = []
        for rank in range(self.workers):
            hosted = hosted_share(rank, self.workers, self.virtual_workers)
            seeds = [worker_seed(self.unit_seed, steps_done, v, self.restarts) for v in hosted]
            arguments.append(
                (self.program, self.env_factory, rank, self.workers, self.envs_per_worker, 0, threads)
                + (hosted, self.virtual_workers, seeds)
            )
        ready = self.start_actors(
            DataParallelWorker,
            arguments,
            ready_args=(self.pid_dir,),
            timeout_s=self.start_timeout,
            late=lambda missing, started: (
                f"{missing} of {started} data-parallel workers did not start within "
                f"{self.start_timeout:g} s; lower workers or worker_cpus"
            ),
            num_cpus=self.worker_cpus,
            num_gpus=self.worker_gpus,
        )
        self.pids = [pid for _n, pid in ready]
        host, port = self.get(self.actors[0].address.remote())
        joins = [actor.join.remote(host, port, state, self.timeout_s) for actor in self.actors]
        self.get(joins)

    # -- rounds ---------------------------------------------------------------------------------
    def play_round(self, plan: RoundPlan) -> RoundResult:
        """Play one round on every worker; after a lost worker, restart the group from the last
        completed round's state and play the round again (up to ``max_restarts`` times)."""
        while True:
            try:
                result = self._round(plan)
            except WorkerLost as lost:
                self.stop()
                if self.restarts >= self.max_restarts:
                    raise RuntimeError(
                        f"a data-parallel worker was lost ({lost}) after {self.restarts} restarts in this unit; "
                        "resume the run to continue from its last checkpoint"
                    ) from None
                self.restarts += 1
                self.start(self.state, plan.steps_done)
                continue
            self.state = result.state
            return result

    def _round(self, plan: RoundPlan) -> RoundResult:
        refs = [actor.play_round.remote(plan) for actor in self.actors]
        pending = list(refs)
        while pending:
            done, pending = self.ray.wait(pending, num_returns=1, timeout=self.timeout_s)
            if not done:
                raise WorkerLost(f"no worker finished its round within {self.timeout_s:g} s")
            try:
                self.ray.get(done[0])
            except self.ray.exceptions.RayActorError as exc:
                raise WorkerLost(f"rank {refs.index(done[0])} died: {type(exc).__name__}") from None
            except self.ray.exceptions.RayTaskError:
                # A survivor's collective fails when a peer dies: a lost worker if any is gone,
                # else the program's own error (raised as it is).
                dead = self._dead_ranks()
                if dead:
                    raise WorkerLost(f"rank {dead[0]} died") from None
                self.get(done[0])
        answers = self.ray.get(refs)
        return RoundResult([r for a in answers for r in a[0]], [a[1] for a in answers], answers[0][2])

    def _dead_ranks(self) -> list[int]:
        dead = []
        for rank, actor in enumerate(self.actors):
            try:
                self.ray.get(actor.ping.remote(), timeout=30)
            except Exception:
                dead.append(rank)
        return dead
