"""benchgen's ``ppo`` agent vs plain stable-baselines3 PPO: same Atari env, same settings.

What is compared, for the same number of agent steps on the same game:

* **plain SB3**: ``PPO("CnnPolicy", env).learn(steps)`` on ale-py's ``AtariVectorEnv`` with the
  SABER settings (sticky actions 0.25, full 18 actions, no no-op/FIRE starts, no life signal,
  raw rewards, 84x84 gray, max-pool, stack 4, SAME_STEP autoreset), seen through
  :class:`benchgen_agents.ppo.vec_env.BenchgenVecEnv` (the minimal SB3 view of a batched env),
  with RL Zoo's Atari hyperparameters and reward clipping;
* **benchgen ppo**: one ``benchgen run``-equivalent unit (``benchgen.run.execution.unit.execute_unit``): the suite's
  env under benchgen's episode recorder (SQLite commits per episode), the agent's budget callback,
  TensorBoard logging and resumable checkpoints (every budget / 20, the default).

Both timings run from env creation to the end of learning, with the same number of PPO updates.

The env is the ``atari_saber`` suite's when that plugin is installed; otherwise the same
``AtariVectorEnv`` settings under a minimal suite defined here (so the ratio then measures
benchgen's framework overhead only). Each round runs both, in alternating order, so a round's
ratio compares runs close in time; the median of the per-round ratios is the result (robust to a
shared machine's load swings). Target: ratio >= 0.95.

    python benchmarks/bench_ppo_overhead.py --game breakout --steps 4096 --rounds 8
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import gymnasium as gym
import numpy as np

#: ale-py AtariVectorEnv arguments of the SABER protocol (spec: atari_saber.md)
SABER_ALE = dict(
    frameskip=4,
    repeat_action_probability=0.25,
    full_action_space=True,
    noop_max=0,
    use_fire_reset=False,
    episodic_life=False,
    life_loss_info=False,
    reward_clipping=False,
    max_num_frames_per_episode=21_600_000,
    img_height=84,
    img_width=84,
    grayscale=True,
    stack_num=4,
    maxpool=True,
    autoreset_mode="SameStep",
)


def saber_settings() -> dict:
    """The atari_saber suite's own AtariVectorEnv arguments when installed (exact parity)."""
    try:
        from benchgen_atari_saber.env import ale_settings
    except ImportError:
        return dict(SABER_ALE)
    return ale_settings()


def ale_env(game: str, num_envs: int, seed: int, threads: int):
    from ale_py.vector_env import AtariVectorEnv

    env = AtariVectorEnv(game, num_envs, num_threads=threads, **saber_settings())
    env.reset(seed=seed)
    return env


def atari_defaults() -> dict:
    from benchgen.tuned import tuned_values
    from benchgen_atari_saber.suite import AtariSaberSuite

    return tuned_values(AtariSaberSuite(), "ppo")


def run_plain_sb3(game: str, steps: int, num_envs: int, seed: int, threads: int) -> tuple[int, float]:
    """(agent steps, seconds) of plain SB3 PPO learning ``steps`` steps, env and model creation
    included (as in the benchgen unit)."""
    from stable_baselines3 import PPO
    from stable_baselines3.common.utils import LinearSchedule

    from benchgen_agents.ppo.vec_env import BenchgenVecEnv

    d = atari_defaults()
    start = time.perf_counter()
    vec = BenchgenVecEnv(ale_env(game, num_envs, seed, threads), clip_reward=d["clip_reward"])
    model = PPO(
        "CnnPolicy",
        vec,
        n_steps=d["n_steps"],
        batch_size=d["batch_size"],
        n_epochs=d["n_epochs"],
        learning_rate=LinearSchedule(d["learning_rate"], 0.0, 1.0),
        clip_range=LinearSchedule(d["clip_range"], 0.0, 1.0),
        gamma=d["gamma"],
        gae_lambda=d["gae_lambda"],
        ent_coef=d["ent_coef"],
        vf_coef=d["vf_coef"],
        seed=seed,
        verbose=0,
        device="cpu",
    )
    model.learn(total_timesteps=steps)
    elapsed = time.perf_counter() - start
    vec.close()
    return model.num_timesteps, elapsed


