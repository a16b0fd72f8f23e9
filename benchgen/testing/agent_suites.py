"""The agent kit's suites: two scripted games, shipped with benchgen, that agents are tested on.

``kit_pixels`` gives what a suite of screens gives learning agents (``AgentNeeds.observations =
"frames"``), scaled down: uint8 ``(4, 40, 40)`` observations (big enough for the Nature CNN,
small enough to learn on in seconds), a sliding stack of the last four frames, oldest first.
Task ``walls-G``: a runner starts at cell 0 of a track of :data:`TRACK` cells and must reach its
end within :data:`TIME_LIMIT` steps; a wall stands every ``G`` cells and only a jumping move
gets past it. Six actions, named in ``action_semantics()`` (noop, left, right, jump,
left_jump, right_jump), so agents that need named actions (JERK) run here. The reward is the
progress ``x_t - x_{t-1}`` plus :data:`BONUS` on reaching the end. Budgets count emulator
frames, four per step.

``kit_vector`` gives flat ``float32`` observations and names no actions. Task ``chain-L``: the
observation is ``(t / L, advances / L, one-hot of the last action, 1)``; action 0 waits (reward
0.25), 1 advances (reward 1), 2 quits (the episode ends, "game_over"); after ``L`` steps the
episode is cut ("time_limit"). Budgets count agent steps (timesteps), two frames each.

Both are deterministic: what happens depends on the actions alone, never on a seed, so two runs
of an agent differ only where the agent's own choices differ. Both have the split ``kit`` (two
train tasks, one test task) for joint agents.

``kit_pixels`` offers every emulator capability (:mod:`benchgen.capabilities`), for agents that
declare them: ``ram`` (16 bytes: the runner's cell, the clock, the wall gap, zeros),
``palette_screen`` (the newest 40x40 frame as palette indices: 0 background, 1 wall, 2 runner and
clock), ``clone_state`` (the game's state; a simulated step follows the same rules) and
``frame_actions`` (actions of shape ``(num_envs, 4)``; the game reads its input on a step's first
frame). ``kit_vector`` offers none, so an agent that needs one is refused there. The log records
each capability an environment's emulators were first used for (``{"env", "capability"}``).

What makes them a test instrument: every environment they build reports what it did, in the
process that steps it, so the kit can compare it with what the run recorded:

* with :data:`LOG_ENV` set to a file path, each environment appends one JSON line when it is
  made (``{"env", "make": {"tasks", "mode", "seed"}}``) and one per step (``{"env", "frames",
  "actions", "ends"}``, ``ends`` being ``[env_index, task, score, length_frames, end_reason]``
  per finished episode);
* with :data:`STOP_ENV` set to ``"PID:FRAMES"``, once the training environments of process
  ``PID`` stepped ``FRAMES`` frames together (one env, or the one-task envs joint environments
  make episode after episode), the environment taking the step sends that process a SIGINT, as a
  user pressing Ctrl-C would.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

import benchgen
from benchgen.capabilities import Emulators
from benchgen.episodes import EpisodeBook
from benchgen.errors import did_you_mean
from benchgen.suite import EpisodeEnd, Split, Suite, SuiteVectorEnv

#: environment variable: the JSON-lines file the kit suites' environments log to (unset: no log)
LOG_ENV = "BENCHGEN_AGENT_KIT_LOG"
#: environment variable: ``"PID:FRAMES"``, stop process PID with SIGINT once its training envs stepped FRAMES frames
STOP_ENV = "BENCHGEN_AGENT_KIT_STOP"
#: this process's training frames per stop request (FRAMES), and the requests already sent
_TRAIN_FRAMES: dict[int, int] = {}
_STOPPED: set[int] = set()


def reset_stop_request() -> None:
    """Forget the training frames counted for a stop request (a new kit run starts at zero)."""
    _TRAIN_FRAMES.clear()
    _STOPPED.clear()


PIXELS = "kit_pixels"
VECTOR = "kit_vector"
#: the kit's suites, in the order the kit tests them
KIT_SUITES = (PIXELS, VECTOR)
#: the split joint agents are run on (both suites have it)
KIT_SPLIT = "kit"

#: kit_pixels: cells of the track, steps before an episode is cut, bonus for reaching the end
TRACK, TIME_LIMIT, BONUS = 16, 32, 10.0
SIZE, STACK = 40, 4
#: kit_pixels: action index -> (cells moved, jumping)
MOVES = ((0, False), (-1, False), (1, False), (0, True), (-1, True), (1, True))
SEMANTICS = {"noop": 0, "left": 1, "right": 2, "jump": 3, "left_jump": 4, "right_jump": 5}
#: kit_vector: observation size, reward of waiting
VECTOR_SIZE, WAIT_REWARD = 6, 0.25

_serial = itertools.count()


class KitVectorEnv(SuiteVectorEnv):
    """What both kit environments share: the step bookkeeping, the log and the stop signal."""

    def __init__(self, tasks: Sequence[str], seed: int, mode: str, obs_space: gym.spaces.Box, num_actions: int):
        self.tasks = list(tasks)
        self.num_envs = len(self.tasks)
        self.single_observation_space = obs_space
        self.single_action_space = gym.spaces.Discrete(num_actions)
        self.observation_space = gym.vector.utils.batch_space(obs_space, self.num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, self.num_envs)
        self.metadata = {"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}
        #: each sub-environment's running episode: its steps are the games' clock (``t``)
        self.episodes = EpisodeBook(self.tasks, self.frames_per_step)
        self._frames = 0
        self._id = f"{os.getpid()}-{next(_serial)}"
        path = os.environ.get(LOG_ENV)
        self._log = open(path, "a", buffering=1) if path else None  # line-buffered; closed in close()
        pid, _, frames = os.environ.get(STOP_ENV, "").partition(":")
        stop = pid == str(os.getpid()) and frames.isdigit() and mode == "train"
        self._stop_at = int(frames) if stop else None
        self._write({"make": {"tasks": self.tasks, "mode": mode, "seed": int(seed)}})

    def _write(self, record: dict[str, Any]) -> None:
        if self._log is not None:
            self._log.write(json.dumps({"env": self._id, **record}) + "\n")

    # -- what a game defines ---------------------------------------------------------------
    def _limits(self) -> np.ndarray:
        """Each sub-environment's step limit (an episode is cut there: "time_limit")."""
        raise NotImplementedError

    def _restart(self, which: np.ndarray) -> None:
        """Start new episodes in the sub-environments of mask ``which``."""
        raise NotImplementedError

    def _rules(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, str]:
        """Apply ``actions``: (rewards, terminated, the end reason of a terminated episode)."""
        raise NotImplementedError

    def _after_step(self) -> None:
        """Update what the observation shows, once the step's clock and score are counted."""

    def _observe(self) -> np.ndarray:
        """The current observations, as a fresh array."""
        raise NotImplementedError

    def _extras(self, index: int) -> dict[str, Any]:
        """Sub-environment ``index``'s ``EpisodeEnd.extras``."""
        return {}

    # -- the vector env --------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        # the games are deterministic: the seed is accepted and changes nothing
        self.episodes.reset()
        self._restart(np.ones(self.num_envs, bool))
        return self._observe(), {}

    #: whether ``step`` takes one action per frame (the ``frame_actions`` capability)
    frame_actions = False

    def step(self, actions):
        actions = np.asarray(actions)
        if self.frame_actions and actions.shape == (self.num_envs, self.frames_per_step):
            self.used("frame_actions")
            actions = actions[:, 0]  # the game reads its input once a step, on the step's first frame
        actions = actions.reshape(-1)
        if actions.shape != (self.num_envs,) or not np.issubdtype(actions.dtype, np.integer):
            raise ValueError(f"expected {self.num_envs} integer actions, got {actions.dtype}{actions.shape}")
        if ((actions < 0) | (actions >= self.single_action_space.n)).any():
            raise ValueError(f"actions {actions.tolist()} are outside Discrete({self.single_action_space.n})")
        reward, terminated, reason = self._rules(actions)
        self.episodes.add(reward)
        truncated = (self.t >= self._limits()) & ~terminated
        done = terminated | truncated
        self._after_step()
        info: dict[str, Any] = {}
        logged = []
        if done.any():
            info["final_obs"] = self._observe()
            info["_final_obs"] = done.copy()
        for i in np.flatnonzero(done):
            end = self.episodes.end(i, reason if terminated[i] else "time_limit", extras=self._extras(int(i)))
            logged.append([end.env_index, end.task, end.score, end.length_frames, end.end_reason])
        if done.any():
            self._restart(done)
        self._frames += self.num_envs * self.frames_per_step
        self._write({"frames": self.num_envs * self.frames_per_step, "actions": actions.tolist(), "ends": logged})
        if self._stop_at is not None:
            _TRAIN_FRAMES[self._stop_at] = _TRAIN_FRAMES.get(self._stop_at, 0) + self.num_envs * self.frames_per_step
            if _TRAIN_FRAMES[self._stop_at] >= self._stop_at and self._stop_at not in _STOPPED:
                _STOPPED.add(self._stop_at)
                signal.raise_signal(signal.SIGINT)
        return self._observe(), reward, terminated, truncated, info

    @property
    def t(self) -> np.ndarray:
        """Each sub-environment's steps into its episode (the games' clock)."""
        return self.episodes.steps

    @property
    def score(self) -> np.ndarray:
        """Each sub-environment's raw score so far in its episode."""
        return self.episodes.returns

    def pop_episode_ends(self) -> list[EpisodeEnd]:
        return self.episodes.pop()

    def used(self, capability: str) -> None:
        """Log the first use of ``capability`` through this env's emulators."""
        seen = self.__dict__.setdefault("_used", set())
        if capability not in seen:
            seen.add(capability)
            self._write({"capability": capability})

    def close(self, **kwargs) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None


