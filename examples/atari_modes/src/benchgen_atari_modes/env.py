"""The environment: ale-py's gymnasium ``AtariEnv`` per flavor, in a gymnasium vector env.

ale-py's native vector env (``AtariVectorEnv``) cannot set a mode or difficulty, so every
sub-environment here is ``gym.make("ALE/<Game>-v5", mode=..., difficulty=...)`` with the
emulator settings of the protocol (sticky actions decided per emulator frame, the full action
set, one emulator frame per ``AtariEnv`` step), then gymnasium's ``AtariPreprocessing`` (action
repeat 4, max over the last 2 frames, grayscale, 84x84, no no-op starts, no life-loss signal) and
``FrameStackObservation`` (4 frames). A ``SyncVectorEnv`` with SAME_STEP autoreset runs them;
:class:`AtariModesVectorEnv` records every finished episode and hides what agents must not see
(the ``lives`` counter and ale-py's frame numbers).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from benchgen.episodes import EpisodeBook
from benchgen.suite import EpisodeEnd, SuiteVectorEnv
from benchgen_atari_modes.catalogue import env_id, parse_task, quiet_ale

#: emulator frames per agent step (action repeat)
FRAMES_PER_STEP = 4
#: probability that the emulator repeats the previous action, decided at every frame (Machado)
STICKY_ACTION_PROBABILITY = 0.25
#: episodes are cut at 30 minutes of play (108,000 frames = 27,000 agent steps, Dopamine's cap)
MAX_EPISODE_FRAMES = 108_000
#: frames stacked in an observation
FRAME_STACK = 4
#: observation side length after resizing
SCREEN_SIZE = 84


def make_flavor_env(task: str, max_episode_frames: int = MAX_EPISODE_FRAMES) -> gym.Env:
    """One preprocessed single env playing ``task`` (``game:mMdD``)."""
    import ale_py

    quiet_ale()
    gym.register_envs(ale_py)
    flavor = parse_task(task)
    env = gym.make(
        env_id(flavor.game),
        mode=flavor.mode,
        difficulty=flavor.difficulty,
        repeat_action_probability=STICKY_ACTION_PROBABILITY,
        full_action_space=True,
        frameskip=1,  # AtariPreprocessing repeats the action; stickiness stays per frame
        max_num_frames_per_episode=max_episode_frames,
    )
    env = gym.wrappers.AtariPreprocessing(
        env,
        noop_max=0,
        frame_skip=FRAMES_PER_STEP,
        screen_size=SCREEN_SIZE,
        terminal_on_life_loss=False,
        grayscale_obs=True,
        scale_obs=False,
    )
    return gym.wrappers.FrameStackObservation(env, FRAME_STACK)


class AtariModesVectorEnv(SuiteVectorEnv):
    """Sub-environment ``i`` plays ``tasks[i]``; see the module docstring.

    ``seed`` seeds the first ``reset()`` if the agent does not pass a seed itself;
    ``reset(seed=s)`` seeds sub-environment ``i`` with ``s + i`` (gymnasium's rule).
    """

    frames_per_step = FRAMES_PER_STEP

    def __init__(self, tasks: Sequence[str], seed: int, max_episode_frames: int = MAX_EPISODE_FRAMES):
        self.tasks = list(tasks)
        self.num_envs = len(self.tasks)
        self._vec = gym.vector.SyncVectorEnv(
            [functools.partial(make_flavor_env, t, max_episode_frames) for t in self.tasks],
            autoreset_mode=gym.vector.AutoresetMode.SAME_STEP,
        )
        self.single_observation_space = self._vec.single_observation_space
        self.single_action_space = self._vec.single_action_space
        self.observation_space = self._vec.observation_space
        self.action_space = self._vec.action_space
        self.metadata = {"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}
        self._first_seed: int | None = seed
        self.episodes = EpisodeBook(self.tasks, FRAMES_PER_STEP)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        if seed is None:
            seed = self._first_seed
        self._first_seed = None
        obs, _info = self._vec.reset(seed=seed, options=options)
        self.episodes.reset()
        return obs, {}

    def step(self, actions):
        obs, rewards, terminated, truncated, info = self._vec.step(np.asarray(actions))
        self.episodes.add(rewards)
        done = terminated | truncated
        out: dict[str, Any] = {}
        if done.any():
            final_obs = obs.copy()
            frames = (info.get("final_info") or {}).get("episode_frame_number")
            for i in np.flatnonzero(done):
                final_obs[i] = info["final_obs"][i]
                length = int(frames[i]) if frames is not None else None  # (None: steps x frames per step)
                self.episodes.end(i, "game_over" if terminated[i] else "max_length", length_frames=length)
            out = {"final_obs": final_obs, "_final_obs": done.copy()}
        return obs, rewards, terminated, truncated, out

    def pop_episode_ends(self) -> list[EpisodeEnd]:
        return self.episodes.pop()

    def close_extras(self, **kwargs: Any) -> None:
        self._vec.close()
