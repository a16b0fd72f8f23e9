"""End-to-end training throughput of a value-based agent on one GPU node, in emulator frames per
second (the GPU checklist's second item; needs a CUDA device).

What is compared, in the same run: the agent's own training loop (``ValueBasedAgent.learn``,
default ``rainbow_iqn`` at the paper's settings: one update per 4 agent steps as SABER, batch 32)
on the suite's Atari env with ``--envs`` sub-environments (ale-py's native vector env, one
emulator thread per sub-environment up to the node's cores; actions chosen for all of them in one
batched forward pass on the GPU) against the same env stepped alone with random actions (the
emulators' own rate: the ceiling of any loop on this node). Both with the learner step eager and
as a CUDA graph (``cuda_graphs``).

The loop's window starts after the learning start (``--learning-starts`` agent steps of random
actions fill the replay) and a few updates, and runs ``--steps`` agent steps; inside it, env.step,
the acting pass and the updates are timed as they run (thin wrappers), and the rest is the loop's
own work (replay writes, noise draws, Python).

Target (checklist): >= 16,000 frames/s (10M frames, SABER Table 6's first column, in about ten
minutes).

Usage: python benchmarks/bench_gpu_e2e.py [--agent rainbow_iqn] [--game breakout] [--envs 16]
    [--steps 20000] [--learning-starts 5000]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import torch
from bench_value_e2e import Stopwatch, TimedContext, time_env
from value_bench_common import make_value_agent, parse_agents

TARGET_FPS = 16_000
DEVICE = "cuda"


def synchronized_clock() -> float:
    """Wall time once the GPU has finished what was queued (acting and updates read their results
    on the host anyway, so this only makes each part's time its own)."""
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return time.perf_counter()


def run(name: str, args, graphs: bool, env_threads: int | None = None) -> dict:
    """The loop and the env alone, with the learner step eager or graphed; ``env_threads``:
    emulator threads (default: the suite's, one per sub-environment up to the cores). torch's
    CPU threads are the agent's default on a GPU (1)."""
    from benchgen.registry import Registry
    from benchgen_atari_saber.env import SaberVectorEnv

    registry = Registry(autoload=True)
    suite, spec = registry.suite("atari_saber"), registry.agent(name.partition(":")[0])
    saber = SaberVectorEnv([args.game] * args.envs, seed=0, protocol=suite.atari_protocol, num_threads=env_threads)
    env = suite.agent_wrappers(saber, spec.needs)
    capacity = args.learning_starts + args.steps + 10_000
    agent = make_value_agent(
        name,
        1,
        capacity,
        args.learning_starts,
        spec.environment(suite, env),
        device=DEVICE,
        precision=args.precision,
        cuda_graphs=graphs,
    )
    watch = Stopwatch(synchronized_clock)
    env.reset(seed=0)
    env_alone, _ = time_env(env, 300, np.random.default_rng(0), watch.timer)
    watch.wrap(env, "step", "env")
    watch.wrap(agent, "explore_actions", "act")
    watch.wrap(agent, "update", "update")
    ctx = TimedContext(env, agent, watch)
    try:
        ctx.run(args.learning_starts + 64 * args.envs)  # the replay's fill, then some updates (and the capture)
        window = ctx.run(args.steps)
    finally:
        env.close()
    frames = 4 * window["steps"]
    return {
        "fps": frames / window["seconds"],
        "env_fps": 4 * args.envs / env_alone,
        "updates_per_s": window["updates"] / window["seconds"],
        "shares": {k: window[f"in_{k}"] / window["seconds"] for k in ("env", "act", "update")},
        "update_ms": 1e3 * window["in_update"] / max(1, window["updates"]),
        "act_ms": 1e3 * window["in_act"] / max(1, window["steps"] // args.envs),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", default="rainbow_iqn")
    parser.add_argument("--game", default="breakout")
    parser.add_argument("--envs", type=int, default=16, help="sub-environments (emulator threads)")
    parser.add_argument("--steps", type=int, default=20_000, help="agent steps in the timed window")
    parser.add_argument("--learning-starts", type=int, default=5_000, help="agent steps of random actions first")
    parser.add_argument("--precision", default="float32", choices=("float32", "bfloat16"))
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        raise SystemExit("bench_gpu_e2e needs a CUDA device (torch sees none)")
    torch.set_float32_matmul_precision("high")
    (name,) = parse_agents(args.agent)
    cores = len(os.sched_getaffinity(0))
    variants = {  # label: (graphs, emulator threads)
        "eager": (False, None),
        "graph": (True, None),
        f"graph, {cores - 1} emulator threads": (True, max(1, min(args.envs, cores - 1))),
    }
    results = {}
    for label, (graphs, env_threads) in variants.items():
        results[label] = run(name, args, graphs, env_threads)
        print(f"  {label}: {results[label]['fps']:,.0f} frames/s", flush=True)
    print(
        f"{name} on {args.game}, {args.envs} sub-environments, {torch.cuda.get_device_name()}, {args.precision}; "
        f"window {args.steps} agent steps after {args.learning_starts} random ones"
    )
    print(
        f"{'step':<6} {'frames/s':>9} {'env alone':>10} {'updates/s':>10} {'update ms':>10} {'act ms':>7} "
        f"{'env':>5} {'act':>5} {'update':>7} {'rest':>5}  target"
    )
    for label, r in results.items():
        s = r["shares"]
        rest = 1 - sum(s.values())
        verdict = f">= {TARGET_FPS:,}: {'met' if r['fps'] >= TARGET_FPS else 'NOT met'}"
        print(
            f"{label.split(',')[0]:<6} {r['fps']:9,.0f} {r['env_fps']:10,.0f} {r['updates_per_s']:10,.0f} "
            f"{r['update_ms']:10.3f} {r['act_ms']:7.3f} {s['env']:5.0%} {s['act']:5.0%} {s['update']:7.0%} "
            f"{rest:5.0%}  {verdict}  ({label})"
        )
    print("env alone: the same env stepped with random actions; shares: of the loop's wall time")


if __name__ == "__main__":
    main()
