"""A DQN training loop of your own, recorded by benchgen: one file, in the style of CleanRL.

The loop owns everything about learning (network, replay, exploration, optimizer); benchgen owns
the environment (the SABER protocol, or another with --protocol) and the record of every episode,
so `benchgen report RUN_DIR` and `benchgen compare` read this run like any other. Kill it and run
the same command again: the recording continues where it stopped (the network restarts here; a
real script would save and load its own checkpoints too).

    python examples/own_loop/dqn_atari.py --task pong --frames 2M --out runs/own-dqn-pong
    benchgen report runs/own-dqn-pong
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys

import numpy as np
import torch
from torch import nn

from benchgen import api


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--task", default="pong", help="an atari_saber game")
    p.add_argument("--frames", type=float, default=2e6, help="emulator frames (skipped ones included)")
    p.add_argument("--out", default="runs/own-dqn", help="the run directory")
    p.add_argument("--protocol", default=None, help="an Atari protocol preset or YAML (default: SABER)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--num-envs", type=int, default=4)
    p.add_argument("--buffer", type=int, default=50_000, help="replay capacity (transitions)")
    p.add_argument("--learning-starts", type=int, default=5_000, help="transitions before learning")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--target-every", type=int, default=1_000, help="updates between target copies")
    p.add_argument("--eps-steps", type=int, default=100_000, help="steps over which epsilon falls to 0.01")
    p.add_argument("--report", action="store_true", help="run `benchgen report` on the run at the end")
    return p.parse_args()


class QNetwork(nn.Module):
    """Mnih et al. 2015's convolutional Q-network on 4 stacked 84x84 frames."""

    def __init__(self, actions: int):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(4, 32, 8, stride=4), nn.ReLU(),
            nn.Conv2d(32, 64, 4, stride=2), nn.ReLU(),
            nn.Conv2d(64, 64, 3, stride=1), nn.ReLU(),
            nn.Flatten(), nn.Linear(3136, 512), nn.ReLU(), nn.Linear(512, actions),
        )  # fmt: skip

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x.float() / 255.0)


def main() -> None:
    args = parse_args()
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    config = {k: v for k, v in vars(args).items() if k not in ("out", "report")}
    with api.Recording(
        args.out, "atari_saber", args.task, agent="own_dqn", seed=args.seed, budget=int(args.frames),
        protocol=args.protocol, num_envs=args.num_envs, config=config,
    ) as rec:  # fmt: skip
        env = rec.env
        n, actions = env.num_envs, env.single_action_space.n
        q, target = QNetwork(actions), QNetwork(actions)
        target.load_state_dict(q.state_dict())
        optimizer = torch.optim.Adam(q.parameters(), lr=args.lr, eps=1.5e-4)
        obs_buf = np.zeros((args.buffer, 4, 84, 84), np.uint8)
        next_buf = np.zeros_like(obs_buf)
        act_buf = np.zeros(args.buffer, np.int64)
        rew_buf = np.zeros(args.buffer, np.float32)
        done_buf = np.zeros(args.buffer, np.float32)
        size = pos = step = updates = 0
        obs, _ = env.reset(seed=rec.seed)
        while not rec.finished:
            epsilon = max(0.01, 1.0 - step / args.eps_steps)
            with torch.no_grad():
                greedy = q(torch.as_tensor(obs)).argmax(1).numpy()
            explore = np.random.rand(n) < epsilon
            action = np.where(explore, np.random.randint(actions, size=n), greedy)
            next_obs, reward, terminated, truncated, info = env.step(action)
            real_next = next_obs.copy()
            for i in np.flatnonzero(terminated | truncated):
                real_next[i] = info["final_obs"][i]  # SAME_STEP autoreset: the episode's last frame
            for i in range(n):
                obs_buf[pos], next_buf[pos], act_buf[pos] = obs[i], real_next[i], action[i]
                # the loop clips what it learns from (Mnih et al. 2015); the record keeps raw scores
                rew_buf[pos], done_buf[pos] = np.sign(reward[i]), float(terminated[i])
                pos, size = (pos + 1) % args.buffer, min(size + 1, args.buffer)
            obs, step = next_obs, step + 1
            if size >= args.learning_starts and step % 4 == 0:
                idx = np.random.randint(size, size=args.batch)
                with torch.no_grad():
                    best = target(torch.as_tensor(next_buf[idx])).max(1).values
                    goal = torch.as_tensor(rew_buf[idx]) + args.gamma * best * (1 - torch.as_tensor(done_buf[idx]))
                value = q(torch.as_tensor(obs_buf[idx])).gather(1, torch.as_tensor(act_buf[idx])[:, None])[:, 0]
                loss = nn.functional.smooth_l1_loss(value, goal)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                updates += 1
                if updates % args.target_every == 0:
                    target.load_state_dict(q.state_dict())
            if step % 1_000 == 0:
                print(f"{rec.frames_done:,} frames, {rec.episodes} episodes, recent mean {rec.recent_mean():.1f}")
    print(f"recorded {rec.episodes} episodes into {args.out}")
    if args.report:
        subprocess.run([sys.executable, "-m", "benchgen", "report", args.out], check=True)


if __name__ == "__main__":
    main()
