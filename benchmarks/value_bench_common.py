"""Helpers shared by ``bench_value_updates.py`` and ``bench_value_e2e.py`` (not a benchmark itself).

* :func:`make_value_agent`: ``dqn``, ``rainbow`` or ``rainbow_iqn`` at its paper defaults on given
  spaces, on the CPU (or another device), with a given torch thread count (only the replay size and the learning start,
  which do not change an update's arithmetic, are set here);
* :func:`fill_replay`: synthetic Atari frames (a sliding 4-frame stack of random 84x84 frames);
* :func:`matmul_rate`: this machine's dense float32 matrix-multiply rate (best of repetitions);
* :func:`profile_update_time`: where a learner update's time goes, from ``torch.profiler``, by
  category (matrix products, convolutions, other tensor ops, optimizer, replay, Python).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import time
from collections.abc import Callable

import gymnasium as gym
import numpy as np
import torch

#: agents, and ``agent:variant`` for a variant's defaults (Atari 100K's DER and DrQ(epsilon))
AGENTS = ("dqn", "rainbow", "rainbow_iqn", "rainbow:der", "dqn:drq_eps")
CONFIG_CLASSES = {"dqn": "DQNConfig", "rainbow": "RainbowConfig", "rainbow_iqn": "RainbowIQNConfig"}

#: Atari shapes: 4 stacked 84x84 gray frames, ALE's full action set
ATARI_OBS = gym.spaces.Box(0, 255, (4, 84, 84), np.uint8)
ATARI_ACTIONS = gym.spaces.Discrete(18)

#: float32 products whose best rate is "the dense matmul rate": a 2048 square and the largest
#: products of the updates (IQN's 3136 -> 512 hidden layers on 32 x 64 rows, forward, input
#: gradient and weight gradient), as (m, k, n)
MATMUL_SHAPES = ((2048, 2048, 2048), (2048, 3136, 512), (2048, 512, 3136), (512, 2048, 3136))


def parse_agents(text: str) -> list[str]:
    names = [a.strip() for a in text.split(",") if a.strip()]
    unknown = [a for a in names if a not in AGENTS]
    if unknown:
        raise SystemExit(f"unknown agent(s) {unknown}; choose from {', '.join(AGENTS)}")
    return names


def resolve_threads(threads: int) -> int:
    """0: the agents' own default (``benchgen_agents.common.torch_device.cpu_threads``)."""
    from benchgen_agents.common.torch_device import cpu_threads

    return cpu_threads(threads)


def make_value_agent(
    name: str,
    threads: int,
    replay_capacity: int,
    learning_starts_steps: int = 0,
    environment=None,
    device: str = "cpu",
    **settings,
):
    """The agent ``name`` at its paper defaults (float32, unless ``settings`` say otherwise) on
    ``device``; ``environment`` (an ``AgentEnvironment``) defaults to the Atari shapes with 4
    frames per step."""
    from benchgen.agent import AgentEnvironment

    name, _, variant = name.partition(":")
    module = importlib.import_module(f"benchgen_agents.{name}")
    variant_defaults = dict(module.SPECS[0].variants.get(variant, {})) if variant else {}
    if variant:
        variant_defaults["variant"] = variant
    config = getattr(module, CONFIG_CLASSES[name])(
        **{
            **variant_defaults,
            "replay_capacity": replay_capacity,
            "learning_starts_frames": 4 * learning_starts_steps,
            "device": device,
            "torch_threads": threads,
            "precision": "float32",
            **settings,
        }
    )
    return module.make_agent(config, environment or AgentEnvironment(ATARI_OBS, ATARI_ACTIONS, 4))


def fill_replay(agent, transitions: int, seed: int = 0, episode_length: int = 500) -> None:
    """A fresh one-stream replay holding ``transitions`` synthetic ones: random frames forming a
    sliding stack (what the replay stores once per frame), random actions and rewards, an
    episode end every ``episode_length`` steps."""
    rng = np.random.default_rng(seed)
    agent.replay = agent.new_replay(1)
    stack, height, width = agent.obs_shape
    obs = rng.integers(0, 256, (1, stack, height, width), dtype=np.uint8)
    agent.replay.start_episode(0, obs[0])
    for t in range(transitions):
        frame = rng.integers(0, 256, (1, 1, height, width), dtype=np.uint8)
        nxt = np.concatenate([obs[:, 1:], frame], axis=1)
        done = np.array([t % episode_length == episode_length - 1])
        agent.replay.add(obs, rng.integers(0, agent.num_actions, 1), rng.random(1), done, np.array([False]), nxt, nxt)
        obs = nxt


def clock(kind: str, threads: int) -> Callable[[], float]:
    """The benchmarks' clock: "wall" (``perf_counter``) or "cpu" (``process_time``: the CPU time
    of the whole process, env threads included; immune to other processes taking the core, and
    valid with one torch thread only, since idle OpenMP workers spin and would be counted)."""
    if kind == "wall":
        return time.perf_counter
    if threads != 1:
        raise SystemExit("--clock cpu needs --threads 1 (idle OpenMP threads spin, and process CPU time counts them)")
    return time.process_time


def add_clock_argument(parser) -> None:
    parser.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="wall: elapsed time; cpu: the process's CPU time (with --threads 1 only; for a shared machine)",
    )