def _fallback_suite(threads: int):
    """The SABER AtariVectorEnv settings as a benchgen suite (when atari_saber is not installed)."""
    from benchgen.suite import EpisodeEnd, Suite, SuiteVectorEnv

    class AleVectorEnv(SuiteVectorEnv):
        frames_per_step = 4
        metadata = {"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}

        def __init__(self, tasks, seed):
            from ale_py.vector_env import AtariVectorEnv

            self.tasks = list(tasks)
            self._env = AtariVectorEnv(self.tasks[0], len(self.tasks), num_threads=threads, **SABER_ALE)
            self.num_envs = len(self.tasks)
            self.single_observation_space = self._env.single_observation_space
            self.single_action_space = self._env.single_action_space
            self.observation_space, self.action_space = self._env.observation_space, self._env.action_space
            self._seed, self._score, self._len, self._ends = (
                seed,
                np.zeros(self.num_envs),
                np.zeros(self.num_envs, int),
                [],
            )

        def reset(self, *, seed=None, options=None):
            obs, _info = self._env.reset(seed=self._seed if seed is None else seed)
            self._score[:] = 0
            self._len[:] = 0
            return obs, {}

        def step(self, actions):
            obs, rewards, terminated, truncated, info = self._env.step(actions)
            self._score += rewards
            self._len += 4
            done = terminated | truncated
            out = {}
            if done.any():
                out["final_obs"] = info["final_obs"]
                for i in np.flatnonzero(done):
                    self._ends.append(
                        EpisodeEnd(
                            int(i),
                            self.tasks[i],
                            float(self._score[i]),
                            int(self._len[i]),
                            "game_over" if terminated[i] else "max_length",
                        )
                    )
                self._score[done] = 0
                self._len[done] = 0
            return obs, rewards, terminated, truncated, out

        def pop_episode_ends(self):
            ends, self._ends = self._ends, []
            return ends

        def close_extras(self, **kwargs):
            self._env.close()

    class AleSuite(Suite):
        name = "ale_bench"
        description = "SABER AtariVectorEnv settings (benchmark only)"
        default_budget = 200_000_000
        default_num_envs = 8

        def tasks(self):
            from ale_py import roms

            return list(roms.get_all_rom_ids())

        def protocol(self):
            return dict(SABER_ALE)

        def make_env(self, tasks, seed, *, mode="train"):
            return AleVectorEnv(tasks, seed)

    return AleSuite()


def run_benchgen(
    game: str, steps: int, num_envs: int, seed: int, threads: int, suite_name: str | None
) -> tuple[int, float]:
    """(agent steps, seconds) of one benchgen unit (``execute_unit``: env and agent creation,
    learning, recording, checkpoints). The budget is one vector step more than ``steps``: the
    agent stops exactly at its budget and skips the update after a rollout that ends on it, so
    this makes it do the same updates as plain SB3 (which always trains on its last rollout)."""
    from benchgen.config import RunConfig
    from benchgen.registry import Registry
    from benchgen.run.execution.unit import execute_unit
    from benchgen.run.planning.plan import create_run, plan_units, resolve

    class _Plugin:
        import benchgen as _b

        @_b.hookimpl
        def benchgen_suites(self):
            return [] if suite_name else [_fallback_suite(threads)]

    registry = Registry(plugins=[("bench_fallback", _Plugin())])
    run = RunConfig(
        suite=suite_name or "ale_bench",
        agent="ppo",
        tasks=[game],
        seeds=[seed],
        budget=(steps + num_envs) * 4,
        num_envs=num_envs,
        progress=False,
    )
    overrides = {**atari_defaults(), "device": "cpu"}
    resolved = resolve(registry, run, overrides)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        run_dir = create_run(registry, resolved, out)
        (unit,) = plan_units(resolved)
        start = time.perf_counter()
        done = execute_unit(run_dir, resolved, unit.unit_id)
        return done.frames_done // 4, time.perf_counter() - start


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="breakout")
    parser.add_argument("--steps", type=int, default=4096, help="agent steps per run (a multiple of 8 x 128)")
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument(
        "--ale-threads",
        type=int,
        default=min(8, os.cpu_count() or 1),
        help="ale-py threads of the plain env (the suite uses min(num_envs, cpus))",
    )
    parser.add_argument("--torch-threads", type=int, default=0, help="0: torch's default")
    args = parser.parse_args(argv)

    import torch

    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    from benchgen.registry import Registry

    suite_name = "atari_saber" if "atari_saber" in Registry().suites else None
    print(
        f"game {args.game}, {args.steps} agent steps, {args.num_envs} envs, torch threads {torch.get_num_threads()}, "
        f"benchgen env: {suite_name or 'fallback suite (atari_saber not installed)'}"
    )
    plain, ours = [], []
    for r in range(args.rounds):
        # Alternate which runs first: on a shared machine the load drifts within a round too.
        order = ("plain", "benchgen") if r % 2 == 0 else ("benchgen", "plain")
        for which in order:
            if which == "plain":
                n, seconds = run_plain_sb3(args.game, args.steps, args.num_envs, r, args.ale_threads)
                plain.append(n / seconds)
            else:
                n, seconds = run_benchgen(args.game, args.steps, args.num_envs, r, args.ale_threads, suite_name)
                ours.append(n / seconds)
        print(
            f"round {r}: plain SB3 {plain[-1]:7.1f} steps/s   benchgen ppo {ours[-1]:7.1f} steps/s   "
            f"ratio {ours[-1] / plain[-1]:.3f}",
            flush=True,
        )
    p, o = statistics.median(plain), statistics.median(ours)
    paired = statistics.median(b / a for a, b in zip(plain, ours))
    print(
        f"median: plain SB3 {p:.1f} steps/s, benchgen ppo {o:.1f} steps/s; "
        f"median of the per-round ratios {paired:.3f} (target >= 0.95)"
    )


if __name__ == "__main__":
    main()
