"""A stable-baselines3 ``VecEnv`` over one benchgen (gymnasium) vector env.

benchgen hands agents one batched ``gymnasium.vector.VectorEnv`` (autoreset mode ``SAME_STEP``:
when a sub-environment's episode ends, the returned observation is already the next episode's
first and ``info["final_obs"]`` holds the last one). SB3 expects its own ``VecEnv`` interface:
``reset()`` returning observations only, ``step_async``/``step_wait``, ``dones`` instead of
``terminated``/``truncated``, and one info dict per sub-environment carrying
``terminal_observation`` and ``TimeLimit.truncated`` for finished episodes (SB3 bootstraps the
value of a truncated episode's last observation, as Pardo et al. 2018 recommend).

:class:`BenchgenVecEnv` translates one to the other around the single batched env: no extra
processes, no per-sub-environment Python env objects. It is used both by the ``ppo`` agent and by
``benchmarks/bench_ppo_overhead.py`` as plain SB3's reference environment.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from stable_baselines3.common.preprocessing import is_image_space, is_image_space_channels_first
from stable_baselines3.common.vec_env import VecEnv, VecTransposeImage


def channels_last(space: gym.Space) -> bool:
    """Whether SB3's ``PPO`` transposes these observations for its CNN (channel-last images: it
    wraps its env in ``VecTransposeImage``, ``BaseAlgorithm._wrap_env``)."""
    return is_image_space(space) and not is_image_space_channels_first(space)


def as_sb3_wraps(vec: VecEnv) -> VecEnv:
    """``vec`` as SB3's ``PPO`` wraps it: channel-last images transposed (:func:`channels_last`)."""
    return VecTransposeImage(vec) if channels_last(vec.observation_space) else vec


class BenchgenVecEnv(VecEnv):
    """SB3 view of a gymnasium ``SAME_STEP`` vector env.

    ``clip_reward`` replaces each reward by its sign for learning (RL Zoo's Atari preprocessing),
    then ``reward_scale`` multiplies it (PPO's Sonic setting, 0.005); the env below (benchgen's
    episode recorder) still sees and records the raw score.

    Seeding: the runner seeds the suite env (``make_env(tasks, seed)``, a fresh seed per resume),
    so ``reset()`` passes a seed only if one was set explicitly with :meth:`seed`. (``PPO(seed=s)``
    would call :meth:`seed` with the same ``s`` on every resume and replay identical episodes;
    the agent seeds torch and numpy itself and builds its model with ``seed=None``.)
    """

    def __init__(self, env: gym.vector.VectorEnv, clip_reward: bool = False, reward_scale: float = 1.0):
        mode = getattr(env, "metadata", {}).get("autoreset_mode")
        if mode is not None and mode != gym.vector.AutoresetMode.SAME_STEP:
            raise ValueError(f"BenchgenVecEnv needs a SAME_STEP autoreset vector env, got {mode}")
        self.env = env
        self.clip_reward = clip_reward
        self.reward_scale = reward_scale
        self._actions: np.ndarray | None = None
        super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)

    # -- the SB3 VecEnv protocol -------------------------------------------------------------
    def reset(self) -> np.ndarray:
        seed = self._seeds[0]
        obs, _info = self.env.reset(seed=seed)
        self._reset_seeds()
        self._reset_options()
        return np.array(obs, copy=True)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self):
        obs, rewards, terminated, truncated, info = self.env.step(self._actions)
        terminated = np.asarray(terminated, dtype=bool)
        truncated = np.asarray(truncated, dtype=bool)
        dones = terminated | truncated
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if dones.any():
            final = info.get("final_obs")
            if final is None:
                raise RuntimeError("an episode ended without info['final_obs']: the env is not SAME_STEP autoreset")
            for i in np.flatnonzero(dones):
                # SB3 bootstraps V(terminal_observation) only for time-limit truncation.
                infos[i]["terminal_observation"] = np.array(final[i], copy=True)
                infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
        rewards = np.asarray(rewards, dtype=np.float64)
        if self.clip_reward:
            rewards = np.sign(rewards)
        rewards = (rewards * self.reward_scale).astype(np.float32)
        # SB3 keeps the previous observation until after the next step: never hand it a buffer
        # the env may overwrite in place.
        return np.array(obs, copy=True), rewards, dones, infos

    def close(self) -> None:
        self.env.close()

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Seed the next ``reset`` (all sub-environments: the suite derives one seed each)."""
        self._seeds = [None if seed is None else seed + i for i in range(self.num_envs)]
        return self._seeds

    # Attributes live on the one batched env, shared by every sub-environment.
    def get_attr(self, attr_name: str, indices=None) -> list[Any]:
        value = getattr(self.env, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        setattr(self.env, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list[Any]:
        result = getattr(self.env, method_name)(*method_args, **method_kwargs)
        return [result for _ in self._get_indices(indices)]

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]
