"""One Sonic level on one emulator: sticky frame skip, the contest reward, the three episode ends.

stable-retro allows one emulator per process, so :class:`SonicLevelEnv` is what each worker
process of :class:`benchgen_sonic.vector.SonicVectorEnv` runs. It drives the stable-retro
emulator core frame by frame (``RetroEnv`` itself steps one frame per call and renders every
frame; we render only the frame the agent sees):

* one timestep = ``frame_skip`` (4) frames with the same buttons held (Nichol et al. 2018);
* sticky frame skip: with probability 0.25 the new buttons are delayed by one frame, i.e. the
  previous timestep's buttons are applied on the first frame; never on the first step after a
  reset (the OpenAI baselines ``StochasticFrameSkip`` wrapper the paper used);
* the reward and end rules of :class:`benchgen_sonic.progress.ProgressTracker`, every frame;
  the episode ends on the frame that completes the level, loses a life or (Sonic 2, 3&K)
  enters a special stage, or after ``max_timesteps`` (4,500) timesteps.

The agent sees the 224x320 RGB screen and the reward. ``info`` is empty except on the last
step of an episode, which carries the episode's facts under :data:`EPISODE_INFO_KEY`; the
vector env removes that key before an agent sees it. RAM values never appear in ``info``.

For agents that declare emulator capabilities the worker also answers ``emulator_command`` calls
(the RAM, save and restore of the whole state, simulated timesteps; :mod:`benchgen_sonic.emulators`).
"""

from __future__ import annotations

import gc
import hashlib
import pickle
import zlib
from typing import Any

import gymnasium as gym
import numpy as np

from benchgen_sonic.levels import Level
from benchgen_sonic.progress import (
    COMPLETED,
    LIFE_LOST,
    SPECIAL_STAGE,
    TIME_LIMIT,
    ProgressTracker,
    check_start_level,
)
from benchgen_sonic.protocol import SonicProtocol

#: key of the episode facts in the ``info`` of an episode's last step (private to the suite)
EPISODE_INFO_KEY = "_sonic_episode"

#: what the vector env may call in a worker (``emulator_command``)
_EMULATOR_COMMANDS = frozenset(
    {"emulator_ram", "clone_emulator", "restore_emulator", "simulate_step", "emulator_state_key"}
)

#: the Genesis pad, in stable-retro's button order (the 12-button binary action of the paper)
BUTTONS: tuple[str, ...] = ("B", "A", "MODE", "START", "UP", "DOWN", "LEFT", "RIGHT", "C", "Y", "X", "Z")

#: the Genesis screen, the observation
SCREEN_SHAPE: tuple[int, int, int] = (224, 320, 3)

#: the suite-level action space: the 12 buttons as the bits of one integer (bit i = BUTTONS[i]),
#: i.e. the paper's binary button vector in the ``Discrete`` form benchgen's contract asks for
BUTTON_MASKS = 2 ** len(BUTTONS)


def button_mask(*names: str) -> int:
    """The suite-level action pressing ``names``, e.g. ``button_mask("RIGHT", "B") == 129``."""
    return sum(1 << BUTTONS.index(name) for name in names)


#: row ``m`` = the 12-button binary vector of suite-level action ``m`` (a 48 KiB lookup table:
#: indexing it costs the vector env's main process a few microseconds per step, the bit
#: arithmetic about 20)
_BUTTON_TABLE = ((np.arange(BUTTON_MASKS)[:, None] >> np.arange(len(BUTTONS))) & 1).astype(np.int8)


def mask_to_buttons(masks) -> np.ndarray:
    """Suite-level actions (integers) -> 12-button binary vectors, one row per action."""
    masks = np.asarray(masks)
    if not np.issubdtype(masks.dtype, np.integer) or masks.size and (masks.min() < 0 or masks.max() >= BUTTON_MASKS):
        raise ValueError(f"button masks must be integers in [0, {BUTTON_MASKS}), got {masks!r}")
    return _BUTTON_TABLE[masks]


