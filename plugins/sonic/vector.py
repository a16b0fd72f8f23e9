"""The Sonic suite's vector env: one worker process (one emulator) per sub-environment.

stable-retro allows one emulator per process, so every sub-environment runs a
:class:`~benchgen_sonic.env.SonicLevelEnv` in its own process, through gymnasium's
``AsyncVectorEnv`` (observations in shared memory, autoreset ``SAME_STEP``), each worker pinned
to a CPU of its own when there are enough (:mod:`benchgen.cpu_affinity`). Workers start with
the ``forkserver`` method where the platform has it (``spawn`` elsewhere), never ``fork``: the
parent may hold threads (torch) or an emulator of its own.

On top of ``AsyncVectorEnv`` this class implements the benchgen contract: a ``Discrete``
action space (the 12 buttons as the bits of one integer, 4096 actions; agents get the paper's
button combinations through the suite's agent wrappers), and the episode facts the workers
report turned into :class:`benchgen.suite.EpisodeEnd` records (``pop_episode_ends``) and removed
from ``info``, so agents see only observations, rewards and episode ends.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.error import AlreadyPendingCallError
from gymnasium.vector import AsyncVectorEnv, AutoresetMode
from gymnasium.vector.async_vector_env import AsyncState

from benchgen.cpu_affinity import pin_workers as _pin
from benchgen.suite import EpisodeEnd, SuiteVectorEnv
from benchgen_sonic.emulators import SonicEmulators
from benchgen_sonic.env import (
    BUTTON_MASKS,
    BUTTONS,
    EPISODE_INFO_KEY,
    SCREEN_SHAPE,
    SonicLevelEnv,
    mask_to_buttons,
)
from benchgen_sonic.levels import Level
from benchgen_sonic.protocol import SonicProtocol

#: per-episode values recorded besides the score (``EpisodeEnd.extras``)
EPISODE_FIELDS: tuple[str, ...] = ("x_progress", "max_x_progress", "timesteps")


class _SpacesOnlyEnv(gym.Env):
    """A :class:`SonicLevelEnv`'s spaces and metadata, without an emulator.

    ``AsyncVectorEnv`` calls its first env factory once in the parent process to read the spaces.
    stable-retro allows one emulator per process and the parent may own one already (or want
    to, later), so in the parent the factory returns this stand-in instead."""

    metadata = SonicLevelEnv.metadata
    observation_space = gym.spaces.Box(0, 255, SCREEN_SHAPE, np.uint8)
    action_space = gym.spaces.MultiBinary(len(BUTTONS))


class _WorkersEnv(AsyncVectorEnv):
    """``AsyncVectorEnv`` that can also call a method in one worker only.

    Its own ``call`` asks every worker and waits for all of them. A planner's clone, restore and
    simulated step concern one emulator: sent to all, each restore pickled a 1 MB save state per
    worker and every call woke every worker process, so the round trip cost the slowest worker's
    wake-up (on a busy 2-core machine, a few milliseconds each, thousands of times an episode).
    gymnasium has no per-worker call, so this one speaks ``AsyncVectorEnv``'s worker protocol
    (the ``"_call"`` command, the pipes, the error queue) for one pipe."""

    def call_in(self, index: int, name: str, *args: Any) -> Any:
        """``name(*args)`` in sub-environment ``index``'s worker; its error is raised here."""
        self._assert_is_running()
        if self._state != AsyncState.DEFAULT:
            raise AlreadyPendingCallError(
                f"Calling `{name}` in worker {index} while waiting for a pending call to "
                f"`{self._state.value}` to complete.",
                str(self._state.value),
            )
        pipe = self.parent_pipes[index]
        pipe.send(("_call", (name, args, {})))
        result, success = pipe.recv()
        if not success:  # the worker put its error on the queue: raised as call() would
            self._raise_if_errors([i != index for i in range(self.num_envs)])
        return result


class _LevelEnvFactory:
    """Builds a level's :class:`SonicLevelEnv` in a worker process (a picklable callable)."""

    def __init__(self, level: Level, protocol: SonicProtocol):
        self.level, self.protocol = level, protocol
        self.parent_pid = os.getpid()

    def __call__(self) -> gym.Env:
        if os.getpid() == self.parent_pid:
            return _SpacesOnlyEnv()
        return SonicLevelEnv(self.level, self.protocol)


def default_start_method() -> str:
    """``forkserver`` where available (Linux, macOS), else ``spawn``."""
    return "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"


