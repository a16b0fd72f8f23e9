"""Learner FLOP rate of dqn, rainbow and rainbow_iqn against this machine's dense matmul rate.

What is compared, in the same run and the same torch thread count: the floating-point rate a
learner update achieves (FLOPs of one update / seconds per update) against the rate of a dense
float32 matrix product (``torch.mm``), the physical limit of a learner on a CPU.

* Agents: ``dqn``, ``rainbow`` (C51) and ``rainbow_iqn`` at their paper defaults, float32, on the
  CPU, on Atari shapes (4x84x84 uint8 observations, 18 actions, batch 32). Only the replay's
  size and the learning start are set (neither changes an update's arithmetic). Each replay
  holds ``--fill`` synthetic transitions (random frames as a sliding stack, random actions and
  rewards, an episode end every 500 steps).
* Update: ``ValueBasedAgent.update(beta)``: a prioritized batch sampled from the replay, every
  network pass of the head (the target net, the online net's double-Q pass for rainbow and
  rainbow_iqn, the online net with its backward), the optimizer step and the priority update. Timed after ``--warmup`` updates.
* FLOPs of one update: ``torch.utils.flop_counter.FlopCounterMode`` around one update; it counts
  matrix products and convolutions, forward and backward, as executed (rainbow's noisy layers
  take their factorised two-product path at batch 32, and both products are counted).
* Dense matmul rate: float32 ``torch.mm`` on a 2048 square and on the largest products of the
  updates (2048x3136x512, 2048x512x3136, 512x2048x3136), 2 repetitions each, probed before each
  agent's block of updates in every round and before each profile; the best probe is the rate.
* ``--rounds`` rounds, each: per agent, a matmul probe, then ``--updates`` updates, each timed
  on its own. The ratio sets the agent's fastest update against the fastest probe: both are the
  least-disturbed of many short samples, which matters on a shared machine (with 2 threads, a
  core taken by another process stalls every parallel region of torch). Beside it, the ratio
  of the median update against the median of the rounds' best probes.

Target: ratio >= 0.8 for ``rainbow_iqn`` (the arithmetic-heavy one: its 3136 -> 512 dueling
layers run on 32 x (64 + 64 + 32) rows per update). ``dqn`` and ``rainbow`` have no target;
for them (and for rainbow_iqn) a short ``torch.profiler`` pass splits an update's time into
matrix products, convolutions, other tensor ops (elementwise, copies, reductions, RNG), the
optimizer, the replay (numpy sampling and priority updates) and Python/autograd, and "bounded
by" names the categories that lose the most time against the dense rate (a matrix product or
convolution loses its time minus its FLOPs / dense rate; every other category loses all its
time).

Usage (about a minute on 2 cores):
    python benchmarks/bench_value_updates.py [--agents dqn,rainbow,rainbow_iqn] [--updates N]
        [--rounds 5] [--threads 0] [--clock wall|cpu] [--fill 3000] [--profile-updates N]
``--updates`` and ``--profile-updates`` default per agent (dqn 20/10, rainbow 12/6, rainbow_iqn
3/2); ``--threads 0`` uses every core this process may use (the agents' default). On a machine
other processes keep busy, ``--threads 1 --clock cpu`` times with the process's CPU time
instead of elapsed time (a per-core rate, immune to the core being taken away; one thread only,
since idle OpenMP threads spin: libgomp's default, the header shows ``OMP_WAIT_POLICY``); the
profile's shares are then scaled to that clock.
"""

from __future__ import annotations

import argparse
import statistics

import torch
from value_bench_common import (
    AGENTS,
    CATEGORIES,
    CATEGORY_LABELS,
    MATMUL_SHAPES,
    add_clock_argument,
    busy_warning,
    clock,
    fill_replay,
    flop_counts,
    load_average,
    make_value_agent,
    matmul_rate,
    omp_wait_policy,
    parse_agents,
    profile_update_time,
    resolve_threads,
)

DEFAULT_UPDATES = {"dqn": 20, "rainbow": 12, "rainbow_iqn": 3, "rainbow:der": 60, "dqn:drq_eps": 20}
DEFAULT_PROFILE_UPDATES = {"dqn": 10, "rainbow": 6, "rainbow_iqn": 2, "rainbow:der": 20, "dqn:drq_eps": 10}
TARGETS = {"rainbow_iqn": 0.8}
BETA = 0.4


