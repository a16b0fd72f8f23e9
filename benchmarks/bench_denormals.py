"""A learner update with denormal floats flushed to zero against one without, same run.

Why: a unit whose ReLU never fires gets a zero gradient, and Adam's moments of its weights decay
by 0.9 and 0.999 a step until they pass through float32's denormal range (below 1.2e-38), which
Intel CPUs compute on tens of times slower. Data-Efficient Rainbow's Atari 100K runs reach that
state part-way: at its Qbert run's 280K-frame checkpoint, 7.5% of the first hidden layers'
first moments were denormal. The value agents therefore flush denormals on the CPU
(``flush_denormals``, default true; ``agents/value_based/config.py``).

What is compared, in the same process and the same torch thread count: ``ValueBasedAgent.update``
with ``torch.set_flush_denormal(True)`` and with ``False``, rounds alternating, each after
``--dead`` of the first hidden layers' units were made dead as training leaves them: their bias
set far below zero (the ReLU never fires, so their gradient is exactly zero) and their Adam
moments set in the denormal range (1e-39), where such a unit's moments pass a few hundred
(first moment) to tens of thousands (second moment) of updates. The replay holds random frames
(``value_bench_common.fill_replay``); the arithmetic of an update does not depend on them.

Ratio printed: median update time without flushing / with (> 1: flushing is faster). No target:
on a CPU without the penalty the ratio is about 1. Measured end to end on the Intel host
(docs/measurements/performance.md, "Denormal floats"): two copies of the Qbert run resumed side by
side from its 300K-frame checkpoint ran 1.25x faster flushed.

Usage (about a minute):
    python benchmarks/bench_denormals.py [--agents rainbow:der,dqn:drq_eps] [--dead 0.1]
        [--updates 40] [--rounds 3] [--threads 1] [--clock wall|cpu]
"""

from __future__ import annotations

import argparse
import statistics

import torch
from value_bench_common import (
    add_clock_argument,
    busy_warning,
    clock,
    fill_replay,
    make_value_agent,
    parse_agents,
    resolve_threads,
)

DENORMAL = 1e-39  # float32's normal range ends at 1.2e-38


def first_hidden_layers(agent) -> list[torch.nn.Module]:
    """The linear layers that read the torso's features (the first hidden layers of the heads)."""
    features = agent.online.torso.features
    return [m for m in agent.online.modules() if getattr(m, "in_features", None) == features]


def kill_units(agent, fraction: float) -> int:
    """Make ``fraction`` of each first hidden layer's units dead, with denormal Adam moments;
    returns how many units."""
    killed = 0
    for layer in first_hidden_layers(agent):
        dead = torch.arange(int(layer.out_features * fraction))
        with torch.no_grad():
            bias = layer.bias_mu if hasattr(layer, "bias_mu") else layer.bias
            bias[dead] = -1e4
            if hasattr(layer, "bias_sigma"):
                layer.bias_sigma[dead] = 0.0
        for param in layer.parameters():
            state = agent.optimizer.state[param]
            for moment in ("exp_avg", "exp_avg_sq"):
                state[moment][dead] = DENORMAL
        killed += len(dead)
    return killed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--agents", default="rainbow:der,dqn:drq_eps")
    parser.add_argument("--dead", type=float, default=0.1, help="fraction of the first hidden layers' units made dead")
    parser.add_argument("--updates", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    add_clock_argument(parser)
    args = parser.parse_args()
    threads = resolve_threads(args.threads)
    now = clock(args.clock, threads)
    busy_warning(threads, args.clock)
    print(f"torch {torch.__version__}, {threads} thread(s), clock {args.clock}")
    for name in parse_agents(args.agents):
        agent = make_value_agent(name, threads, replay_capacity=2000, flush_denormals=False)
        fill_replay(agent, 1500)
        for _ in range(5):  # Adam's state exists after the first step
            agent.update(0.5)
        units = kill_units(agent, args.dead)
        times: dict[bool, list[float]] = {False: [], True: []}
        for _ in range(args.rounds):
            for flush in (False, True):
                torch.set_flush_denormal(flush)
                kill_units(agent, args.dead)  # the moments as they were, whatever the last round did
                for _ in range(args.updates):
                    start = now()
                    agent.update(0.5)
                    times[flush].append(now() - start)
        torch.set_flush_denormal(False)
        off, on = (statistics.median(times[f]) * 1e3 for f in (False, True))
        print(
            f"{name}: {units} dead units; update {off:.2f} ms kept, {on:.2f} ms flushed: "
            f"ratio kept / flushed {off / on:.2f}"
        )


if __name__ == "__main__":
    main()