class SonicVectorEnv(SuiteVectorEnv):
    """``len(levels)`` Sonic levels in parallel, sub-environment ``i`` playing ``levels[i]``."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(
        self,
        levels: Sequence[Level],
        seed: int | None = None,
        protocol: SonicProtocol = SonicProtocol(),
        context: str | None = None,
        pin_workers: bool = True,
        copy_observations: bool = True,
    ):
        """``seed`` is used by the first ``reset`` that passes none; ``context`` is the
        multiprocessing start method (default :func:`default_start_method`); ``pin_workers``
        gives each worker a CPU of its own where that is safe (:mod:`benchgen.cpu_affinity`);
        ``copy_observations=False`` returns the workers' shared-memory screens themselves, valid
        until the next ``step`` or ``reset`` (the suite does this: its agent wrappers turn them into
        84x84 frames at once, and a copy of two 215 KB screens written by other cores cost about
        6% of the 2-worker throughput)."""
        if not levels:
            raise ValueError("SonicVectorEnv needs at least one level")
        self.levels = tuple(levels)
        self.tasks = tuple(level.task for level in self.levels)
        self.protocol = protocol
        self.frames_per_step = protocol.frame_skip
        self._default_seed = seed
        self._seeded = False
        self._ends: list[EpisodeEnd] = []
        self._vec = _WorkersEnv(
            [_LevelEnvFactory(level, protocol) for level in self.levels],
            shared_memory=True,
            copy=copy_observations,
            context=context or default_start_method(),
            autoreset_mode=AutoresetMode.SAME_STEP,
        )
        self.num_envs = self._vec.num_envs
        #: the CPU each worker is pinned to, or None (see :func:`benchgen.cpu_affinity.pin_workers`)
        self.pinned_cpus = _pin(self.worker_pids) if pin_workers else None
        self.single_observation_space = self._vec.single_observation_space
        self.observation_space = self._vec.observation_space
        self.single_action_space = gym.spaces.Discrete(BUTTON_MASKS)
        self.action_space = gym.spaces.MultiDiscrete([BUTTON_MASKS] * self.num_envs)

    @property
    def worker_pids(self) -> list[int]:
        """Process ids of the emulator workers (for memory measurements)."""
        return [p.pid for p in self._vec.processes]

    def emulator_call(self, index: int, name: str, *args: Any) -> Any:
        """Emulator command ``name(*args)`` (:mod:`benchgen_sonic.emulators`) in sub-environment
        ``index``'s worker, and only there."""
        return self._vec.call_in(index, "emulator_command", name, *args)

    def reset(self, *, seed: int | Sequence[int] | None = None, options: dict[str, Any] | None = None):
        """Reset every sub-environment; sub-environment ``i`` is seeded with ``seed + i``.

        Without a seed, the first reset uses the seed given to the constructor (``make_env``'s),
        so a run is reproducible whether or not the agent seeds its resets.
        """
        if seed is None and not self._seeded:
            seed = self._default_seed
        self._seeded = True
        obs, infos = self._vec.reset(seed=seed, options=options)
        self._ends.clear()
        self.screens = obs  # the full screens, for videos (``SonicSuite.screens``)
        return obs, infos

    def step(self, actions):
        """Step every sub-environment; ``actions`` holds one button mask (0..4095) each."""
        obs, rewards, terminated, truncated, infos = self._vec.step(mask_to_buttons(actions))
        self.screens = obs
        final = infos.get("final_info")
        if final is not None and EPISODE_INFO_KEY in final:
            # gymnasium batches the workers' fact dicts into one dict of arrays plus a mask
            facts, has = final.pop(EPISODE_INFO_KEY), final.pop("_" + EPISODE_INFO_KEY)
            for i in np.flatnonzero(has):
                self._ends.append(self._episode_end(int(i), facts))
        return obs, rewards, terminated, truncated, infos

    def _episode_end(self, index: int, facts: dict[str, np.ndarray]) -> EpisodeEnd:
        return EpisodeEnd(
            env_index=index,
            task=self.tasks[index],
            score=float(facts["score"][index]),
            length_frames=int(facts["length_frames"][index]),
            end_reason=str(facts["end_reason"][index]),
            extras={name: facts[name][index].item() for name in EPISODE_FIELDS},
        )

    def pop_episode_ends(self) -> list[EpisodeEnd]:
        """The episodes that finished since the last call, in sub-environment order per step."""
        ends, self._ends = self._ends, []
        return ends

    def emulators(self) -> SonicEmulators:
        """The ``ram`` and ``clone_state`` capabilities, actions being button masks
        (:class:`~benchgen_sonic.emulators.SonicEmulators`)."""
        if getattr(self, "_emulators", None) is None:
            self._emulators = SonicEmulators(self)
        return self._emulators

    def close_extras(self, **kwargs):
        """Stop the worker processes."""
        self._vec.close(**kwargs)
