"""Emulator capabilities: what an agent may read from, or do with, the emulator under a suite env.

Most agents see observations and rewards only. A few published agents need more from the
emulator: the ALE paper's RAM features read the console's 128 bytes, its Basic/BASS/DISCO/LSH
features read the palette-indexed screen, its planners (breadth-first search and UCT, Bellemare
et al. 2013, section 3.2) use the emulator as a model by saving and restoring its state, and its
Random baseline picks an action at every frame. Each is a *capability*, named in
:data:`CAPABILITIES`. Agents and suites never name each other; instead:

* an agent declares the capabilities it needs, ``AgentNeeds(capabilities=("ram",))``;
* a suite declares those it offers, ``Suite.capabilities()``, and gives them through
  ``Suite.with_capabilities(names)`` (a suite whose envs offer them, e.g. on a slower emulator
  backend that exposes its state) and ``SuiteVectorEnv.emulators()`` (an :class:`Emulators`);
  third-party suites implement the same two methods;
* a run whose agent needs a capability its suite does not offer is refused in one line when it is
  planned (:func:`check_capabilities`, called by ``AgentSpec.check``), before anything is written.

How an agent reads them. The runner hands the agent the :class:`Emulators` of every env it is
about to use, through ``Agent.use_emulators`` (training env before ``learn``, each evaluation
round's env before the round), so ``self.emulators`` is always the current env's. For
sub-environment ``i`` (the ``i``-th row of the observations and actions):

* ``"ram"``: ``self.emulators.ram(i)``, the console RAM as ``uint8`` bytes (Atari: 128);
* ``"palette_screen"``: ``self.emulators.palette_screen(i)``, the screen as palette indices,
  ``uint8`` ``(height, width)`` (Atari: 210x160, NTSC colours 0..127, ALE's byte value >> 1);
* ``"clone_state"``: planning happens inside ``with self.emulators.sandbox(i):``; there,
  ``clone_state(i)`` returns an opaque state, ``restore_state(i, state)`` goes back to one, and
  ``simulate(i, action)`` emulates one agent step (``frames_per_step`` frames, ``action`` as the
  agent gives it to ``env.step``) and returns ``(reward, game_over)``; leaving the block puts the
  emulator back where the real episode is, so planning never changes what the suite records.
  ``state_key(i)`` is bytes that
  are equal exactly when two emulator states are (the ALE planners' duplicate-action test);
* ``"frame_actions"``: ``env.step`` accepts actions of shape ``(num_envs, frames_per_step)``,
  one action per emulator frame of the step (the ALE paper's Random acts at every frame).

All reads are of the emulator as it is after the last ``reset``/``step`` (or, in a sandbox, the
last ``simulate``/``restore_state``). The recorded episodes, their scores and frame counts are
the suite's, as for every agent.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from benchgen.errors import UsageError

#: capability -> what it gives (``AgentNeeds.capabilities``, ``Suite.capabilities()``)
CAPABILITIES: dict[str, str] = {
    "ram": "the console RAM, uint8 bytes (Emulators.ram)",
    "palette_screen": "the screen as palette indices, uint8 (height, width) (Emulators.palette_screen)",
    "clone_state": "save, restore and simulate the emulator in a sandbox (Emulators.sandbox, clone_state, "
    "restore_state, simulate, state_key)",
    "frame_actions": "env.step takes one action per emulator frame: actions of shape (num_envs, frames_per_step)",
}


def check_names(names: Iterable[str], who: str) -> tuple[str, ...]:
    """``names`` as a tuple, each a known capability (``ValueError`` otherwise: a plugin author's
    mistake, raised when the agent or suite is defined)."""
    names = tuple(names)
    unknown = [n for n in names if n not in CAPABILITIES]
    if unknown:
        raise ValueError(f"{who}: unknown capabilities {unknown}; known: {sorted(CAPABILITIES)}")
    return names


def check_capabilities(agent: str, needed: Iterable[str], suite: Any) -> None:
    """One-line ``UsageError`` if ``suite`` (a :class:`benchgen.suite.Suite`) does not offer every
    capability ``agent`` needs."""
    needed = tuple(needed)
    if not needed:
        return
    offered = frozenset(suite.capabilities())
    missing = [c for c in needed if c not in offered]
    if missing:
        has = f"it offers {', '.join(sorted(offered))}" if offered else "it offers none"
        raise UsageError(
            f"agent '{agent}' needs {', '.join(missing)} from the emulator, which suite '{suite.name}' does not "
            f"offer ({has}); choose a suite that offers {', '.join(missing)} (`benchgen list` shows them)"
        )


class Emulators:
    """The emulators under a suite env, one per sub-environment (see the module docstring).

    A suite implements the methods of the capabilities it offers; the others raise
    ``NotImplementedError``. Implementations must make :meth:`sandbox` restore the real state
    (emulator RNG included, so planning does not change the real episode's randomness)."""

    #: the capabilities this object gives
    capabilities: frozenset[str] = frozenset()
    #: sub-environments (rows of the env's observations)
    num_envs: int = 1
    #: emulator frames per agent step (what :meth:`simulate` emulates)
    frames_per_step: int = 1

    def ram(self, i: int) -> np.ndarray:
        """``"ram"``: sub-environment ``i``'s RAM, ``uint8`` bytes (a fresh array)."""
        raise NotImplementedError("this suite offers no RAM")

    def palette_screen(self, i: int) -> np.ndarray:
        """``"palette_screen"``: sub-environment ``i``'s screen as palette indices, ``uint8``
        ``(height, width)`` (a fresh array)."""
        raise NotImplementedError("this suite offers no palette screen")

    # -- "clone_state" ---------------------------------------------------------------------
    @contextlib.contextmanager
    def sandbox(self, i: int) -> Iterator[None]:
        """Plan on sub-environment ``i``: the state is cloned on entry and restored on exit."""
        real = self._clone(i)
        self._sandboxed = getattr(self, "_sandboxed", set()) | {i}
        try:
            yield
        finally:
            self._sandboxed.discard(i)
            self._restore(i, real)

    def clone_state(self, i: int) -> Any:
        """The current state of sub-environment ``i``'s emulator (opaque; inside :meth:`sandbox`)."""
        self._check_sandbox(i)
        return self._clone(i)

    def restore_state(self, i: int, state: Any) -> None:
        """Put sub-environment ``i``'s emulator back in ``state`` (inside :meth:`sandbox`)."""
        self._check_sandbox(i)
        self._restore(i, state)

    def simulate(self, i: int, action: int) -> tuple[float, bool]:
        """Emulate one agent step of ``action`` on sub-environment ``i`` (inside :meth:`sandbox`):
        ``(summed reward, game over)``; nothing is recorded."""
        self._check_sandbox(i)
        return self._simulate(i, int(action))

    def state_key(self, i: int) -> bytes:
        """Bytes equal for two equal emulator states of sub-environment ``i`` (frame counters
        excluded where the suite can), for duplicate-action pruning."""
        raise NotImplementedError("this suite offers no emulator state")

    def _check_sandbox(self, i: int) -> None:
        if i not in getattr(self, "_sandboxed", ()):
            raise RuntimeError(
                f"clone_state/restore_state/simulate on sub-environment {i} outside `with emulators.sandbox({i})`: "
                "planning must not change the real episode"
            )

    def _clone(self, i: int) -> Any:
        raise NotImplementedError("this suite offers no emulator state")

    def _restore(self, i: int, state: Any) -> None:
        raise NotImplementedError("this suite offers no emulator state")

    def _simulate(self, i: int, action: int) -> tuple[float, bool]:
        raise NotImplementedError("this suite offers no emulator state")


def emulators_of(env: Any) -> Emulators | None:
    """The :class:`Emulators` under ``env`` (an agent-side env: the suite env under the recorder
    and the suite's agent wrappers), from the first layer down that has an ``emulators()``
    method; None if none does."""
    seen = 0
    while env is not None and seen < 64:
        if callable(getattr(type(env), "emulators", None)):  # the class's, not a wrapper's forwarding
            return env.emulators()
        env, seen = getattr(env, "env", None), seen + 1
    return None
