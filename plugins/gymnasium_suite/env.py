"""The suite env: gymnasium's own ``SyncVectorEnv`` over ``gymnasium.make(id)``, with episodes recorded.

Each sub-environment is ``gymnasium.make(task)`` exactly as the registry builds it (the spec's
kwargs, its ``TimeLimit`` at ``max_episode_steps``, gymnasium's order enforcing and passive
checker), its observations encoded for benchgen's ``uint8`` contract
(:class:`EncodedObservations`, see :mod:`benchgen_gymnasium.observations`). They run in one
``SyncVectorEnv`` in ``SAME_STEP`` autoreset mode: when an episode ends, the step returns the
next episode's first observation and ``info["final_obs"]`` the finished one's last.

:class:`GymnasiumVectorEnv` adds what benchgen records: one :class:`~benchgen.suite.EpisodeEnd`
per finished episode with the raw return (the undiscounted sum of the env's rewards), the length
in steps (one step is one frame here) and why it ended, ``terminated`` (the env's own end) or
``truncated`` (its time limit, or a truncation of the env's own); an episode both terminated and
truncated at once counts as terminated.

Seeding: ``reset(seed=s)`` resets sub-environment ``i`` with the seed drawn from
``SeedSequence([s, i])``, so units with neighbouring seeds play different episodes; the seed given
to the constructor seeds the first ``reset()`` when the caller passes none. Later episodes
continue each environment's own generator (gymnasium's rule for an unseeded ``reset``).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from benchgen.episodes import EpisodeBook
from benchgen.suite import EpisodeEnd, SuiteVectorEnv

from .observations import ObservationCodec

#: one agent step is one environment step: there is no frame skip
FRAMES_PER_STEP = 1
#: the end reasons recorded
TERMINATED, TRUNCATED = "terminated", "truncated"


def sub_seed(seed: int, index: int) -> int:
    """The ``reset`` seed of sub-environment ``index`` when the vector env is reset with ``seed``."""
    return int(np.random.SeedSequence([int(seed) % 2**63, int(index)]).generate_state(1)[0])


class EncodedObservations(gym.ObservationWrapper):
    """A single environment whose observations are encoded by ``codec`` (``uint8``)."""

    def __init__(self, env: gym.Env, codec: ObservationCodec):
        super().__init__(env)
        self.codec = codec
        self.observation_space = codec.suite_space

    def observation(self, observation: Any) -> np.ndarray:
        return self.codec.encode(observation)


def make_single(task: str, codec: ObservationCodec) -> gym.Env:
    """``gymnasium.make(task)`` with encoded observations: one sub-environment."""
    return EncodedObservations(gym.make(task), codec)


class GymnasiumVectorEnv(SuiteVectorEnv):
    """Sub-environment ``i`` plays ``tasks[i]``; see the module docstring. Every task must have the
    same encoded observation space and action space (the suite checks it before building one)."""

    frames_per_step = FRAMES_PER_STEP

    def __init__(self, tasks: Sequence[str], seed: int, codec: ObservationCodec):
        self.tasks = list(tasks)
        self.num_envs = len(self.tasks)
        #: how observations are encoded here and decoded for agents
        self.codec = codec
        self._envs = gym.vector.SyncVectorEnv(
            [functools.partial(make_single, task, codec) for task in self.tasks],
            copy=True,
            autoreset_mode=gym.vector.AutoresetMode.SAME_STEP,
        )
        self.single_observation_space = self._envs.single_observation_space
        self.single_action_space = self._envs.single_action_space
        self.observation_space = self._envs.observation_space
        self.action_space = self._envs.action_space
        self.metadata = {"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}
        self._first_seed: int | None = seed
        self.episodes = EpisodeBook(self.tasks, FRAMES_PER_STEP)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        if seed is None:
            seed = self._first_seed
        self._first_seed = None
        seeds = None if seed is None else [sub_seed(seed, i) for i in range(self.num_envs)]
        obs, info = self._envs.reset(seed=seeds, options=options)
        self.episodes.reset()  # a reset abandons the running episodes: they never finished
        return obs, info

    def step(self, actions):
        obs, rewards, terminated, truncated, info = self._envs.step(actions)
        self.episodes.add(rewards)
        done = np.flatnonzero(terminated | truncated)
        if done.size:
            # one array, as the other suites give it (SyncVectorEnv's is an object array with None
            # for the sub-environments still playing; those rows hold their current observation)
            final = obs.copy()
            for i in done:
                final[i] = info["final_obs"][i]
            info = {**info, "final_obs": final}
        for i in done:
            self.episodes.end(i, TERMINATED if terminated[i] else TRUNCATED)
        return obs, rewards, terminated, truncated, info

    def pop_episode_ends(self) -> list[EpisodeEnd]:
        return self.episodes.pop()

    def emulators(self):
        """``clone_state`` on the unwrapped environments (:mod:`benchgen_gymnasium.emulators`)."""
        from .emulators import GymnasiumEmulators

        if getattr(self, "_emulators", None) is None:
            self._emulators = GymnasiumEmulators(list(self._envs.envs), FRAMES_PER_STEP)
        return self._emulators

    def close_extras(self, **kwargs: Any) -> None:
        self._envs.close()
