"""The Atari suite's emulator capabilities (:mod:`benchgen.capabilities`), from ale-py's ``ALEInterface``.

ale-py's native vector env (C++) exposes neither RAM, the palette screen nor its emulator states.
For an agent that declares any of them the suite builds its env on
:class:`~benchgen_atari_saber.flavor_backend.FlavorVectorEnv` (one ``ALEInterface`` per
sub-environment, the same protocol frame for frame; a plain game plays its default mode and
difficulty, as the native env does), and :class:`AleEmulators` reads those interfaces:

* ``ram``: ``ALEInterface.getRAM()``, the console's 128 bytes (Bellemare et al. 2013, section 2.1);
* ``palette_screen``: ``ALEInterface.getScreen()``, 210x160, halved: ALE stores an NTSC colour as
  an even byte, the paper's "7-bit pixels" (section 2.2) are that byte >> 1, 0..127;
* ``clone_state``: ``cloneState(include_rng=True)`` / ``restoreState`` (section 2.2's save and
  restore-state commands); the sandbox saves the real state with the emulator's random generator,
  so planning under sticky actions leaves the real episode's randomness as it was. A restored
  emulator does not redraw its screen, so the real screen is kept at the sandbox's entry and
  :meth:`AleEmulators.palette_screen` returns it until the next real step;
* ``frame_actions``: ``SaberVectorEnv.step`` takes ``(num_envs, frameskip)`` actions, played one
  per emulator frame (the backend's ``send`` accepts them; stickiness still applies per frame).

Simulated steps play ``frameskip`` frames of one action through ``ALEInterface.act`` (each frame
subject to the protocol's sticky actions, as the real ones), summing rewards and stopping at game
over; they ignore the episode cap and nothing of them is recorded.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from benchgen.capabilities import Emulators

#: what the Atari suite offers
ATARI_CAPABILITIES = frozenset({"ram", "palette_screen", "clone_state", "frame_actions"})


class AleEmulators(Emulators):
    """The ``ALEInterface`` of each sub-environment of a :class:`SaberVectorEnv` built on
    ``FlavorVectorEnv`` backends (see the module docstring)."""

    capabilities = ATARI_CAPABILITIES

    def __init__(self, env: Any):
        self.num_envs = env.num_envs
        self.frames_per_step = env.frames_per_step
        slots: list[Any] = [None] * env.num_envs
        for group in env._groups:
            for k, i in enumerate(group.index):
                slots[int(i)] = (group.backend._envs[k], group.action_map)
        self._slots = slots
        #: sub-env -> ((frame number, episode frame number), screen) kept at a sandbox's entry
        self._kept: dict[int, tuple[tuple[int, int], np.ndarray]] = {}

    def _ale(self, i: int):
        return self._slots[i][0].ale

    def ram(self, i: int) -> np.ndarray:
        return np.array(self._ale(i).getRAM(), dtype=np.uint8)

    def palette_screen(self, i: int) -> np.ndarray:
        ale = self._ale(i)
        kept = self._kept.get(i)
        if kept is not None and i not in getattr(self, "_sandboxed", ()):
            if kept[0] == (ale.getFrameNumber(), ale.getEpisodeFrameNumber()):
                return kept[1].copy()  # the real screen, under a restored (not redrawn) emulator
            del self._kept[i]
        return np.right_shift(ale.getScreen(), 1)

    def sandbox(self, i: int):
        ale = self._ale(i)
        if i not in getattr(self, "_sandboxed", ()):
            self._kept[i] = ((ale.getFrameNumber(), ale.getEpisodeFrameNumber()), self.palette_screen(i))
        return super().sandbox(i)

    def state_key(self, i: int) -> bytes:
        # without the random generator: in the deterministic ALE two states are equal when their
        # machines are (Bellemare et al. 2013, section 3.2: "compare the resulting emulator states")
        return bytes(self._ale(i).cloneState().serialize())

    def _clone(self, i: int) -> Any:
        return self._ale(i).cloneState(include_rng=True)

    def _restore(self, i: int, state: Any) -> None:
        self._ale(i).restoreState(state)

    def _simulate(self, i: int, action: int) -> tuple[float, bool]:
        emulator, action_map = self._slots[i]
        ale = emulator.ale
        act = emulator.action_set[int(action_map[action])]
        reward = 0
        for _ in range(self.frames_per_step):
            reward += ale.act(act)
            if ale.game_over():
                return float(reward), True
        return float(reward), False