def bounded_by(per_update: dict[str, float], flops: dict[str, float], dense: float) -> tuple[str, str]:
    """(the time breakdown, the "bounded by" note) of one profiled update."""
    total = sum(per_update.values())
    lost, parts = {}, []
    for cat in CATEGORIES:
        seconds = per_update[cat]
        share = seconds / total
        if cat in ("matmul", "conv") and seconds > 0:
            rate = flops[cat] / seconds / dense
            lost[cat] = max(0.0, seconds - flops[cat] / dense)
            parts.append(f"{CATEGORY_LABELS[cat]} {share:.0%} (at {rate:.2f} of dense)")
        else:
            lost[cat] = seconds
            parts.append(f"{CATEGORY_LABELS[cat]} {share:.0%}")
    top = sorted(lost, key=lost.get, reverse=True)[:2]
    notes = []
    for cat in top:
        if cat in ("matmul", "conv"):
            rate = flops[cat] / per_update[cat] / dense
            notes.append(
                f"{CATEGORY_LABELS[cat]} running at {rate:.2f} of dense ({lost[cat] / total:.0%} of the time lost)"
            )
        else:
            notes.append(f"{CATEGORY_LABELS[cat]} ({per_update[cat] / total:.0%} of the time, no FLOPs counted)")
    return ", ".join(parts), "; ".join(notes)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", default=",".join(AGENTS), help="comma-separated: dqn,rainbow,rainbow_iqn")
    parser.add_argument("--updates", type=int, default=0, help="updates per agent per round (0: per-agent default)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=3, help="untimed updates per agent first")
    parser.add_argument("--profile-updates", type=int, default=0, help="profiled updates per agent (0: default)")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: the agents' default)")
    parser.add_argument("--fill", type=int, default=3000, help="synthetic transitions in each replay")
    add_clock_argument(parser)
    args = parser.parse_args(argv)
    names = parse_agents(args.agents)
    threads = resolve_threads(args.threads)
    timer = clock(args.clock, threads)
    print(f"start: {load_average()}", flush=True)
    busy_warning(threads, args.clock)

    agents = {}
    for name in names:
        agent = make_value_agent(name, threads, replay_capacity=args.fill + 1000)
        agent._build(seed=0)
        fill_replay(agent, args.fill)
        agents[name] = agent
    torch.set_num_threads(threads)  # each agent sets it when built; the same for all and for torch.mm
    for agent in agents.values():
        for _ in range(args.warmup):
            agent.update(BETA)
    flops = {name: flop_counts(lambda a=agent: a.update(BETA)) for name, agent in agents.items()}

    # Rounds: before each agent's block, a matmul probe; each update timed on its own. Both the
    # probes and the updates are many short samples, so "best" is the least-disturbed of each.
    probes: list[tuple[float, tuple[int, int, int]]] = []
    round_dense: list[float] = []
    update_seconds: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(args.rounds):
        best_this_round = 0.0
        for name, agent in agents.items():
            probes.append(matmul_rate(reps=2, timer=timer))
            best_this_round = max(best_this_round, probes[-1][0])
            for _ in range(args.updates or DEFAULT_UPDATES[name]):
                start = timer()
                agent.update(BETA)
                update_seconds[name].append(timer() - start)
        round_dense.append(best_this_round)

    breakdowns = {}
    for name, agent in agents.items():
        probes.append(matmul_rate(reps=2, timer=timer))
        per_update = profile_update_time(agent, args.profile_updates or DEFAULT_PROFILE_UPDATES[name], BETA, timer)
        breakdowns[name] = per_update
    dense, dense_shape = max(probes)
    breakdowns = {
        name: (*bounded_by(per_update, flops[name], dense), sum(per_update.values()))
        for name, per_update in breakdowns.items()
    }

    m, k, n = dense_shape
    print(
        f"torch {torch.__version__}, cpu, {threads} threads ({omp_wait_policy()}), {args.clock} clock, float32, batch 32, obs 4x84x84 uint8, 18 actions, "
        f"{args.rounds} rounds"
    )
    print(
        f"dense matmul (float32 torch.mm, {len(probes)} probes of {len(MATMUL_SHAPES)} shapes x 2 reps): "
        f"{dense / 1e9:.1f} GFLOP/s best (at {m}x{k}x{n}); per-round best: "
        f"{', '.join(f'{r / 1e9:.0f}' for r in round_dense)}; median {statistics.median(round_dense) / 1e9:.1f}"
    )
    header = (
        f"{'agent':<12} {'s/update':>9} {'(median)':>9} {'GFLOP/update':>13} {'GFLOP/s':>8} {'matmul GFLOP/s':>15} "
        f"{'ratio':>6} {'(median)':>9}  target"
    )
    print(header)
    for name in names:
        total_flops = sum(flops[name].values())
        best = min(update_seconds[name])
        median = statistics.median(update_seconds[name])
        ratio = total_flops / best / dense
        median_ratio = total_flops / median / statistics.median(round_dense)
        if name in TARGETS:
            verdict = f">= {TARGETS[name]:.2f}: {'met' if ratio >= TARGETS[name] else 'NOT met'}"
        else:
            verdict = "none (see bounded by)"
        print(
            f"{name:<12} {best:9.4f} {median:9.4f} {total_flops / 1e9:13.3f} {total_flops / best / 1e9:8.1f} "
            f"{dense / 1e9:15.1f} {ratio:6.3f} {median_ratio:9.3f}  {verdict}"
        )
    print("time per update by category (torch.profiler; shares of the profiled update time):")
    for name in names:
        parts, note, profiled = breakdowns[name]
        print(f"  {name} ({profiled * 1e3:.1f} ms/update profiled): {parts}")
        print(f"    bounded by: {note}")
    print(f"end: {load_average()}")


if __name__ == "__main__":
    main()
