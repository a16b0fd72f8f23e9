"""Bytes per stored transition of Rainbow-IQN's replay vs the 7,056-byte floor (one 84x84 frame).

Fills a replay with real Atari play (ale-py's vector env, 4x84x84 stacked frames, full action
set, sticky actions 0.25, random actions) until it wraps, then divides the memory's bytes (frames,
actions, rewards, flags and the sum tree) by the transitions it holds; the per-episode boundary
slots (3 padding frames and the final frame) are counted as overhead. Random Breakout has short
episodes (~170 steps), so the overhead is larger than in a trained agent's long episodes.
It also reports the allocation of a full 1M-transition memory (pages are not touched).

Usage: python benchmarks/bench_rainbow_replay.py [--game breakout] [--capacity 50000] [--steps 60000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from benchgen_agents.value_based.replay import END, PAD, PrioritizedReplay

FLOOR = 84 * 84  # one uint8 frame


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="breakout")
    parser.add_argument("--capacity", type=int, default=50_000)
    parser.add_argument(
        "--steps", type=int, default=60_000, help="agent steps to play (more than capacity: the ring wraps)"
    )
    args = parser.parse_args()
    from ale_py.vector_env import AtariVectorEnv

    env = AtariVectorEnv(
        args.game,
        1,
        autoreset_mode="SameStep",
        repeat_action_probability=0.25,
        full_action_space=True,
        noop_max=0,
        use_fire_reset=False,
        reward_clipping=False,
        episodic_life=False,
    )
    replay = PrioritizedReplay(args.capacity, 1, (4, 84, 84), np.uint8, 4, 3, 0.99, 0.2, 1.0, 18)
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=0)
    replay.start_episode(0, obs[0])
    episodes, start = 0, time.perf_counter()
    for _ in range(args.steps):
        actions = rng.integers(0, 18, 1)
        nxt, rewards, term, trunc, info = env.step(actions)
        replay.add(obs, actions, rewards, term, trunc, nxt, info.get("final_obs"))
        episodes += int((term | trunc).sum())
        obs = nxt
    env.close()
    elapsed = time.perf_counter() - start
    held = int(((replay.flags & (PAD | END)) == 0).sum())  # transition slots now in memory
    per_transition = replay.nbytes / held
    per_slot = replay.nbytes / replay.slots
    full = PrioritizedReplay.estimate_bytes(1_000_000, (4, 84, 84), np.uint8, 4)
    print(
        f"{args.game}: {args.steps} steps, {episodes} episodes (mean length {args.steps / max(episodes, 1):.0f}), {elapsed:.0f}s"
    )
    print(
        f"replay of {replay.slots} slots: {replay.nbytes / 2**20:.1f} MiB, {held} transitions held, {replay.num_valid} sampleable"
    )
    print(
        f"bytes per stored transition: {per_transition:.1f} (floor {FLOOR}); ratio {per_transition / FLOOR:.4f} (target <= 1.1)"
    )
    print(f"bytes per slot (no episode boundaries): {per_slot:.1f}; ratio {per_slot / FLOOR:.4f}")
    print(f"1M-transition memory allocates {full / 2**30:.2f} GiB = {full / 1e6:.1f} bytes per slot")


if __name__ == "__main__":
    main()
