"""Learner updates per second: Rainbow-IQN vs sb3-contrib QR-DQN, same Nature torso, batch 32.

Both learners get a replay filled with random 4x84x84 uint8 observations (18 actions, Atari's
full action set), then run the same number of updates, interleaved in rounds so that both see
the same machine load. QR-DQN's step is ``QRDQN.train(gradient_steps=K, batch_size=32)`` (its
defaults: 200 quantiles, Nature CNN + Linear(512 -> 18 x 200)); ours is
``RainbowIQNAgent.update`` with SABER's settings (N = N' = 64, K = 32, dueling noisy 512).

It also counts the floating-point operations of one update of each (torch's FlopCounterMode):
the IQN head evaluates its 3136 -> 512 dueling layers once per (sample, tau) pair, i.e. on
32 x (64 + 64 + 32) rows per update instead of QR-DQN's 32, which bounds the ratio on hardware
that is compute-bound (a CPU); on a GPU both are dominated by per-kernel overheads.

Usage: python benchmarks/bench_rainbow_updates.py [--updates 20] [--rounds 3] [--threads 0] [--precision float32]
"""

from __future__ import annotations

import argparse
import os
import time

import gymnasium as gym
import numpy as np
import torch


def make_rainbow(obs_space, act_space, fill: int, device: str, precision: str = "float32"):
    from benchgen.agent import AgentEnvironment
    from benchgen_agents.rainbow_iqn import RainbowIQNConfig, make_agent

    cfg = RainbowIQNConfig(replay_capacity=fill + 1000, learning_starts_frames=0, device=device, precision=precision)
    agent = make_agent(cfg, AgentEnvironment(obs_space, act_space))
    agent.replay = agent.new_replay(1)
    rng = np.random.default_rng(0)
    obs = rng.integers(0, 256, (1, *obs_space.shape), dtype=np.uint8)
    agent.replay.start_episode(0, obs[0])
    for t in range(fill):
        nxt = np.concatenate([obs[:, 1:], rng.integers(0, 256, (1, 1, 84, 84), dtype=np.uint8)], axis=1)
        done = np.array([t % 1000 == 999])
        agent.replay.add(obs, rng.integers(0, 18, 1), rng.random(1), done, np.array([False]), nxt, nxt)
        obs = nxt
    return agent


def make_qrdqn(obs_space, act_space, fill: int, device: str):
    from sb3_contrib import QRDQN
    from stable_baselines3.common.logger import configure

    class Dummy(gym.Env):
        observation_space, action_space = obs_space, act_space

        def reset(self, *, seed=None, options=None):
            return obs_space.sample(), {}

        def step(self, action):
            return obs_space.sample(), 0.0, False, False, {}

    model = QRDQN(
        "CnnPolicy", Dummy(), buffer_size=fill + 1000, batch_size=32, learning_starts=0, device=device, seed=0
    )
    model.set_logger(configure(None, []))
    rng = np.random.default_rng(0)
    for _ in range(fill):
        o = rng.integers(0, 256, (1, *obs_space.shape), dtype=np.uint8)
        n = rng.integers(0, 256, (1, *obs_space.shape), dtype=np.uint8)
        model.replay_buffer.add(o, n, rng.integers(0, 18, (1, 1)), rng.random(1), np.array([False]), [{}])
    return model


def flops_per_update(fn) -> float:
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=20, help="updates per round for each learner")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved timing rounds")
    parser.add_argument("--fill", type=int, default=5000, help="transitions in each replay")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: all cores)")
    parser.add_argument("--device", default="auto")
    parser.add_argument(
        "--precision",
        default="float32",
        choices=["float32", "bfloat16"],
        help="bfloat16: autocast for both learners (Rainbow-IQN's precision setting)",
    )
    args = parser.parse_args()
    threads = args.threads or len(os.sched_getaffinity(0))
    torch.set_num_threads(threads)
    device = ("cuda" if torch.cuda.is_available() else "cpu") if args.device == "auto" else args.device
    obs_space = gym.spaces.Box(0, 255, (4, 84, 84), np.uint8)
    act_space = gym.spaces.Discrete(18)
    ours = make_rainbow(obs_space, act_space, args.fill, device, args.precision)
    torch.set_num_threads(threads)  # the agent sets its own threads; use the same for both
    theirs = make_qrdqn(obs_space, act_space, args.fill, device)

    def run_ours(k):
        for _ in range(k):
            ours.update(0.4)

    def run_theirs(k):
        with torch.autocast(device.split(":")[0], dtype=torch.bfloat16, enabled=args.precision == "bfloat16"):
            theirs.train(gradient_steps=k, batch_size=32)

    def sync():
        if device.startswith("cuda"):
            torch.cuda.synchronize()

    for fn in (run_ours, run_theirs):  # warm-up
        fn(3)
    sync()
    spent = {"rainbow_iqn": 0.0, "qrdqn": 0.0}
    for _ in range(args.rounds):
        for name, fn in (("rainbow_iqn", run_ours), ("qrdqn", run_theirs)):
            start = time.perf_counter()
            fn(args.updates)
            sync()
            spent[name] += time.perf_counter() - start
    total = args.updates * args.rounds
    ours_ups, theirs_ups = total / spent["rainbow_iqn"], total / spent["qrdqn"]
    ours_flops = flops_per_update(lambda: run_ours(1))
    theirs_flops = flops_per_update(lambda: run_theirs(1))
    print(
        f"device: {device}, torch threads: {threads}, {args.precision}, batch 32, obs 4x84x84 uint8, "
        f"18 actions, {total} updates each"
    )
    print(f"rainbow_iqn  {ours_ups:8.2f} updates/s   {ours_flops / 1e9:7.2f} GFLOP/update")
    print(f"qrdqn (sb3)  {theirs_ups:8.2f} updates/s   {theirs_flops / 1e9:7.2f} GFLOP/update")
    print(
        f"ratio rainbow_iqn / qrdqn: {ours_ups / theirs_ups:.3f} (target >= 1.0); "
        f"FLOP ratio qrdqn / rainbow_iqn: {theirs_flops / ours_flops:.3f}"
    )


if __name__ == "__main__":
    main()
