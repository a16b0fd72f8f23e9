"""stable-baselines3's own DQN on CartPole-v1 with the RL Baselines3 Zoo's tuned values, scored
the way benchgen's gymnasium suite scores a run: the reference for the dqn CartPole-v1 entry of
``tests/gymnasium_suite/test_rl_zoo_scores.py`` (is a gap there benchgen's DQN, or the measure?).

    python benchmarks/rl_zoo_dqn_cartpole_sb3.py 0 1     # seeds; about 4 min each on one core

Values: hyperparams/dqn.yml CartPole-v1 of DLR-RM/rl-baselines3-zoo at commit 22e3ff2 (the ones
``plugins/gymnasium_suite/tuned/dqn.yaml`` carries), SB3's defaults for the rest (max_grad_norm
10, tau 1, Huber loss, Adam). Prints per seed the mean return of the last 100 training episodes
(benchgen's suite score, exploration included), the training curve in 5K-step bins, and the
RL Zoo's measure: a greedy evaluation of the final model (here 20 episodes).

Measured 2026-11-25 (SB3 2.9.2, torch 2.13 CPU, development machine): seed 0 last-100 178.9,
greedy 18.8; seed 1 last-100 234.9, greedy 500.0.
"""

from __future__ import annotations

import sys

import gymnasium as gym
import numpy as np
import torch
from stable_baselines3 import DQN
from stable_baselines3.common.evaluation import evaluate_policy
from stable_baselines3.common.monitor import Monitor

#: RL Zoo hyperparams/dqn.yml, CartPole-v1 (commit 22e3ff2)
ZOO = dict(
    learning_rate=2.3e-3,
    batch_size=64,
    buffer_size=100_000,
    learning_starts=1000,
    gamma=0.99,
    target_update_interval=10,
    train_freq=256,
    gradient_steps=128,
    exploration_fraction=0.16,
    exploration_final_eps=0.04,
    policy_kwargs=dict(net_arch=[256, 256]),
)
N_TIMESTEPS = 50_000


def run(seed: int) -> None:
    env = Monitor(gym.make("CartPole-v1"))
    model = DQN("MlpPolicy", env, seed=seed, device="cpu", verbose=0, **ZOO)
    model.learn(N_TIMESTEPS)
    returns = np.array(env.get_episode_rewards())
    ends = np.cumsum(env.get_episode_lengths())
    print(f"seed {seed}: {len(returns)} episodes, last-100 training mean {returns[-100:].mean():.1f}")
    for start in range(0, N_TIMESTEPS, 5000):
        part = returns[(ends > start) & (ends <= start + 5000)]
        mean = f"{part.mean():.1f}" if len(part) else "-"
        print(f"  steps {start // 1000}K-{start // 1000 + 5}K: {len(part)} episodes ending, mean {mean}")
    mean, std = evaluate_policy(model, Monitor(gym.make("CartPole-v1")), n_eval_episodes=20, deterministic=True)
    print(f"seed {seed}: greedy evaluation of the final model {mean:.1f} +- {std:.1f} (20 episodes)")


if __name__ == "__main__":
    torch.set_num_threads(1)
    for arg in sys.argv[1:] or ["0"]:
        run(int(arg))