class SonicLevelEnv(gym.Env):
    """A single-emulator gymnasium env playing one level under the suite's protocol."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 15}

    def __init__(self, level: Level, protocol: SonicProtocol = SonicProtocol(), render_mode: str | None = None):
        import stable_retro

        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        self.level = level
        self.protocol = protocol
        self.render_mode = render_mode
        # stable-retro's default render_mode is "human" (a window): always pass None. FILTERED
        # drops impossible pad combinations (LEFT+RIGHT), as gym-retro did for the paper.
        self._retro = stable_retro.make(
            level.game,
            state=level.state,
            info=level.info_path,
            use_restricted_actions=stable_retro.Actions.FILTERED,
            render_mode=None,
        )
        buttons, shape = list(self._retro.buttons), self._retro.observation_space.shape
        if buttons != list(BUTTONS) or shape != SCREEN_SHAPE:
            self.close()
            raise RuntimeError(f"{level.game}: not a Genesis game (buttons {buttons}, screen {shape})")
        #: the emulator core this env steps frame by frame (tests wrap it to see applied buttons)
        self.emulator = self._retro.em
        # GameData lookups read the emulator's live memory: no per-frame update_ram() needed
        # (that call also re-evaluates stable-retro's own scenario, which we do not use)
        self._ram = self._retro.data
        self.observation_space = gym.spaces.Box(0, 255, SCREEN_SHAPE, np.uint8)
        self.action_space = gym.spaces.MultiBinary(len(BUTTONS))
        self._tracker = ProgressTracker(level, protocol)
        self._checked_start = False
        self._previous_buttons: np.ndarray | None = None
        self._timesteps = 0
        self._frames = 0
        self._last_obs: np.ndarray | None = None
        #: (compressed, raw) of the last state cloned or restored
        self._state_cache: tuple[bytes, bytes] | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Load the level's save state; ``seed`` seeds the sticky-action generator."""
        super().reset(seed=seed)
        obs, _ = self._retro.reset()
        if not self._checked_start:
            check_start_level(self.level, self._ram)
            self._checked_start = True
        self._tracker.reset(self._ram)
        self._previous_buttons = None  # the first step after a reset is never delayed
        self._timesteps = 0
        self._frames = 0
        self._last_obs = obs
        return obs, {}

    def step(self, action):
        """Hold ``action`` (12 buttons) for ``frame_skip`` frames, with sticky frame skip."""
        if self._last_obs is None:
            raise RuntimeError("call reset() before step()")
        reward, end = self._advance(self._retro.action_to_array(np.asarray(action))[0])
        terminated = end in (COMPLETED, LIFE_LOST, SPECIAL_STAGE)
        truncated = not terminated and self._timesteps >= self.protocol.max_timesteps
        if truncated:
            end = TIME_LIMIT
        obs = self._retro.get_screen(apply_rotation=True)
        self._last_obs = obs
        info: dict[str, Any] = {}
        if end is not None:
            info[EPISODE_INFO_KEY] = {
                "score": self._tracker.score,  # = the sum of the episode's rewards
                "length_frames": self._frames,
                "end_reason": end,
                "timesteps": self._timesteps,
                "x_progress": self._tracker.progress,
                "max_x_progress": self._tracker.max_progress,
            }
        return obs, float(reward), terminated, truncated, info

    def _advance(self, buttons: np.ndarray) -> tuple[float, str | None]:
        """One timestep of ``buttons`` (a real step or a simulated one): the reward and the end
        reason the tracker found, if any (the time limit is the caller's)."""
        # Sticky frame skip: draw every step but the first after a reset, so the random stream
        # does not depend on the actions; with prob. sticky_prob the first frame keeps the old
        # buttons, and the new ones apply from the second frame on.
        delayed = self._previous_buttons is not None and self.np_random.random() < self.protocol.sticky_prob
        reward, end = 0.0, None
        for frame in range(self.protocol.frame_skip):
            applied = self._previous_buttons if (delayed and frame == 0) else buttons
            self.emulator.set_button_mask(applied, 0)
            self.emulator.step()
            self._frames += 1
            frame_reward, end = self._tracker.frame(self._ram)
            reward += frame_reward
            if end is not None:  # the episode ends on this frame; skip the rest of the step
                break
        self._previous_buttons = buttons
        self._timesteps += 1
        return reward, end

    # -- emulator capabilities (benchgen_sonic.emulators reads them in the worker process) -----
    def emulator_ram(self) -> np.ndarray:
        """The Genesis work RAM (64 KiB), for agents that declare the ``ram`` capability."""
        return np.array(self._retro.get_ram(), dtype=np.uint8)

    def clone_emulator(self) -> tuple[bytes, tuple]:
        """Everything a timestep depends on: the emulator's save state (``em.get_state()``, about
        1 MB, zlib-compressed to about 11 KB), the reward tracker's episode values, the buttons of
        the last timestep (sticky frame skip), the counters and the sticky-action generator."""
        raw = self.emulator.get_state()
        packed = zlib.compress(raw, 1)
        self._state_cache = (packed, raw)
        return packed, self._python_state()

    def restore_emulator(self, state: tuple[bytes, tuple]) -> None:
        """Go back to a :meth:`clone_emulator` state (of this level)."""
        packed, (tracker, previous, timesteps, frames, generator) = state
        cached = self._state_cache
        raw = cached[1] if cached is not None and cached[0] == packed else zlib.decompress(packed)
        self._state_cache = (packed, raw)  # planners restore one state many times in a row
        self.emulator.set_state(raw)
        self._tracker.restore(tracker)
        self._previous_buttons = None if previous is None else previous.copy()
        self._timesteps, self._frames = timesteps, frames
        self.np_random.bit_generator.state = generator

    def simulate_step(self, mask: int) -> tuple[float, bool]:
        """One timestep of button mask ``mask`` as :meth:`step` plays it (sticky frame skip, the
        contest reward), without rendering or recording: ``(reward, the level ended)``, where an
        end is completion, a lost life or a special stage (the time limit is not counted)."""
        reward, end = self._advance(self._retro.action_to_array(mask_to_buttons(mask))[0])
        return float(reward), end is not None

    def emulator_state_key(self) -> bytes:
        """A 128-bit digest of the work RAM, the tracker's episode values but its frame count, and
        the buttons held: equal for equal game states, frame counters aside (the planners'
        duplicate test; the save state itself is no key, it holds sound buffers that differ
        between two emulations of the same frames)."""
        tracker = self._tracker.snapshot()
        kept = tuple(v for name, v in zip(self._tracker.EPISODE_VALUES, tracker, strict=True) if name != "frames")
        previous = None if self._previous_buttons is None else self._previous_buttons.tobytes()
        digest = hashlib.blake2b(self._retro.get_ram().tobytes(), digest_size=16)
        digest.update(pickle.dumps((kept, previous)))
        return digest.digest()

    def emulator_command(self, name: str, *args: Any) -> Any:
        """``name(*args)`` (one of the methods above), sent to this worker process alone
        (``SonicVectorEnv.emulator_call``)."""
        if name not in _EMULATOR_COMMANDS:
            raise ValueError(f"unknown emulator command {name!r}")
        return getattr(self, name)(*args)

    def _python_state(self) -> tuple:
        previous = None if self._previous_buttons is None else self._previous_buttons.copy()
        generator = self.np_random.bit_generator.state
        return self._tracker.snapshot(), previous, self._timesteps, self._frames, generator

    def render(self):
        """The last screen (``render_mode="rgb_array"``); None otherwise."""
        if self.render_mode == "rgb_array":
            return self._last_obs
        return None

    def close(self):
        """Free the emulator so another one can be created in this process."""
        if getattr(self, "_retro", None) is not None:
            self.emulator = None
            self._ram = None
            self._retro.close()
            self._retro = None
            gc.collect()