class RunnerVectorEnv(KitVectorEnv):
    """``kit_pixels``' game: see the module docstring."""

    frames_per_step = 4
    frame_actions = True

    def __init__(self, tasks: Sequence[str], seed: int, mode: str = "train"):
        self.gaps = [int(t.split("-")[1]) for t in tasks]
        self.x = np.zeros(len(tasks), np.int64)
        self.stack = np.zeros((len(tasks), STACK, SIZE, SIZE), np.uint8)
        space = gym.spaces.Box(0, 255, (STACK, SIZE, SIZE), np.uint8)
        super().__init__(tasks, seed, mode, space, len(MOVES))

    def _limits(self) -> np.ndarray:
        return np.full(self.num_envs, TIME_LIMIT)

    def _walls(self, i: int) -> range:
        return range(self.gaps[i], TRACK, self.gaps[i])

    def _draw(self, i: int) -> None:
        """Push sub-environment ``i``'s current frame onto its stack; the oldest frame drops off."""
        self.stack[i, :-1] = self.stack[i, 1:]
        frame = self.stack[i, -1]
        frame[:] = 0
        for w in self._walls(i):
            frame[SIZE - 10 :, w * (SIZE - 1) // TRACK] = 128
        frame[20:60, int(self.x[i]) * (SIZE - 1) // TRACK] = 255
        frame[0, : int(self.t[i])] = 255  # a clock: no two frames of an episode are equal

    def _restart(self, which: np.ndarray) -> None:
        for i in np.flatnonzero(which):
            self.x[i] = self.t[i] = 0
            self.score[i] = 0.0
            self.stack[i] = 0
            self._draw(int(i))

    def move(self, i: int, action: int) -> tuple[float, bool]:
        """Sub-environment ``i``'s runner takes ``action``: (reward, completed)."""
        dx, jump = MOVES[int(action)]
        x = int(self.x[i])
        new_x = min(max(x + dx, 0), TRACK)
        if not jump and any(min(x, new_x) < w <= max(x, new_x) for w in self._walls(i)):
            new_x = x  # a wall: only a jump gets past it
        self.x[i] = new_x
        done = new_x >= TRACK
        return float(new_x - x) + (BONUS if done else 0.0), done

    def _rules(self, actions: np.ndarray):
        reward = np.array([self.move(i, a)[0] for i, a in enumerate(actions)])
        return reward, self.x >= TRACK, "completed"

    def emulators(self) -> RunnerEmulators:
        if "_emulators" not in self.__dict__:
            self._emulators = RunnerEmulators(self)
        return self._emulators

    def _after_step(self) -> None:
        for i in range(self.num_envs):
            self._draw(i)

    def _observe(self) -> np.ndarray:
        return self.stack.copy()

    def _extras(self, index: int) -> dict[str, Any]:
        return {"x": int(self.x[index])}


class RunnerEmulators(Emulators):
    """``kit_pixels``' emulator capabilities (module docstring), logged as they are first used."""

    capabilities = frozenset({"ram", "palette_screen", "clone_state", "frame_actions"})

    def __init__(self, env: RunnerVectorEnv):
        self.env = env
        self.num_envs = env.num_envs
        self.frames_per_step = env.frames_per_step

    def ram(self, i: int) -> np.ndarray:
        self.env.used("ram")
        ram = np.zeros(16, np.uint8)
        ram[:3] = (self.env.x[i], self.env.t[i], self.env.gaps[i])
        return ram

    def palette_screen(self, i: int) -> np.ndarray:
        self.env.used("palette_screen")
        frame = self.env.stack[i, -1]
        return np.select([frame == 255, frame == 128], [2, 1], 0).astype(np.uint8)

    def state_key(self, i: int) -> bytes:
        self.env.used("clone_state")
        return bytes([int(self.env.x[i]), int(self.env.t[i])])

    def _clone(self, i: int):
        env = self.env
        return int(env.x[i]), int(env.t[i]), float(env.score[i]), env.stack[i].copy()

    def _restore(self, i: int, state) -> None:
        self.env.used("clone_state")
        env = self.env
        env.x[i], env.t[i], env.score[i] = state[:3]
        env.stack[i] = state[3]

    def _simulate(self, i: int, action: int) -> tuple[float, bool]:
        env = self.env
        env.used("clone_state")
        reward, done = env.move(i, action)
        env.t[i] += 1
        env.score[i] += reward
        env._draw(i)
        return reward, done


class ChainVectorEnv(KitVectorEnv):
    """``kit_vector``'s game: see the module docstring."""

    frames_per_step = 2

    def __init__(self, tasks: Sequence[str], seed: int, mode: str = "train"):
        self.lengths = np.array([int(t.split("-")[1]) for t in tasks])
        self.advances = np.zeros(len(tasks), np.int64)
        self.last = np.zeros(len(tasks), np.int64)
        space = gym.spaces.Box(0.0, 1.0, (VECTOR_SIZE,), np.float32)
        super().__init__(tasks, seed, mode, space, 3)

    def _limits(self) -> np.ndarray:
        return self.lengths

    def _restart(self, which: np.ndarray) -> None:
        self.t[which] = 0
        self.score[which] = 0.0
        self.advances[which] = 0
        self.last[which] = 0

    def _rules(self, actions: np.ndarray):
        self.last = actions.astype(np.int64)
        self.advances += actions == 1
        reward = np.where(actions == 1, 1.0, np.where(actions == 0, WAIT_REWARD, 0.0))
        return reward, actions == 2, "game_over"

    def _observe(self) -> np.ndarray:
        obs = np.zeros((self.num_envs, VECTOR_SIZE), np.float32)
        obs[:, 0] = self.t / self.lengths
        obs[:, 1] = self.advances / self.lengths
        obs[np.arange(self.num_envs), 2 + self.last] = 1.0
        obs[:, 5] = 1.0
        return obs

    def _extras(self, index: int) -> dict[str, Any]:
        return {"advances": int(self.advances[index])}


class KitSuite(Suite):
    """What both kit suites share: tasks, the split, the protocol."""

    version = "1"
    default_num_envs = 2
    default_split = KIT_SPLIT
    task_score_rule = "mean raw score of the last 100 episodes"
    env_class: type[KitVectorEnv] = KitVectorEnv
    #: the suite's tasks: the first two are the split's train tasks, the last its test task
    task_names: tuple[str, ...] = ()

    def tasks(self) -> list[str]:
        return list(self.task_names)

    def protocol(self) -> dict[str, Any]:
        return {"version": self.version, "frames_per_step": self.frames_per_step}

    def check_task_available(self, task: str) -> None:
        if task not in self.task_names:
            raise did_you_mean(f"task of suite '{self.name}'", task, self.task_names)

    def make_env(self, tasks: Sequence[str], seed: int, *, mode: str = "train") -> KitVectorEnv:
        for task in tasks:
            self.check_task_available(task)
        return self.env_class(tasks, seed, mode)

    def splits(self) -> list[Split]:
        *train, test = self.task_names
        return [Split(self.name, KIT_SPLIT, tuple(train), (test,), description="2 train tasks, 1 test task")]


class PixelsSuite(KitSuite):
    name = PIXELS
    description = "agent kit: a scripted runner on 40x40 frames stacked 4, with named actions"
    budget_unit = "frames"
    frames_per_step = RunnerVectorEnv.frames_per_step
    default_budget = 4_000
    default_checkpoints = (2_000, 4_000)
    end_reasons = ("completed", "time_limit")
    episode_fields = ("x",)
    env_class = RunnerVectorEnv
    task_names = ("walls-3", "walls-4", "walls-5")

    def action_semantics(self) -> dict[str, int]:
        return dict(SEMANTICS)

    def capabilities(self) -> frozenset[str]:
        return RunnerEmulators.capabilities


class VectorSuite(KitSuite):
    name = VECTOR
    description = "agent kit: a scripted chain with flat float observations, no named actions"
    budget_unit = "timesteps"
    frames_per_step = ChainVectorEnv.frames_per_step
    default_budget = 1_000
    default_checkpoints = (500, 1_000)
    end_reasons = ("game_over", "time_limit")
    episode_fields = ("advances",)
    env_class = ChainVectorEnv
    task_names = ("chain-8", "chain-12", "chain-16")


SUITES = {suite.name: suite for suite in (PixelsSuite(), VectorSuite())}


@benchgen.hookimpl
def benchgen_suites():
    return list(SUITES.values())