def matmul_rate(
    shapes=MATMUL_SHAPES,
    reps: int = 4,
    timer: Callable[[], float] = time.perf_counter,
    dtype: torch.dtype = torch.float32,
) -> tuple[float, tuple[int, int, int]]:
    """Best ``torch.mm`` FLOP/s in ``dtype`` (float32 unless said) over ``shapes`` (best of ``reps``
    each, current torch threads) and the shape that reached it."""
    best, best_shape = 0.0, shapes[0]
    for m, k, n in shapes:
        a, b, out = torch.randn(m, k, dtype=dtype), torch.randn(k, n, dtype=dtype), torch.empty(m, n, dtype=dtype)
        torch.mm(a, b, out=out)  # warm-up: pages and MKL's first-call setup
        fastest = float("inf")
        for _ in range(reps):
            start = timer()
            torch.mm(a, b, out=out)
            fastest = min(fastest, timer() - start)
        rate = 2.0 * m * k * n / fastest
        if rate > best:
            best, best_shape = rate, (m, k, n)
    return best, best_shape


def flop_counts(fn: Callable[[], object]) -> dict[str, float]:
    """FLOPs of ``fn()`` by category ("matmul", "conv", "other"), from torch's FlopCounterMode
    (it counts matrix products and convolutions, forward and backward)."""
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        fn()
    totals = {"matmul": 0.0, "conv": 0.0, "other": 0.0}
    for op, flops in counter.get_flop_counts().get("Global", {}).items():
        name = str(op).split(".")[-1]
        totals["conv" if "conv" in name else "matmul" if name in MATMUL_OPS else "other"] += flops
    return totals


MATMUL_OPS = {"mm", "addmm", "bmm", "baddbmm", "addbmm", "addmv", "mv", "dot", "_addmm_activation"}

#: categories of :func:`profile_update_time`, in print order
CATEGORIES = ("matmul", "conv", "tensor_ops", "optimizer", "replay", "python")
CATEGORY_LABELS = {
    "matmul": "matmul",
    "conv": "conv",
    "tensor_ops": "other tensor ops",
    "optimizer": "optimizer",
    "replay": "replay",
    "python": "python/autograd",
}


def _category(event, parents: dict[int, str]) -> str:
    name = event.name
    if name.startswith(("Optimizer.step#", "Optimizer.zero_grad#")):
        return "optimizer"
    if name.startswith("replay."):
        return "replay"
    inherited = parents.get(id(event.cpu_parent)) if event.cpu_parent is not None else None
    if inherited in ("optimizer", "replay"):
        return inherited
    op = name.split("::")[-1]
    if name.startswith("aten::") and op in MATMUL_OPS:
        return "matmul"
    if name.startswith("aten::") and "conv" in op:
        return "conv"
    if name.startswith("autograd::") or name.startswith("torch::autograd"):
        return "python"
    return "tensor_ops"


@contextlib.contextmanager
def labelled_replay(replay):
    """Within the block, the replay's ``sample`` and ``update_priorities`` (numpy, invisible to
    torch.profiler) run inside ``record_function("replay.sample")`` and so on, so that a profile
    shows their time; afterwards they are the class's methods again."""
    from torch.profiler import record_function

    for method in ("sample", "update_priorities"):
        original = getattr(replay, method)

        def wrapped(*args, _original=original, _label=f"replay.{method}", **kwargs):
            with record_function(_label):
                return _original(*args, **kwargs)

        setattr(replay, method, wrapped)
    try:
        yield replay
    finally:
        for method in ("sample", "update_priorities"):
            delattr(replay, method)  # back to the class's methods


def profile_update_time(
    agent, updates: int, beta: float = 0.4, timer: Callable[[], float] = time.perf_counter
) -> dict[str, float]:
    """Seconds per update by category (:data:`CATEGORIES`) over ``updates`` profiled updates.

    Each profiled event's own time (``self_cpu_time_total``) goes to its category; events under
    the optimizer's step and zero_grad go to "optimizer", those under the replay's ``sample`` and
    ``update_priorities`` (numpy: wrapped in ``record_function`` here) to "replay"; "python" is
    the autograd engine's own events plus the wall time no event covers (the interpreter between
    ops). The profiler adds a few microseconds per op, which shows up as "python". Event times
    are elapsed times; with another ``timer`` (CPU time) every category is scaled by the ratio
    of the block's ``timer`` time to its elapsed time."""
    from torch.profiler import ProfilerActivity, profile

    with labelled_replay(agent.replay), profile(activities=[ProfilerActivity.CPU]) as prof:
        start, start_timer = time.perf_counter(), timer()
        for _ in range(updates):
            agent.update(beta)
        wall, timed = time.perf_counter() - start, timer() - start_timer
    seconds = dict.fromkeys(CATEGORIES, 0.0)
    categories: dict[int, str] = {}
    events = sorted(prof.events(), key=lambda e: (e.time_range.start, -e.time_range.end))  # parents first
    for event in events:
        cat = categories[id(event)] = _category(event, categories)
        seconds[cat] += event.self_cpu_time_total / 1e6
    seconds["python"] += max(0.0, wall - sum(seconds.values()))
    scale = timed / wall / updates
    return {k: v * scale for k, v in seconds.items()}


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} on {os.cpu_count()} CPUs"


def busy_warning(threads: int, clock_kind: str = "wall") -> None:
    """Say so when other processes already keep the cores busy: timings then measure the sharing."""
    load, cpus = os.getloadavg()[0], os.cpu_count() or 1
    if load <= cpus - threads + 0.5:
        return
    if clock_kind == "cpu":
        print(
            f"note: load average {load:.2f} on {cpus} CPUs before starting; the cpu clock leaves out the time "
            "other processes hold the core (shared caches and memory bandwidth still interfere)"
        )
    else:
        print(
            f"warning: load average {load:.2f} on {cpus} CPUs before starting: other processes compete for the "
            f"{threads} torch threads' cores; timings are disturbed (best-of figures least so; see --clock cpu)"
        )


def omp_wait_policy() -> str:
    """The OpenMP wait policy torch's worker threads run under (unset: libgomp spins a while
    after each parallel region before sleeping, which starves other threads on a busy machine)."""
    return f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', 'unset')}"
