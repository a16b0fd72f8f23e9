"""The gymnasium suite's emulator capability (:mod:`benchgen.capabilities`): ``clone_state``.

Gymnasium environments have no RAM or palette screen to offer, and no common save-state API; what
the pure-Python ones (classic control, toy text) do have is their whole state in the unwrapped
environment's attributes, its random generator included. :class:`GymnasiumEmulators` clones that
state with ``copy.deepcopy`` and restores it by assigning the copy back; a simulated step is the
unwrapped environment's ``step`` (the registry's time limit, a wrapper above it, is not counted).
Environments whose state cannot be deep-copied (Box2D's, MuJoCo's C objects) are refused in one line
when a run that needs the capability is planned (:func:`check_copyable`).
"""

from __future__ import annotations

import copy
import pickle
from typing import Any

import numpy as np

from benchgen.capabilities import Emulators
from benchgen.errors import UsageError

#: what the gymnasium suite offers
GYMNASIUM_CAPABILITIES = frozenset({"clone_state"})


def check_copyable(task: str, env: Any) -> None:
    """One-line ``UsageError`` if ``env``'s state (an unwrapped gymnasium env) cannot be cloned."""
    try:
        copy.deepcopy(env.unwrapped.__dict__)
    except Exception as exc:  # noqa: BLE001 - any failure means: no clone_state for this task
        raise UsageError(
            f"task {task} cannot offer clone_state: its state cannot be copied ({type(exc).__name__}); "
            "choose a classic-control or toy-text task"
        ) from None


class GymnasiumEmulators(Emulators):
    """The unwrapped environments of a :class:`GymnasiumVectorEnv` (module docstring)."""

    capabilities = GYMNASIUM_CAPABILITIES

    def __init__(self, envs: list[Any], frames_per_step: int):
        self._envs = [env.unwrapped for env in envs]
        self.num_envs = len(envs)
        self.frames_per_step = frames_per_step

    def _clone(self, i: int) -> Any:
        return copy.deepcopy(self._envs[i].__dict__)

    def _restore(self, i: int, state: Any) -> None:
        self._envs[i].__dict__.update(copy.deepcopy(state))

    def _simulate(self, i: int, action: int) -> tuple[float, bool]:
        _, reward, terminated, _, _ = self._envs[i].step(action)
        return float(reward), bool(terminated)

    def state_key(self, i: int) -> bytes:
        """The environment's plain values (arrays, numbers, strings, tuples of them): its dynamics'
        state, without its random generators, spaces and registration."""
        plain = (int, float, bool, str, type(None), np.generic)
        state = {}
        for name, value in sorted(self._envs[i].__dict__.items()):
            if isinstance(value, np.ndarray):
                state[name] = (value.dtype.str, value.shape, value.tobytes())
            elif isinstance(value, plain) or (isinstance(value, tuple) and all(isinstance(v, plain) for v in value)):
                state[name] = value
        return pickle.dumps(state)
