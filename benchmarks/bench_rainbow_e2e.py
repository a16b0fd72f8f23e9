"""End-to-end agent steps per second on real Atari: Rainbow-IQN vs sb3-contrib QR-DQN.

Both agents play the same ale-py vector env (1 sub-environment, 4x84x84 stacked frames, full
action set, sticky actions 0.25, no life signal, SAME_STEP autoreset) with the same schedule:
``--learning-starts`` agent steps of acting only, then one learner update every 4 agent steps,
batch 32, until ``--steps``. QR-DQN sees the env through a small sb3 VecEnv adapter (sb3's
``terminal_observation`` convention is the same as SAME_STEP's ``final_obs``). Reported: steps/s
over the whole run and over the learning phase, and their ratio.

Usage: python benchmarks/bench_rainbow_e2e.py [--game breakout] [--steps 1600] [--learning-starts 1000]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import torch


def make_env(game: str):
    from ale_py.vector_env import AtariVectorEnv

    return AtariVectorEnv(
        game,
        1,
        autoreset_mode="SameStep",
        repeat_action_probability=0.25,
        full_action_space=True,
        noop_max=0,
        use_fire_reset=False,
        reward_clipping=False,
        episodic_life=False,
    )


class TimedContext:
    """A minimal TrainingContext that records when learning starts (``learning_starts`` steps)."""

    def __init__(self, env, budget: int, learning_starts: int):
        self.env, self.budget_steps, self.seed, self.unit_dir = env, budget, 0, Path(".")
        self.learning_starts, self.steps, self.phase_start = learning_starts, 0, None

    @property
    def steps_done(self) -> int:
        return self.steps

    @property
    def finished(self) -> bool:
        return self.steps >= self.budget_steps

    def maybe_checkpoint(self) -> None:
        self.steps += 1  # called once per vector step of 1 sub-environment
        if self.steps == self.learning_starts:
            self.phase_start = time.perf_counter()

    def log_scalar(self, tag: str, value: float) -> None:
        pass


def run_rainbow(args) -> tuple[float, float]:
    from benchgen.agent import AgentEnvironment
    from benchgen_agents.rainbow_iqn import RainbowIQNConfig, make_agent

    env = make_env(args.game)
    cfg = RainbowIQNConfig(
        replay_capacity=args.steps + 100,
        learning_starts_frames=4 * args.learning_starts,
        torch_threads=args.threads,
        precision=args.precision,
    )
    agent = make_agent(
        cfg, AgentEnvironment(env.single_observation_space, env.single_action_space, cfg.frames_per_step)
    )
    ctx = TimedContext(env, args.steps, args.learning_starts)
    start = time.perf_counter()
    agent.learn(env, ctx)
    end = time.perf_counter()
    env.close()
    return args.steps / (end - start), (args.steps - args.learning_starts) / (end - ctx.phase_start)


def run_qrdqn(args) -> tuple[float, float]:
    from sb3_contrib import QRDQN
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import VecEnv

    class AleVecEnv(VecEnv):
        """ale-py's SAME_STEP vector env as an sb3 VecEnv."""

        def __init__(self, env):
            self.env = env
            super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)

        def reset(self):
            return self.env.reset(seed=0)[0]

        def step_async(self, actions):
            self._actions = actions

        def step_wait(self):
            obs, rewards, term, trunc, info = self.env.step(self._actions)
            infos = [{} for _ in range(self.num_envs)]
            for i in np.flatnonzero(term | trunc):
                infos[i] = {
                    "terminal_observation": info["final_obs"][i],
                    "TimeLimit.truncated": bool(trunc[i] and not term[i]),
                }
            return obs, rewards.astype(np.float32), term | trunc, infos

        def close(self):
            self.env.close()

        def get_attr(self, name, indices=None):
            return [getattr(self.env, name)] * self.num_envs

        def set_attr(self, name, value, indices=None):
            pass

        def env_method(self, name, *a, indices=None, **kw):
            return [None] * self.num_envs

        def env_is_wrapped(self, wrapper_class, indices=None):
            return [False] * self.num_envs

    class Timer(BaseCallback):
        phase_start = None

        def _on_step(self) -> bool:
            if self.num_timesteps == args.learning_starts:
                Timer.phase_start = time.perf_counter()
            return True

    vec = AleVecEnv(make_env(args.game))
    model = QRDQN(
        "CnnPolicy",
        vec,
        buffer_size=args.steps + 100,
        learning_starts=args.learning_starts,
        batch_size=32,
        train_freq=4,
        gradient_steps=1,
        target_update_interval=8000,
        seed=0,
        device="auto",
    )
    start = time.perf_counter()
    model.learn(total_timesteps=args.steps, callback=Timer())
    end = time.perf_counter()
    vec.close()
    return args.steps / (end - start), (args.steps - args.learning_starts) / (end - Timer.phase_start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="breakout")
    parser.add_argument("--steps", type=int, default=1600)
    parser.add_argument("--learning-starts", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=0, help="torch threads for both (0: all cores)")
    parser.add_argument(
        "--precision", default="float32", choices=["float32", "bfloat16"], help="Rainbow-IQN's precision"
    )
    args = parser.parse_args()
    threads = args.threads = args.threads or len(os.sched_getaffinity(0))
    ours_all, ours_learning = run_rainbow(args)
    torch.set_num_threads(threads)
    theirs_all, theirs_learning = run_qrdqn(args)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    print(
        f"{args.game}, {args.steps} agent steps, learning from step {args.learning_starts}, device {device}, "
        f"{threads} threads, Rainbow-IQN in {args.precision}"
    )
    print(f"rainbow_iqn  {ours_all:8.1f} steps/s overall  {ours_learning:8.1f} steps/s while learning")
    print(f"qrdqn (sb3)  {theirs_all:8.1f} steps/s overall  {theirs_learning:8.1f} steps/s while learning")
    print(
        f"ratio rainbow_iqn / qrdqn: {ours_all / theirs_all:.3f} overall, {ours_learning / theirs_learning:.3f} while learning"
    )


if __name__ == "__main__":
    main()
