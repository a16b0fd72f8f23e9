"""The Sonic suite's emulator capabilities (:mod:`benchgen.capabilities`): ``ram`` and ``clone_state``.

stable-retro allows one emulator per process, so each sub-environment's emulator lives in its
worker process (:mod:`benchgen_sonic.vector`); :class:`SonicEmulators` reaches it through the
vector env's ``emulator_call``, sent to that worker alone (``SonicLevelEnv.emulator_command``).
What each capability reads there:

* ``ram``: ``RetroEnv.get_ram()``, the Genesis 68000 work RAM (64 KiB);
* ``clone_state``: ``em.get_state()`` / ``em.set_state()``, the emulator core's save state, with
  what the suite keeps beside the emulator: the contest reward's per-episode values, the buttons
  of the last timestep (sticky frame skip), the counters and the sticky-action generator, so a
  sandbox leaves the real episode, its randomness included, as it was. A save state is about 1 MB;
  it travels and is kept zlib-compressed (about 11 KB on Airstriker; the worker keeps the last one
  uncompressed, since planners restore one state many times in a row). A simulated timestep is
  the suite's own (``SonicLevelEnv.simulate_step``: sticky frame skip, the contest reward, ends at
  completion, a lost life or a special stage, the time limit not counted), without rendering and
  never recorded. ``state_key`` is a 128-bit digest of the work RAM with the reward's values and
  the buttons held: the save state itself holds sound buffers that differ between two emulations
  of the same frames, so it cannot tell equal game states apart.

Actions: an agent acts in the suite's agent wrappers' action set (the paper's button
combinations, ``benchgen_sonic.wrappers.ButtonCombos``), and :meth:`SonicEmulators.simulate`
takes the action as the agent gives it: the combinations wrapper hands agents
``for_actions(its table)``, a view of these emulators that turns a combination into its buttons.

Not offered: ``palette_screen``. The Genesis VDP draws from a 64-entry colour RAM (four 16-colour
lines), but stable-retro's core hands out only the RGB frame it composes, with shadow/highlight
modes that yield colours outside the colour RAM; neither the per-pixel colour indices nor the
colour RAM are exposed. ``frame_actions`` neither: a timestep's frames take one button set
(with the protocol's sticky first frame), as the paper's agents played.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from benchgen.capabilities import Emulators

#: what the Sonic suite offers
SONIC_CAPABILITIES = frozenset({"ram", "clone_state"})


class SonicEmulators(Emulators):
    """The emulators of a :class:`~benchgen_sonic.vector.SonicVectorEnv`'s workers (module
    docstring); ``action_masks[a]`` is the button mask of action ``a`` (None: actions are masks)."""

    capabilities = SONIC_CAPABILITIES

    def __init__(self, env: Any, action_masks: np.ndarray | None = None):
        self._env = env
        self.num_envs = env.num_envs
        self.frames_per_step = env.frames_per_step
        self._masks = None if action_masks is None else np.asarray(action_masks, dtype=np.int64)

    def for_actions(self, action_masks: np.ndarray) -> SonicEmulators:
        """These emulators, simulating action ``a`` as button mask ``action_masks[a]``."""
        return SonicEmulators(self._env, action_masks)

    def _call(self, i: int, name: str, *args: Any) -> Any:
        return self._env.emulator_call(i, name, *args)

    def ram(self, i: int) -> np.ndarray:
        return self._call(i, "emulator_ram")

    def state_key(self, i: int) -> bytes:
        return self._call(i, "emulator_state_key")

    def _clone(self, i: int) -> Any:
        return self._call(i, "clone_emulator")

    def _restore(self, i: int, state: Any) -> None:
        self._call(i, "restore_emulator", state)

    def _simulate(self, i: int, action: int) -> tuple[float, bool]:
        mask = action if self._masks is None else int(self._masks[action])
        return self._call(i, "simulate_step", mask)
