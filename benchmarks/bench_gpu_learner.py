"""Value-based learner updates per second on a CUDA GPU: eager against CUDA graph, float32 (TF32)
and bfloat16 (the GPU checklist's first item; needs a CUDA device).

What is compared, in the same run on the same GPU, per agent (default ``rainbow_iqn`` at the
paper's batch 32, N = N' = 64, K = 32): the agent's own ``update(beta)`` (a prioritized batch
sampled on the host, copied to the GPU, the learner step, the new priorities read back into the
host's sum tree) with ``cuda_graphs=false`` (eager: every kernel launched from Python) against
``cuda_graphs=true`` (the step replayed as a CUDA graph, ``agents/value_based/cuda_graph.py``),
each in float32 with TF32 matrix products (torch's ``high`` matmul precision) and in bfloat16
(``precision=bfloat16``). Also: the graph's replay alone, back to back on one batch with no
sampling, copies or reads (the device's own time per step: what the host side adds is the rest).

* Updates: ``--updates`` timed after ``--warmup`` (which covers the graph's capture), wall clock
  with the device synchronised (each update ends by reading its priorities on the host anyway).
* FLOPs of one update: ``FlopCounterMode`` around one eager update; GPU FLOP rate = FLOPs / time.
* Profile (``--profile-updates``, torch.profiler with CUDA activity), per float32 mode: GPU busy
  share (kernel time / wall time: the utilisation), kernel launches per update, and the largest
  CPU-side parts (replay sampling, priority update, the step's Python).

Target (checklist): >= 1,000 updates/s for Rainbow-IQN on one H100.

Usage: python benchmarks/bench_gpu_learner.py [--agents rainbow_iqn,rainbow:der,dqn:drq_eps]
    [--updates 100] [--warmup 10] [--profile-updates 10] [--fill 3000]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from value_bench_common import fill_replay, flop_counts, labelled_replay, make_value_agent, parse_agents

BETA = 0.4
TARGET = {"rainbow_iqn": 1000.0}
MODES = (("float32", False), ("float32", True), ("bfloat16", False), ("bfloat16", True))
DEVICE = "cuda"


def build(name: str, precision: str, graphs: bool, fill: int):
    agent = make_value_agent(
        name, 1, replay_capacity=fill + 1000, device=DEVICE, precision=precision, cuda_graphs=graphs
    )
    agent._build(seed=0)
    fill_replay(agent, fill)
    return agent


def update_flops(name: str) -> float:
    """FLOPs of one eager update of ``name`` (FlopCounterMode)."""
    agent = build(name, "float32", False, 2000)
    return sum(flop_counts(lambda: agent.update(BETA)).values())


def time_updates(agent, updates: int, rounds: int = 3) -> list[float]:
    """Seconds per update, one figure per round of ``updates``."""
    per_round = []
    for _ in range(rounds):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(updates):
            agent.update(BETA)
        torch.cuda.synchronize()
        per_round.append((time.perf_counter() - start) / updates)
    return per_round


def time_replays(agent, replays: int) -> float | None:
    """Seconds per replay of the captured step alone (no host work between replays)."""
    step = agent._graphed
    if step is None or not step.graphs:
        return None
    graph, _ = next(iter(step.graphs.values()))
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(replays):
        graph.replay()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / replays


def profile(agent, updates: int) -> dict:
    """GPU busy share, kernels per update and the top CPU-side ops of ``updates`` updates."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    with labelled_replay(agent.replay), torch_profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(updates):
            agent.update(BETA)
        torch.cuda.synchronize()
        wall = time.perf_counter() - start
    kernels = [e for e in prof.events() if e.device_type == DeviceType.CUDA]
    busy = sum(e.time_range.elapsed_us() for e in kernels) / 1e6
    cpu_top = sorted(
        (e for e in prof.key_averages() if e.self_cpu_time_total > 0), key=lambda e: e.self_cpu_time_total, reverse=True
    )[:6]
    gpu_top = sorted(
        (e for e in prof.key_averages() if getattr(e, "self_device_time_total", 0) > 0),
        key=lambda e: e.self_device_time_total,
        reverse=True,
    )[:5]
    return {
        "wall": wall / updates,
        "busy": busy / wall,
        "kernels": len(kernels) / updates,
        "cpu_top": [(e.key, e.self_cpu_time_total / 1e3 / updates) for e in cpu_top],
        "gpu_top": [(e.key, e.self_device_time_total / 1e3 / updates) for e in gpu_top],
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", default="rainbow_iqn")
    parser.add_argument("--updates", type=int, default=100, help="timed updates per round (3 rounds)")
    parser.add_argument("--warmup", type=int, default=10, help="untimed updates first (the capture among them)")
    parser.add_argument("--profile-updates", type=int, default=10, help="profiled float32 updates (0: none)")
    parser.add_argument("--fill", type=int, default=3000, help="synthetic transitions in each replay")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        raise SystemExit("bench_gpu_learner needs a CUDA device (torch sees none)")
    torch.set_float32_matmul_precision("high")  # TF32 matrix products for float32
    names = parse_agents(args.agents)
    device = torch.cuda.get_device_name()
    print(f"torch {torch.__version__}, {device}, batch 32; float32 = TF32 products (matmul precision 'high')")

    print(
        f"{'agent':<12} {'precision':<9} {'step':<6} {'updates/s':>10} {'(best)':>8} {'ms/update':>10} "
        f"{'replay alone/s':>15} {'GFLOP':>7} {'TFLOP/s':>8}  target",
        flush=True,
    )
    for name in names:
        flops = update_flops(name)
        for precision, graphs in MODES:
            agent = build(name, precision, graphs, args.fill)
            for _ in range(args.warmup):
                agent.update(BETA)
            rounds = time_updates(agent, args.updates)
            median, best, replay_only = statistics.median(rounds), min(rounds), time_replays(agent, args.updates)
            target = TARGET.get(name)
            verdict = f">= {target:,.0f}/s: {'met' if 1 / median >= target else 'NOT met'}" if target else ""
            alone = f"{1 / replay_only:15,.0f}" if replay_only else f"{'-':>15}"
            print(
                f"{name:<12} {precision:<9} {'graph' if graphs else 'eager':<6} {1 / median:10,.0f} {1 / best:8,.0f} "
                f"{median * 1e3:10.3f} {alone} {flops / 1e9:7.1f} {flops / median / 1e12:8.1f}  {verdict}",
                flush=True,
            )
            if precision == "float32" and args.profile_updates:
                p = profile(agent, args.profile_updates)
                print(
                    f"    profile: {p['wall'] * 1e3:.3f} ms/update profiled, GPU busy {p['busy']:.0%}, "
                    f"{p['kernels']:.0f} kernels/update"
                )
                print("    CPU self ms/update: " + ", ".join(f"{k} {v:.3f}" for k, v in p["cpu_top"]))
                print("    GPU self ms/update: " + ", ".join(f"{k[:48]} {v:.3f}" for k, v in p["gpu_top"]), flush=True)
            del agent
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
