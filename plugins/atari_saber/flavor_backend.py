"""A vector-env backend that plays one game *flavor* (mode and difficulty) under an Atari protocol.

Why this module exists: :class:`~benchgen_atari_saber.env.SaberVectorEnv` plays a plain game on
ale-py's native C++ ``AtariVectorEnv``, which has no way to set a mode or a difficulty (ale-py
0.12.1). :class:`FlavorVectorEnv` offers the part of that env's interface SaberVectorEnv uses
(``reset/send/recv/close``, ``ale.get_action_set()``), takes the same keyword arguments
(:func:`~benchgen_atari_saber.env.ale_settings`) and applies them the way ale-py's C++ code does
(``src/ale/vector/preprocessed_env.cpp`` and ``env_vectorizer.cpp`` of ale-py v0.12.1), on one
``ale_py.ALEInterface`` per sub-environment with ``setMode``/``setDifficulty``:

* sticky actions: ALE's own ``repeat_action_probability``, decided by the emulator at every frame
  (Machado et al. 2018, section 4.2);
* action repeat ``frameskip``, rewards summed, the loop cut at game over or the frame cap; the last
  two frames are captured and max-pooled exactly as ale-py does, including its quirk on a cut
  step (the frames not emulated keep their last values, the max pool is in place);
* ALE's grayscale palette, an 84x84 resize with OpenCV's ``INTER_AREA`` (the interpolation ale-py
  calls natively; area averaging is also the right filter for a 2.5x / 1.9x downscale), a stack
  of 4 frames, zeros before the first frame of an episode;
* 0 to ``noop_max - 1`` no-op frames after a reset (ale-py draws ``uniform_int(0, noop_max - 1)``),
  uncounted; our draws come from numpy, seeded like ale-py's ``std::mt19937`` from the reset seed,
  so the counts follow the same distribution but not the same sequence;
* the episode cap counted in emulator frames (``max_num_frames_per_episode``): ``truncated`` when
  it is reached and the game is not over;
* SAME_STEP autoreset: an episode that ends is reset within the step, its last observation in
  ``info["final_obs"]``, its reward and flags kept, ``info["lives"]`` already the new game's;
* a seeded reset sets ALE's ``random_seed`` and reloads the ROM, as ale-py does, then sets the
  mode and difficulty again (a reload forgets them).

Alternatives considered. gymnasium's ``AtariEnv`` + ``AtariPreprocessing`` + ``FrameStackObservation``
can set modes, but differ from the native env in ways that change the game: it pads a new stack
with copies of the first frame (not zeros), draws 1 to ``noop_max`` no-ops as agent steps,
derives ALE's seed from a ``SeedSequence`` instead of using the seed, and truncates through ALE's
own frame counter. Matching the native env then takes as much code as this module, so it drives
``ALEInterface`` directly. What no library does, and so is written here: the frame loop above.

Threads. ale-py's Python ``act`` keeps the GIL (its binding has no ``gil_scoped_release``), so
threads would not run emulators in parallel: sub-environments run one after the other in the
caller's thread, inside :meth:`FlavorVectorEnv.recv`, which lets the native backends of other
games in the same env run concurrently after their ``send``.
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np
from gymnasium.vector import AutoresetMode

from benchgen_atari_saber.flavors import Flavor, parse_task, quiet_ale


class _FlavorEmulator:
    """One sub-environment: ale-py's ``PreprocessedEnv`` (grayscale, max-pooled) on an ``ALEInterface``."""

    def __init__(self, flavor: Flavor, rom: str, settings: dict[str, Any]):
        from ale_py import ALEInterface

        self.flavor, self.rom = flavor, rom
        self.frameskip = settings["frameskip"]
        self.maxpool = settings["maxpool"]
        self.noop_max = settings["noop_max"]
        self.max_frames = settings["max_num_frames_per_episode"]
        self.size = (settings["img_width"], settings["img_height"])  # cv2 takes (width, height)
        self.ale = ALEInterface()
        self.ale.setFloat("repeat_action_probability", float(settings["repeat_action_probability"]))
        self._load(-1)  # ALE's -1: seeded from the clock, until a seeded reset (as ale-py does)
        full = settings["full_action_space"]
        self.action_set = list(self.ale.getLegalActionSet() if full else self.ale.getMinimalActionSet())
        self.rng = np.random.default_rng()  # no-op counts; reseeded by a seeded reset
        # the last two frames of a step, at the ROM's own screen size (210 rows for most games;
        # air_raid 250, journey_escape 230, pooyan 220, carnival 214)
        self.raw = np.zeros((2, *self.ale.getScreenDims()), dtype=np.uint8)
        self.stack = np.zeros((settings["stack_num"], settings["img_height"], settings["img_width"]), dtype=np.uint8)
        self.pending_seed = -1
        self.elapsed = self.max_frames + 1  # frames of the current episode; over until the first reset
        self.game_over = False
        self.lives = 0
        self.reward = 0

    def _load(self, seed: int) -> None:
        """(Re)load the ROM with ALE's ``random_seed`` and select the flavor (a load forgets it)."""
        self.ale.setInt("random_seed", int(seed))
        self.ale.loadROM(self.rom)
        self.ale.setMode(self.flavor.mode)  # applied by the next reset_game()
        self.ale.setDifficulty(self.flavor.difficulty)

    @property
    def episode_over(self) -> bool:
        return self.game_over or self.elapsed >= self.max_frames

    def reset(self) -> None:
        if self.pending_seed >= 0:  # ale-py: seed ALE and the no-op generator, reload the ROM
            self._load(self.pending_seed)
            self.rng = np.random.default_rng(self.pending_seed)
            self.pending_seed = -1
        ale = self.ale
        ale.reset_game()
        noops = int(self.rng.integers(self.noop_max)) if self.noop_max > 0 else 0  # 0 .. noop_max - 1
        for _ in range(noops):
            ale.act(0)  # NOOP, one emulator frame each, not counted in the episode
            if ale.game_over():
                ale.reset_game()
        self.stack[:] = 0
        ale.getScreenGrayscale(self.raw[0])
        self.raw[1] = 0
        self._push_frame()
        self.elapsed, self.reward, self.game_over = 0, 0, False
        self.lives = ale.lives()

    def step(self, action: int | list[int]) -> None:
        """One agent step: ``action`` for every frame, or a list of one action per frame (the
        ``frame_actions`` capability, ``emulators.py``)."""
        ale, raw = self.ale, self.raw
        acts = [self.action_set[a] for a in action] if isinstance(action, list) else [self.action_set[action]]
        reward = 0
        for skip in range(self.frameskip, 0, -1):
            act = acts[(self.frameskip - skip) % len(acts)]
            reward += ale.act(act)  # the emulator applies stickiness at this frame
            self.game_over = ale.game_over()
            self.elapsed += 1
            if self.game_over or self.elapsed >= self.max_frames:
                break  # as ale-py: the frame that ended the episode is not captured
            if skip <= 2:  # the last two frames of the repeat (raw[1], then raw[0])
                ale.getScreenGrayscale(raw[skip - 1])
        self._push_frame()
        self.lives = ale.lives()
        self.reward = reward

    def _push_frame(self) -> None:
        """Max-pool into ``raw[0]`` (in place, as ale-py), resize, append to the stack."""
        if self.maxpool:
            np.maximum(self.raw[0], self.raw[1], out=self.raw[0])
        self.stack[:-1] = self.stack[1:]
        self.stack[-1] = cv2.resize(self.raw[0], self.size, interpolation=cv2.INTER_AREA)


