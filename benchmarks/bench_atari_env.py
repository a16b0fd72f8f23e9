"""Throughput of SaberVectorEnv against the raw ale-py AtariVectorEnv it is built on.

Both envs use the same SABER settings (``ale_settings``), game, number of sub-environments,
threads and pre-drawn random actions, in the same process. They run in alternating rounds
(the order flips every round) so that load from elsewhere on the machine hits both alike; the
script prints the frames/s of each, the ratio SABER / raw of the totals and the median of the
per-round ratios (target: >= 0.95).

Because a shared machine makes emulator timings noisy, it also measures the wrapper's own cost
directly: SaberVectorEnv stepping a null backend that returns instantly. That overhead per step,
set against the raw env's time per step, bounds the ratio independently of machine load.

    python benchmarks/bench_atari_env.py --game pong --num-envs 8 --steps 200 --rounds 10
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from types import SimpleNamespace

import numpy as np
from ale_py.vector_env import AtariVectorEnv

from benchgen_atari_saber.env import FRAMESKIP, NUM_ACTIONS, OBS_SHAPE, SaberVectorEnv, ale_settings


def run(env, actions: np.ndarray) -> float:
    """Step ``env`` through ``actions`` (steps x envs); return the elapsed seconds."""
    pop = getattr(env, "pop_episode_ends", None)
    start = time.perf_counter()
    for row in actions:
        env.step(row)
        if pop is not None:
            pop()  # what the recorder does after every step
    return time.perf_counter() - start


class NullBackend:
    """Stands in for AtariVectorEnv and costs (almost) nothing: isolates the wrapper's cost."""

    def __init__(self, game: str, num_envs: int, max_episode_frames: int, num_threads: int):
        self.ale = SimpleNamespace(get_action_set=lambda: list(range(NUM_ACTIONS)))
        self._result = (
            np.zeros((num_envs, *OBS_SHAPE), dtype=np.uint8),
            np.zeros(num_envs, dtype=np.int32),
            np.zeros(num_envs, dtype=bool),
            np.zeros(num_envs, dtype=bool),
            {"env_id": np.arange(num_envs), "lives": np.zeros(num_envs, dtype=np.int32)},
        )

    def reset(self, seed=None, options=None):
        return self._result[0].copy(), {}

    def send(self, actions):
        pass

    def recv(self):
        return self._result

    def close(self):
        pass


def wrapper_overhead_us(num_envs: int, steps: int = 20_000) -> float:
    """Microseconds per step SaberVectorEnv adds on top of its backend."""
    env = SaberVectorEnv(["pong"] * num_envs, backend_factory=NullBackend)
    env.reset()
    actions = np.zeros((steps, num_envs), dtype=np.int64)
    return run(env, actions) / steps * 1e6


def main(argv: list[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="pong")
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--steps", type=int, default=200, help="vector steps per round and env")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--num-threads", type=int, default=min(8, os.cpu_count() or 1))
    args = parser.parse_args(argv)

    n = args.num_envs
    raw = AtariVectorEnv(args.game, n, num_threads=args.num_threads, **ale_settings())
    saber = SaberVectorEnv([args.game] * n, seed=0, num_threads=args.num_threads)
    raw.reset(seed=np.arange(n))
    saber.reset(seed=0)
    rng = np.random.default_rng(0)
    raw_time = saber_time = 0.0
    ratios = []
    for round_ in range(args.rounds):
        actions = rng.integers(0, NUM_ACTIONS, size=(args.steps, n), dtype=np.int64)
        if round_ % 2 == 0:
            t_raw = run(raw, actions)
            t_saber = run(saber, actions)
        else:
            t_saber = run(saber, actions)
            t_raw = run(raw, actions)
        raw_time += t_raw
        saber_time += t_saber
        ratios.append(t_raw / t_saber)
    raw.close()
    saber.close()

    frames = args.rounds * args.steps * n * FRAMESKIP
    raw_fps, saber_fps = frames / raw_time, frames / saber_time
    raw_step_us = raw_time / (args.rounds * args.steps) * 1e6
    overhead = wrapper_overhead_us(n)
    print(f"game={args.game} envs={n} threads={args.num_threads} frames per env type={frames:,}")
    print(f"raw AtariVectorEnv : {raw_fps:10,.0f} frames/s")
    print(f"SaberVectorEnv     : {saber_fps:10,.0f} frames/s")
    print(
        f"ratio SABER/raw    : {saber_fps / raw_fps:.3f} total, "
        f"{statistics.median(ratios):.3f} median of rounds (target >= 0.95)"
    )
    print(
        f"wrapper overhead   : {overhead:.1f} us/step on a null backend vs {raw_step_us:.0f} us/step raw "
        f"-> bound {raw_step_us / (raw_step_us + overhead):.3f}"
    )
    return saber_fps / raw_fps


if __name__ == "__main__":
    main()
