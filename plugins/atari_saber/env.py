"""The SABER vector environment: ale-py's native vector env plus SABER's episode rules.

Sources: Machado et al. 2018 ("Revisiting the ALE"), Toromanoff, Wirbel, Moutarde 2019
("Is Deep RL Really Superhuman on Atari?", SABER). Protocol page: ``spec/atari_saber.md``.

What the C++ ``ale_py.vector_env.AtariVectorEnv`` does for us (configured by :func:`ale_settings`):
sticky actions with p = 0.25 decided per emulator frame (inside the frame skip), the full
18-action set, no life signal (``episodic_life`` and ``life_loss_info`` off), no no-op or FIRE
starts, unclipped rewards, frame skip 4 with max-pooling of the last two frames, grayscale,
84x84, a stack of 4 frames, SAME_STEP autoreset, and truncation at the 100-hour cap.

What :class:`SaberVectorEnv` adds, vectorized in numpy (the per-step cost is a dozen tiny array
operations; the per-episode bookkeeping runs only on steps where an episode ends):

* max stuck time (SABER): 18,000 frames without a non-zero reward truncate the episode;
* infinite gameplay (SABER): an episode that reaches the 100-hour cap while still scoring is
  recorded with score ``inf``; "still scoring" = a positive reward within the last stuck window
  (18,000 frames), i.e. the score was still going up when the cap cut the game;
* score-counter rollover (SABER appendix C): a single reward <= -900,000 is a wrapped counter,
  corrected by adding back ``10**ceil(log10|r|)`` and logged as an event;
* 5-minute and 30-minute scores (SABER section 5, Tables 7-9): the cumulative raw score at 18,000 and
  108,000 frames (the final score if the episode is shorter);
* one game per backend: several games in one env (joint training) are several native vector
  envs, stepped concurrently (all ``send`` first, then all ``recv``); a ``game:mMdD`` flavor is
  played by ``flavor_backend.FlavorVectorEnv``, the same settings applied in Python;
* every game exposes the same ``Discrete(18)`` action space (see :func:`full_action_map`).

Episode lengths are counted in emulator frames as agent steps x 4. On the step where a game
ends, ale-py stops emulating at the game-over frame, so the recorded length of a ``game_over``
episode may exceed the emulator's own count by at most 3 frames; budgets count the same way.

Other protocols (``protocols.py``: Machado et al. 2018, DQN 2015, ...) change these values
through an :class:`~benchgen_atari_saber.protocols.AtariProtocol`: the sticky probability, the
frame skip, the minimal action set (``Discrete(n)`` of the game's own set, the same ``n`` for
every game of the env), no-op starts (ale-py's, not counted in the recorded length), the cap,
no stuck rule, and the training-only life-loss signal: in ``mode="train"`` a lost life is
reported to the agent as a terminated episode (``final_obs`` = the observation at the loss) while
the game goes on and the recorded episode runs to game over, its score untouched.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium.spaces import Box, Discrete
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from benchgen.episodes import EpisodeBook
from benchgen.suite import EpisodeEnd, SuiteVectorEnv
from benchgen_atari_saber.flavors import is_flavor_task
from benchgen_atari_saber.protocols import SABER, AtariProtocol

# --- SABER protocol values (declared in protocols.py) and the env's constants ----------------
#: emulator frames per agent step (action repeat)
FRAMESKIP = SABER.frameskip
#: SABER max stuck time: 5 minutes at 60 frames/s
MAX_STUCK_FRAMES = SABER.max_stuck_frames
#: SABER evaluation-time views: score after 5 and 30 minutes of play, in frames
SCORE_MARKS: dict[str, int] = {"score_5min": 18_000, "score_30min": 108_000}
#: a single reward at or below this is a wrapped score counter (SABER's code; see module doc)
ROLLOVER_THRESHOLD = -900_000
#: size of the full Atari action set (ALE's ``Action`` enum, NOOP=0 ... DOWNLEFTFIRE=17)
NUM_ACTIONS = 18
#: observation shape: stack of 4 grayscale 84x84 frames (Rainbow/IQN preprocessing)
OBS_SHAPE = (4, 84, 84)

#: end reasons, in the order they are decided
END_REASONS = ("game_over", "stuck", "max_length")


def ale_settings(protocol: AtariProtocol = SABER, max_episode_frames: int | None = None) -> dict[str, Any]:
    """Keyword arguments of ``AtariVectorEnv`` that implement ``protocol`` (default SABER).

    Identical at training and evaluation time (SABER section 3.1; a training-only life-loss
    signal is added by :class:`SaberVectorEnv`, never by ale-py, whose ``episodic_life`` restarts
    the game). The benchmark script builds its raw baseline env from these too.
    """
    settings = dict(
        protocol.ale_values(),  # the sticky actions, the action set, no-op starts, the cap, the frame skip
        episodic_life=False,  # an episode ends at game over only
        life_loss_info=False,  # no life-loss signal from ale-py
        use_fire_reset=False,  # SABER: no FIRE on reset; agents learn to press it
        reward_clipping=False,  # raw scores; agents clip for training themselves
        maxpool=True,
        grayscale=True,
        img_height=OBS_SHAPE[1],
        img_width=OBS_SHAPE[2],
        stack_num=OBS_SHAPE[0],
        autoreset_mode=AutoresetMode.SAME_STEP,
    )
    if max_episode_frames is not None:  # the evaluation episodes' own cap
        settings["max_num_frames_per_episode"] = max_episode_frames
    return settings


def full_action_map(action_set: Sequence[Any]) -> np.ndarray:
    """Map the 18 full-set actions to indices into a backend's legal ``action_set``.

    ale-py's full action set is all 18 actions for every game but Skiing, whose cartridge has no
    fire button: ale-py 0.12 lists its 9 non-fire actions only (and the native vector env hangs on
    an out-of-range index). We keep ``Discrete(18)`` for every game so that joint training and
    action semantics are uniform, and send a FIRE variant as the same joystick direction without
    the button (FIRE -> NOOP, UPFIRE -> UP, ...): on a cartridge that ignores the button this is
    exactly what the console would do. For 18-action games the map is the identity.
    """
    values = [int(getattr(a, "value", a)) for a in action_set]  # ale_py.Action or plain ints
    index = {v: i for i, v in enumerate(values)}
    out = np.empty(NUM_ACTIONS, dtype=np.int32)
    for a in range(NUM_ACTIONS):
        if a in index:
            out[a] = index[a]
        else:
            # ALE enum: FIRE=1 pairs with NOOP=0; UPFIRE..DOWNLEFTFIRE (10..17) with UP..DOWNLEFT (2..9)
            no_fire = 0 if a == 1 else a - 8 if a >= 10 else None
            if no_fire is None or no_fire not in index:
                raise ValueError(f"action {a} has no equivalent in the legal action set {values}")
            out[a] = index[no_fire]
    return out


def env_seeds(seed: int, num_envs: int) -> np.ndarray:
    """Per-sub-environment emulator seeds derived from one run seed.

    Drawn from ``numpy.random.SeedSequence(seed)`` so that runs with neighbouring seeds do not
    share sub-environment streams (seed + i would make run 0's env 1 equal run 1's env 0).
    ALE takes non-negative 31-bit seeds.
    """
    state = np.random.SeedSequence(int(seed)).generate_state(num_envs, dtype=np.uint32)
    return (state >> 1).astype(np.int64)


def make_ale_backend(
    task: str, num_envs: int, max_episode_frames: int, num_threads: int, protocol: AtariProtocol = SABER
):
    """``num_envs`` copies of ``task`` under ``protocol``: ale-py's native vector env for a game, a
    :class:`~benchgen_atari_saber.flavor_backend.FlavorVectorEnv` (same settings) for a ``game:mMdD``
    flavor, since the native env cannot set a mode or difficulty (Machado et al. 2018, section 5)."""
    settings = ale_settings(protocol, max_episode_frames)
    if is_flavor_task(task):
        from benchgen_atari_saber.flavor_backend import FlavorVectorEnv

        return FlavorVectorEnv(task, num_envs, num_threads=num_threads, **settings)
    from ale_py.vector_env import AtariVectorEnv

    return AtariVectorEnv(task, num_envs, num_threads=num_threads, **settings)


@dataclass
class _Group:
    """The sub-environments that play one task (a game or a flavor), served by one backend."""

    game: str  # the task
    index: np.ndarray  # positions of this group's sub-envs in the combined env
    backend: Any
    action_map: np.ndarray  # full action -> backend action index (see full_action_map)
    identity: bool  # action_map is the identity: send actions as they are


class SaberVectorEnv(SuiteVectorEnv):
    """Vector env of ``len(tasks)`` Atari games under the SABER protocol, or another ``protocol``.

    Args:
        tasks: one ale-py ROM id per sub-environment (e.g. ``["pong"] * 8``, or several games
            for joint training), or a ``game:mMdD`` flavor (``flavors.py``; a backend of its own).
        seed: run seed; the first ``reset()`` without a seed uses it (see :func:`env_seeds`).
        mode: "train" or "eval"; the protocols differ between them only by the training-only
            life-loss signal.
        protocol: the Atari protocol (default SABER); its environment values are applied here.
        max_episode_frames, max_stuck_frames, score_marks: the protocol's values by default (the
            SABER score marks); tests shrink them to reach the same code paths quickly.
        num_threads: emulator threads per game (default: min(sub-envs of that game, CPUs)).
        backend_factory: ``(task, num_envs, max_episode_frames, num_threads) -> backend``;
            default :func:`make_ale_backend` under ``protocol``. A backend offers ``AtariVectorEnv``'s
            ``reset/send/recv/close`` and ``ale.get_action_set()``; tests script one.

    Observations are ``uint8`` arrays of shape ``(num_envs, 4, 84, 84)``, actions ``int`` in
    ``[0, 18)``, rewards the raw game reward as float64 (corrected for a counter rollover).
    ``info`` carries only ``final_obs`` and its mask ``_final_obs`` on steps where an episode
    ended (rows of sub-envs that did not end are unspecified): never lives, never RAM.
    """

    frames_per_step = FRAMESKIP
    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(
        self,
        tasks: Sequence[str],
        seed: int = 0,
        *,
        mode: str = "train",
        protocol: AtariProtocol = SABER,
        max_episode_frames: int | None = None,
        max_stuck_frames: int | None = None,
        score_marks: dict[str, int] | None = None,
        num_threads: int | None = None,
        backend_factory: Callable[..., Any] | None = None,
    ):
        if not tasks:
            raise ValueError("SaberVectorEnv needs at least one task")
        self.tasks = tuple(tasks)
        self.mode = mode
        self.seed = int(seed)
        self.protocol = protocol
        self.frames_per_step = protocol.frameskip
        self.max_episode_frames = int(protocol.max_episode_frames if max_episode_frames is None else max_episode_frames)
        # 0 = no stuck rule (every protocol but SABER's)
        self.max_stuck_frames = int(protocol.max_stuck_frames if max_stuck_frames is None else max_stuck_frames)
        self.signal_life_loss = protocol.life_loss_ends_training_episodes and mode == "train"
        self.score_marks = dict(SCORE_MARKS if score_marks is None else score_marks)
        for name, mark in self.score_marks.items():
            # snapshots are taken on the step whose frame count equals the mark exactly
            if mark % self.frames_per_step:
                raise ValueError(f"score mark {name}={mark} is not a multiple of {self.frames_per_step} frames")
        if backend_factory is None:
            backend_factory = functools.partial(make_ale_backend, protocol=protocol)

        n = self.num_envs = len(self.tasks)
        self._groups: list[_Group] = []
        cpus = os.cpu_count() or 1
        for game in dict.fromkeys(self.tasks):  # first-appearance order
            index = np.array([i for i, t in enumerate(self.tasks) if t == game], dtype=np.intp)
            threads = num_threads or min(len(index), cpus)
            backend = backend_factory(game, len(index), self.max_episode_frames, threads)
            action_set = backend.ale.get_action_set()
            if protocol.full_action_space:
                amap = full_action_map(action_set)
            else:  # the game's minimal set, as the backend lists it
                amap = np.arange(len(action_set), dtype=np.int32)
            identity = bool(np.array_equal(amap, np.arange(len(amap))))
            self._groups.append(_Group(game, index, backend, amap, identity))
        sizes = {g.game: len(g.action_map) for g in self._groups}
        if len(set(sizes.values())) > 1:
            for g in self._groups:
                g.backend.close()
            raise ValueError(
                f"the games' minimal action sets differ in size ({sizes}); one env needs one action space: "
                "use the full action set (full_action_space: true) to play them together"
            )
        self.num_actions = len(self._groups[0].action_map)
        self._single = len(self._groups) == 1
        # ALEInterface backends (flavor_backend.py) expose the emulators (emulators.py)
        self._frame_actions = all(hasattr(g.backend, "_envs") for g in self._groups)
        self.single_observation_space = Box(0, 255, OBS_SHAPE, dtype=np.uint8)
        self.single_action_space = Discrete(self.num_actions)
        self.observation_space = batch_space(self.single_observation_space, n)
        self.action_space = batch_space(self.single_action_space, n)

        # per-sub-env episode state; frames count from the episode's first observation
        self.episodes = EpisodeBook(self.tasks, self.frames_per_step)  # raw score and frames
        self._last_reward = np.zeros(n, dtype=np.int64)  # frame of the last non-zero reward
        self._last_gain = np.full(n, -self.max_stuck_frames, dtype=np.int64)  # last positive one
        self._marks = [(name, mark, np.zeros(n, dtype=np.float64)) for name, mark in self.score_marks.items()]
        self._events: list[list[dict[str, Any]]] = [[] for _ in range(n)]
        self._lives = np.zeros(n, dtype=np.int64)  # lives at the last step (life-loss signal)
        self._seeded = False
        self._last_obs: np.ndarray | None = None  # what a partial reset reports for the others

    # --- gymnasium API ------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Reset all sub-environments, or those in ``options["reset_mask"]``.

        ``seed`` (an int) seeds every reset sub-environment explicitly (:func:`env_seeds`); the
        first reset without a seed uses the constructor's seed, later ones continue the
        emulators' random streams. Episodes cut short by a reset are not recorded.
        """
        mask = None if options is None else options.get("reset_mask")
        if mask is None:
            mask = np.ones(self.num_envs, dtype=bool)
        mask = np.asarray(mask, dtype=bool)
        if mask.shape != (self.num_envs,):
            raise ValueError(f"reset_mask must have shape ({self.num_envs},), got {mask.shape}")
        if seed is None and not self._seeded:
            seed = self.seed
        seeds = None if seed is None else env_seeds(seed, self.num_envs)
        self._seeded = True

        obs = self._reset_groups(mask, seeds)
        self._clear(mask)
        self._last_obs = obs
        return obs, {}

    def step(self, actions):
        """Step every sub-environment; see the class docstring for what comes back."""
        actions = np.asarray(actions)
        # one action per sub-env, or (frame_actions, on the ALEInterface backend) one per frame
        shapes = (
            ((self.num_envs,), (self.num_envs, self.frames_per_step)) if self._frame_actions else ((self.num_envs,),)
        )
        if actions.shape not in shapes or actions.dtype.kind not in "iu":
            raise ValueError(f"actions must be {self.num_envs} integers, got shape {actions.shape} {actions.dtype}")
        # guard: ale-py 0.12's native env blocks forever on an out-of-range action index
        if actions.min() < 0 or actions.max() >= self.num_actions:
            raise ValueError(f"actions must lie in [0, {self.num_actions}), got {actions.min()}..{actions.max()}")
        if actions.dtype != np.int64 and actions.dtype != np.int32:
            actions = actions.astype(np.int64)  # the native env takes int32/int64 only
        obs, raw_rewards, terminated, truncated, final_obs, lives = self._step_groups(actions)

        rewards = raw_rewards.astype(np.float64)
        if rewards.min() <= ROLLOVER_THRESHOLD:  # rare: a wrapped score counter
            self._correct_rollovers(rewards)
        self.episodes.add(rewards)
        frames = self.episodes.steps * self.frames_per_step
        nonzero = rewards != 0
        self._last_reward[nonzero] = frames[nonzero]
        gain = rewards > 0
        self._last_gain[gain] = frames[gain]
        for _, mark, snapshot in self._marks:
            np.copyto(snapshot, self.episodes.returns, where=frames == mark)
        # SABER max stuck time: no non-zero reward for max_stuck_frames frames
        if self.max_stuck_frames:
            stuck = (frames - self._last_reward) >= self.max_stuck_frames
        else:
            stuck = np.zeros(self.num_envs, dtype=bool)

        ended = terminated | truncated | stuck
        info: dict[str, Any] = {}
        if ended.any():
            obs, truncated, final_obs = self._end_episodes(ended, stuck, obs, terminated, truncated, final_obs)
            info = {"final_obs": final_obs, "_final_obs": ended}
        if self.signal_life_loss:
            terminated, info = self._signal_life_loss(lives, ended, obs, terminated, info)
        self._lives = lives
        self._last_obs = obs
        return obs, rewards, terminated, truncated, info

    def _signal_life_loss(self, lives, ended, obs, terminated, info):
        """Training-only rule (DQN 2015): a lost life reads to the agent as a terminated episode
        whose last observation is the current one, and the next "episode" starts from it. The
        game, the recorded episode and its score go on. ``lives`` of an env that just ended are
        already the next game's."""
        lost = (lives < self._lives) & ~ended
        if not lost.any():
            return terminated, info
        final_obs = info.get("final_obs")
        final_obs = np.zeros_like(obs) if final_obs is None else final_obs
        final_obs[lost] = obs[lost]
        mask = lost | info.get("_final_obs", np.zeros_like(lost))
        return terminated | lost, {"final_obs": final_obs, "_final_obs": mask}

    def pop_episode_ends(self) -> list[EpisodeEnd]:
        """Return (and forget) the episodes that finished since the last call."""
        return self.episodes.pop()

    def emulators(self):
        """RAM, palette screen, states and per-frame actions (``emulators.py``) when every backend
        is an ``ALEInterface`` one (an env of ``AtariSaberSuite.with_capabilities``); else None."""
        if not self._frame_actions:
            return None
        if getattr(self, "_emulators", None) is None:
            from benchgen_atari_saber.emulators import AleEmulators

            self._emulators = AleEmulators(self)
        return self._emulators

    def close_extras(self, **kwargs):
        """Close the native backends."""
        for group in self._groups:
            group.backend.close()

    # --- SABER episode rules ------------------------------------------------------------------

    def _correct_rollovers(self, rewards: np.ndarray) -> None:
        """Undo score-counter wraps in place (SABER appendix C) and log them as events; an
        event's ``frame`` is the episode's frame count at the end of the step that wrapped."""
        for i in np.flatnonzero(rewards <= ROLLOVER_THRESHOLD):
            reward = int(rewards[i])
            frame = int(self.episodes.steps[i] + 1) * self.frames_per_step  # (this step not yet counted)
            correction = rollover_correction(reward)
            rewards[i] = reward + correction
            self._events[i].append({"type": "rollover", "frame": frame, "reward": reward, "correction": correction})

    def _end_episodes(self, ended, stuck, obs, terminated, truncated, final_obs):
        """Record the episodes that ended this step; reset the stuck ones ourselves."""
        # ale-py already reset the sub-envs that ended by game over or by the cap (SAME_STEP)
        stuck_only = stuck & ~(terminated | truncated)
        if stuck_only.any():
            if final_obs is None:
                final_obs = obs.copy()
            else:
                final_obs[stuck_only] = obs[stuck_only]
            fresh = self._reset_groups(stuck_only, None)  # keep the emulators' random streams
            obs[stuck_only] = fresh[stuck_only]
            truncated = truncated | stuck_only

        for i in np.flatnonzero(ended):
            frames = int(self.episodes.steps[i]) * self.frames_per_step
            score = float(self.episodes.returns[i])
            if terminated[i]:
                reason = "game_over"
            elif stuck[i]:
                reason = "stuck"  # also when the cap and the stuck limit fall on the same step
            else:
                reason = "max_length"
            extras = {name: float(snap[i]) if frames >= mark else score for name, mark, snap in self._marks}
            # SABER infinite gameplay: at the cap and still scoring (a gain within the stuck window)
            still_scoring = frames - int(self._last_gain[i]) < self.max_stuck_frames
            if reason == "max_length" and self.protocol.infinite_gameplay and still_scoring:
                score = float("inf")
            self.episodes.end(i, reason, score=score, length_frames=frames, extras=extras, events=self._events[i])
        self._clear(ended)
        return obs, truncated, final_obs

    def _clear(self, mask: np.ndarray) -> None:
        """Start fresh episode bookkeeping for the sub-envs in ``mask``."""
        self.episodes.restart(mask)
        self._last_reward[mask] = 0
        self._last_gain[mask] = -self.max_stuck_frames
        for _, _, snapshot in self._marks:
            snapshot[mask] = 0.0
        for i in np.flatnonzero(mask):
            self._events[i] = []

    # --- backends -----------------------------------------------------------------------------

    def _send(self, group: _Group, actions: np.ndarray) -> None:
        group.backend.send(actions if group.identity else group.action_map[actions])

    def _step_groups(self, actions: np.ndarray):
        """Step every backend; returns obs, int rewards, terminated, truncated, final_obs|None,
        lives."""
        if self._single:  # the common case: one game, no gathering
            group = self._groups[0]
            self._send(group, actions)
            obs, rewards, terminated, truncated, info = group.backend.recv()
            return obs, rewards, terminated, truncated, info.get("final_obs"), _lives_of(info, self.num_envs)

        for group in self._groups:  # all emulators run concurrently ...
            self._send(group, actions[group.index])
        n = self.num_envs
        obs = np.empty((n, *OBS_SHAPE), dtype=np.uint8)
        rewards = np.empty(n, dtype=np.int64)
        terminated = np.empty(n, dtype=bool)
        truncated = np.empty(n, dtype=bool)
        lives = np.empty(n, dtype=np.int64)
        final_obs = None
        for group in self._groups:  # ... then we gather their results
            g_obs, g_rew, g_term, g_trunc, g_info = group.backend.recv()
            idx = group.index
            obs[idx], rewards[idx], terminated[idx], truncated[idx] = g_obs, g_rew, g_term, g_trunc
            lives[idx] = _lives_of(g_info, len(idx))
            if "final_obs" in g_info:
                if final_obs is None:
                    final_obs = np.zeros_like(obs)
                final_obs[idx] = g_info["final_obs"]
        return obs, rewards, terminated, truncated, final_obs, lives

    def _reset_groups(self, mask: np.ndarray, seeds: np.ndarray | None) -> np.ndarray:
        """Reset the masked sub-envs of every backend; returns all current observations."""
        if self._last_obs is None:
            obs = np.zeros((self.num_envs, *OBS_SHAPE), dtype=np.uint8)
        else:
            obs = self._last_obs.copy()
        for group in self._groups:
            g_mask = mask[group.index]
            if g_mask.all():
                g_seed = None if seeds is None else seeds[group.index]
                g_obs, g_info = group.backend.reset(seed=g_seed)
            elif g_mask.any():
                g_seed = None if seeds is None else seeds[group.index][g_mask]
                g_obs, g_info = group.backend.reset(seed=g_seed, options={"reset_mask": g_mask})
            else:
                continue  # an untouched backend keeps its last observations
            obs[group.index] = g_obs
            g_lives = _lives_of(g_info, len(group.index))
            self._lives[group.index[g_mask]] = g_lives[g_mask] if len(g_lives) == len(g_mask) else g_lives
        return obs


def _lives_of(info: dict[str, Any], n: int) -> np.ndarray:
    """The ``lives`` counters ale-py reports (zeros where a backend reports none)."""
    lives = info.get("lives")
    return np.zeros(n, dtype=np.int64) if lives is None else np.asarray(lives, dtype=np.int64)


def rollover_correction(reward: int) -> int:
    """``10**ceil(log10(|reward|))`` in exact integer arithmetic (SABER's correction).

    >>> rollover_correction(-999_990), rollover_correction(-1_000_000), rollover_correction(-1_000_001)
    (1000000, 1000000, 10000000)
    """
    magnitude, power = abs(int(reward)), 1
    while power < magnitude:
        power *= 10
    return power