class FlavorVectorEnv:
    """``num_envs`` copies of one flavor task (``game:mMdD``), stepped like ale-py's ``AtariVectorEnv``.

    Keyword arguments are :func:`~benchgen_atari_saber.env.ale_settings`'s (those of
    ``AtariVectorEnv``); settings the atari_saber protocols never use (life-loss episodes, reward
    clipping, FIRE resets, RGB, NEXT_STEP autoreset) raise ``ValueError``. ``num_threads`` is
    accepted for the same signature; see the module docstring for why it is not used.
    """

    _FIXED = {
        "episodic_life": False,
        "life_loss_info": False,
        "use_fire_reset": False,
        "reward_clipping": False,
        "grayscale": True,
    }

    def __init__(self, task: str, num_envs: int, *, num_threads: int = 1, **settings: Any):
        from ale_py import roms

        for key, value in self._FIXED.items():
            if settings.pop(key, value) != value:
                raise ValueError(f"FlavorVectorEnv supports {key}={value} only")
        mode = AutoresetMode(settings.pop("autoreset_mode", AutoresetMode.SAME_STEP))
        if mode != AutoresetMode.SAME_STEP:
            raise ValueError("FlavorVectorEnv supports SAME_STEP autoreset only")
        expected = {
            "repeat_action_probability",
            "full_action_space",
            "noop_max",
            "max_num_frames_per_episode",
            "frameskip",
            "maxpool",
            "img_height",
            "img_width",
            "stack_num",
        }
        if set(settings) != expected:
            raise ValueError(f"FlavorVectorEnv needs exactly the settings {sorted(expected)}, got {sorted(settings)}")
        quiet_ale()
        self.flavor = parse_task(task)
        rom = roms.get_rom_path(self.flavor.game)
        if rom is None:
            raise ValueError(f"ale-py has no ROM for '{self.flavor.game}'")
        self.num_envs = num_envs
        self._envs = [_FlavorEmulator(self.flavor, str(rom), settings) for _ in range(num_envs)]
        self._actions: np.ndarray | None = None
        self._started = False

    @property
    def ale(self) -> FlavorVectorEnv:
        """The native env exposes its action set as ``env.ale.get_action_set()``; so does this one."""
        return self

    def screens(self) -> np.ndarray:
        """The sub-envs' current full-resolution RGB screens, ``(num_envs, height, 160, 3)`` (210 rows for most games)."""
        return np.stack([e.ale.getScreenRGB() for e in self._envs])

    def get_action_set(self) -> list:
        """The legal (full) or minimal action set, as ``ale_py.Action`` values."""
        return list(self._envs[0].action_set)

    def reset(self, *, seed: int | np.ndarray | None = None, options: dict[str, Any] | None = None):
        """Reset all sub-envs or those in ``options["reset_mask"]``; ``seed``: an int seeds them with
        consecutive values, an array gives one seed per reset sub-env (ale-py's rules)."""
        mask = None if options is None else options.get("reset_mask")
        index = np.arange(self.num_envs) if mask is None else np.flatnonzero(np.asarray(mask, dtype=bool))
        if len(index) != self.num_envs and not self._started:
            raise RuntimeError("the first reset() must reset every environment")
        if seed is None:
            seeds = np.full(len(index), -1)
        elif isinstance(seed, (int, np.integer)):
            seeds = np.arange(int(seed), int(seed) + len(index))
        else:
            seeds = np.asarray(seed)
            if seeds.shape != (len(index),):
                raise ValueError(f"seed must have one entry per reset sub-environment, got shape {seeds.shape}")
        for i, s in zip(index, seeds):
            self._envs[i].pending_seed = int(s)
            self._envs[i].reset()
        self._started = True
        return self._observations(), self._info()

    def send(self, actions: np.ndarray) -> None:
        """Take one action index per sub-env, or one per sub-env and frame (shape ``(num_envs,
        frameskip)``); the emulators run in :meth:`recv`."""
        actions = np.asarray(actions)
        frameskip = self._envs[0].frameskip if self._envs else 1
        if actions.shape not in ((self.num_envs,), (self.num_envs, frameskip)):
            raise ValueError(f"expected {self.num_envs} actions (or {self.num_envs}x{frameskip}), got {actions.shape}")
        if not self._started:
            raise RuntimeError("send() called before reset()")
        self._actions = actions

    def recv(self):
        """Step every sub-env on the actions sent; SAME_STEP autoreset (module docstring)."""
        if self._actions is None:
            raise RuntimeError("recv() called without send()")
        n = self.num_envs
        rewards = np.zeros(n, dtype=np.int32)
        terminated = np.zeros(n, dtype=bool)
        truncated = np.zeros(n, dtype=bool)
        final_obs = None
        for i, (env, action) in enumerate(zip(self._envs, self._actions.tolist())):
            env.step(action)
            rewards[i] = env.reward
            terminated[i] = env.game_over
            truncated[i] = env.elapsed >= env.max_frames and not env.game_over
            if env.episode_over:
                if final_obs is None:
                    final_obs = np.zeros((n, *env.stack.shape), dtype=np.uint8)
                final_obs[i] = env.stack
                env.reset()  # unseeded: the emulator's and the no-op generator's streams go on
        self._actions = None
        info = self._info()
        if final_obs is not None:
            info["final_obs"] = final_obs
        return self._observations(), rewards, terminated, truncated, info

    def close(self) -> None:
        """Drop the emulators."""
        self._envs = []

    def _observations(self) -> np.ndarray:
        return np.stack([env.stack for env in self._envs])

    def _info(self) -> dict[str, np.ndarray]:
        envs = self._envs
        return {
            "env_id": np.arange(self.num_envs, dtype=np.int32),
            "lives": np.array([env.lives for env in envs], dtype=np.int32),
            "frame_number": np.array([env.ale.getFrameNumber() for env in envs], dtype=np.int32),
            "episode_frame_number": np.array([env.ale.getEpisodeFrameNumber() for env in envs], dtype=np.int32),
        }
