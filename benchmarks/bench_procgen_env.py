"""Throughput of the procgen suite's vector env against raw ``ProcgenGym3Env``, in the same run.

What is compared, in one process, on the same game, levels and random actions:

* **raw**: the package's batched env (``ProcgenGym3Env``, loaded as the suite loads it:
  ``benchgen_procgen.env.procgen_env_class()``) with ``--num-envs`` games, ``num_threads=0`` (the
  games stepped in this thread, as the suite builds them), the protocol's options and training
  levels, and the ``rand_seed`` the suite derives for its one group: ``act(actions)`` then
  ``observe()`` per vector step (its result held until the next, as any consumer holds it), nothing else;
* **suite**: ``benchgen_procgen.env.ProcgenVectorEnv`` (what ``ProcgenSuite.make_env`` builds for a
  run) stepped with the same actions: ``step(actions)`` and ``pop_episode_ends()``, which include
  benchgen's episode recording (returns, lengths, level seeds and end reasons of every finished
  episode), the level-range check and ``info["final_obs"]``.

Both play the same levels with the same actions, so they stay in lockstep; the last frames are
compared at the end (a check that the suite plays exactly what the package plays). Raw and suite
measurements alternate (the order swapped every round) over ``--rounds`` rounds of ``--steps``
vector steps each; the result is the median of the per-round ratios suite / raw (target >= 0.95).
``--clock cpu`` times with the process's CPU time (the process has one thread: the package's
games run in it), which leaves out the time other processes hold the core.

Measured 2026-11-28 on the 2-core development machine beside two long training runs (an Atari
100K game and the Procgen PPO proof run; load average 3.5 to 5 on 2 cores), coinrun, 64 envs,
300 vector steps a round: ``--clock cpu``, 15 rounds: raw 32,476 steps/s, suite 31,936, ratio
0.970; wall clock, 9 rounds: ratio 0.997 (target >= 0.95). Before the suite env handed on the
package's arrays (it gathered every frame into a buffer of its own, copied that for each step,
and copied all 64 frames again into ``info["final_obs"]`` whenever an episode ended) the same
measurements gave 0.936 to 0.960 (CPU clock) and 0.939 to 0.944 (wall clock).

    python benchmarks/bench_procgen_env.py [--game coinrun] [--num-envs 64] [--steps 200] [--rounds 9]
        [--clock wall|cpu]
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np
from value_bench_common import add_clock_argument, clock, load_average

from benchgen_procgen.env import ProcgenVectorEnv, group_seed, gym3_options, level_range, procgen_env_class
from benchgen_procgen.games import ACTION_COMBOS
from benchgen_procgen.protocols import preset


def measure_raw(env, actions: np.ndarray, timer) -> float:
    """Vector steps per second of ``act`` + ``observe`` over ``actions`` (steps x envs)."""
    last = None
    start = timer()
    for a in actions:
        env.act(a)
        last = env.observe()  # held until the next step, as any consumer (and the suite) holds its frames
    del last
    return len(actions) / (timer() - start)


def measure_suite(env: ProcgenVectorEnv, actions: np.ndarray, timer) -> float:
    """Vector steps per second of ``step`` + ``pop_episode_ends`` over ``actions``."""
    start = timer()
    for a in actions:
        env.step(a)
        env.pop_episode_ends()
    return len(actions) / (timer() - start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="coinrun")
    parser.add_argument("--protocol", default="easy200")
    parser.add_argument("--num-envs", type=int, default=64)
    parser.add_argument("--steps", type=int, default=200, help="vector steps per measurement")
    parser.add_argument("--rounds", type=int, default=9, help="alternating rounds; the median ratio is reported")
    parser.add_argument("--seed", type=int, default=0)
    add_clock_argument(parser)
    args = parser.parse_args(argv)
    timer = clock(args.clock, 1)

    protocol = preset(args.protocol)
    suite = ProcgenVectorEnv([args.game] * args.num_envs, args.seed, protocol)
    suite.reset(seed=args.seed)
    raw = procgen_env_class()(
        num=args.num_envs,
        env_name=args.game,
        rand_seed=group_seed(args.seed, 0),  # the suite's one group's
        num_threads=0,
        **gym3_options(protocol),
        **level_range(protocol, args.game, False).options(),
    )
    raw.observe()
    rng = np.random.default_rng(args.seed)
    # int64, as an agent's actions come (both cast them to the package's int32)
    actions = rng.integers(0, len(ACTION_COMBOS), size=(args.rounds + 1, args.steps, args.num_envs))

    print(
        f"procgen {args.game}, protocol {args.protocol}, {args.num_envs} envs, num_threads=0, "
        f"{args.rounds} rounds x {args.steps} vector steps, {args.clock} clock; {load_average()}"
    )
    # warm-up round (caches, first levels), not counted
    measure_raw(raw, actions[0], timer)
    measure_suite(suite, actions[0], timer)
    raw_rates, suite_rates, ratios = [], [], []
    for r in range(args.rounds):
        if r % 2 == 0:
            raw_rates.append(measure_raw(raw, actions[r + 1], timer))
            suite_rates.append(measure_suite(suite, actions[r + 1], timer))
        else:
            suite_rates.append(measure_suite(suite, actions[r + 1], timer))
            raw_rates.append(measure_raw(raw, actions[r + 1], timer))
        ratios.append(suite_rates[-1] / raw_rates[-1])
        print(
            f"round {r}: raw {raw_rates[-1] * args.num_envs:8.0f} steps/s   suite "
            f"{suite_rates[-1] * args.num_envs:8.0f} steps/s   ratio {ratios[-1]:.3f}",
            flush=True,
        )
    _, ob, _ = raw.observe()
    same = np.array_equal(ob["rgb"], suite.screens())
    print(
        f"median: raw {statistics.median(raw_rates) * args.num_envs:.0f} steps/s, suite "
        f"{statistics.median(suite_rates) * args.num_envs:.0f} steps/s; median of the per-round ratios "
        f"{statistics.median(ratios):.3f} (target >= 0.95); last frames identical: {same}; {load_average()}"
    )
    suite.close()
    raw.close()
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
