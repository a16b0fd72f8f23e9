"""The suite env: Procgen's own batched environment (``ProcgenGym3Env``) behind benchgen's vector
interface, with episodes recorded.

Each group of sub-environments that play the same game on the same levels is one
``ProcgenGym3Env`` (most runs: one group), stepped in C++ as a batch: ``act`` then ``observe``,
no Python loop over sub-environments. Procgen resets a finished episode itself and returns the
next episode's first frame, which is gymnasium's ``SAME_STEP`` autoreset; it does not return the
finished episode's last frame, so ``info["final_obs"]`` holds the new first frame, and every end
is reported as ``terminated`` (the package's ``done``, a time-out included, as openai's
``train-procgen`` PPO treats it), so no agent bootstraps from that frame.

**Levels.** A sub-environment draws each episode's level uniformly from a range of level seeds:
the protocol's training levels ``[start_level, start_level + num_levels)`` when its unit trains,
and the test levels ``[start_level + num_levels, 2^31 - 1)`` when it plays a test round (``mode``
"eval") or its task is ``GAME:test``. The two ranges cannot meet. Every recorded episode keeps its
level seed (``level_seed``), and an episode whose seed lies outside the range it was drawn from is
refused with an error instead of recorded, so a test score can never include a training level.

**Seeding.** ``reset(seed=s)`` builds the groups afresh with ``rand_seed`` drawn from
``SeedSequence([s, group])``: the package seeds each sub-environment's level generator from it,
so the same seed plays the same levels in the same order. Procgen cannot reset a running episode
any other way. An unseeded ``reset()`` builds them with a seed drawn from a generator seeded at the
last seeded reset, so a sequence of resets after one seed is reproducible too.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from benchgen.episodes import EpisodeBook
from benchgen.errors import UsageError
from benchgen.suite import EpisodeEnd, SuiteVectorEnv

from .games import ACTION_COMBOS, EXPLORATION_LEVEL_SEEDS, check_mode, timeout
from .protocols import ProcgenProtocol

#: one agent step is one game tick: Procgen has no frame skip
FRAMES_PER_STEP = 1
#: the end reasons recorded: the level completed, the episode's cap reached, any other end (the agent died)
COMPLETE, TIMEOUT, FAILED = "complete", "timeout", "failed"
END_REASONS = (COMPLETE, TIMEOUT, FAILED)
#: per-episode values recorded beside the score
EPISODE_FIELDS = ("level_seed", "test_level")
#: the suffix of a task that plays the test levels in training too (``coinrun:test``)
TEST_SUFFIX = ":test"
#: how to install the package (README, "Set up"); the wheel's metadata pins numpy<2, which benchgen's other
#: dependencies need, so the wheel and gym3 go in without their pins
INSTALL_COMMAND = 'pip install -e ".[procgen]" && pip install --no-deps procgen-mirror==0.10.7 gym3==0.3.3'
#: the frame Procgen renders for agents
FRAME_SHAPE = (64, 64, 3)


def procgen_env_class():
    """``procgen.env.ProcgenGym3Env``, or a one-line ``UsageError`` with the install command.

    The package's ``__init__`` registers gym ids through the legacy ``gym`` (whose step checks fail
    under numpy 2, and which, once installed, makes stable-baselines3 print gym's deprecation
    notice in every process). benchgen drives the gym3 env directly, so it loads ``procgen.env``
    under a bare package module instead of running that ``__init__``: the only code of the
    package's skipped is the gym registration."""
    loaded = sys.modules.get("procgen.env")
    if loaded is not None:
        return loaded.ProcgenGym3Env
    try:
        if "procgen" not in sys.modules:
            spec = importlib.util.find_spec("procgen")
            if spec is None or not spec.submodule_search_locations:
                raise ImportError("No module named 'procgen'")
            package = types.ModuleType("procgen")
            package.__path__ = list(spec.submodule_search_locations)
            package.__spec__ = spec
            sys.modules["procgen"] = package
        module = importlib.import_module("procgen.env")
    except ImportError as exc:
        raise UsageError(
            f"the procgen suite needs the procgen package ({exc}); install it: {INSTALL_COMMAND}"
        ) from None
    return module.ProcgenGym3Env


def split_task(task: str) -> tuple[str, bool]:
    """``(game, test)`` of a task name: ``coinrun`` -> ("coinrun", False), ``coinrun:test`` -> ("coinrun", True)."""
    if task.endswith(TEST_SUFFIX):
        return task[: -len(TEST_SUFFIX)], True
    return task, False


@dataclass(frozen=True)
class LevelRange:
    """The level seeds ``[low, high)`` a group of sub-environments draws from."""

    low: int
    high: int
    test: bool
    """whether these are the protocol's test levels"""

    def options(self) -> dict[str, int]:
        """``start_level`` and ``num_levels`` for ``ProcgenGym3Env``."""
        return {"start_level": self.low, "num_levels": self.high - self.low}


def level_range(protocol: ProcgenProtocol, game: str, test: bool) -> LevelRange:
    """The levels a sub-environment of ``game`` plays: test or training levels (module docstring)."""
    if protocol.distribution_mode == "exploration":
        seed = EXPLORATION_LEVEL_SEEDS[game]
        return LevelRange(seed, seed + 1, False)
    if test:
        if protocol.test_levels is None:
            raise UsageError(
                f"protocol {protocol.name} holds out no test levels (num_levels {protocol.num_levels}); "
                "play test levels under a protocol with num_levels above 0"
            )
        return LevelRange(*protocol.test_levels, True)
    return LevelRange(*protocol.train_levels, False)


def gym3_options(protocol: ProcgenProtocol) -> dict[str, Any]:
    """The protocol's environment options as ``ProcgenGym3Env`` takes them (levels aside)."""
    p = protocol
    return {
        "use_backgrounds": p.use_backgrounds,
        "restrict_themes": p.restrict_themes,
        "use_monochrome_assets": p.use_monochrome_assets,
        "center_agent": p.center_agent,
        "paint_vel_info": p.paint_vel_info,
        "use_generated_assets": p.use_generated_assets,
        "use_sequential_levels": p.use_sequential_levels,
        # exploration mode is hard mode on one level (procgen/env.py), which level_range gives
        "distribution_mode": "hard" if p.distribution_mode == "exploration" else p.distribution_mode,
    }


def group_seed(seed: int, group: int) -> int:
    """``rand_seed`` of group ``group`` of an env reset with ``seed`` (module docstring, "Seeding")."""
    return int(np.random.SeedSequence([int(seed) % 2**63, group]).generate_state(1)[0]) % 2**31


class ProcgenVectorEnv(SuiteVectorEnv):
    """Sub-environment ``i`` plays ``tasks[i]``; see the module docstring."""

    frames_per_step = FRAMES_PER_STEP

    def __init__(self, tasks: Sequence[str], seed: int, protocol: ProcgenProtocol, *, mode: str = "train"):
        self.tasks = list(tasks)
        self.num_envs = len(self.tasks)
        self.protocol = protocol
        self.mode = mode
        self._env_class = procgen_env_class()
        # one group per (game, levels): the sub-environments' indices, in order
        groups: dict[tuple[str, LevelRange], list[int]] = {}
        for i, task in enumerate(self.tasks):
            game, test_task = split_task(task)
            check_mode(game, protocol.distribution_mode)
            levels = level_range(protocol, game, test_task or mode == "eval")
            groups.setdefault((game, levels), []).append(i)
        self._groups = [(game, levels, np.array(index)) for (game, levels), index in groups.items()]
        self._timeouts = np.array([timeout(split_task(t)[0], protocol.distribution_mode) for t in self.tasks])
        self._envs: list[Any] = []
        self.single_observation_space = gym.spaces.Box(0, 255, FRAME_SHAPE, np.uint8)
        self.single_action_space = gym.spaces.Discrete(len(ACTION_COMBOS))
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, self.num_envs)
        self.metadata = {"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}
        self._first_seed: int | None = seed
        #: draws the seeds of unseeded resets (see ``reset``)
        self._reseed = np.random.default_rng(int(seed) % 2**63)
        self._obs = np.zeros((self.num_envs, *FRAME_SHAPE), dtype=np.uint8)
        self.episodes = EpisodeBook(self.tasks, FRAMES_PER_STEP)

    def _build(self, seed: int) -> None:
        """The groups' ``ProcgenGym3Env`` objects, seeded from ``seed`` (module docstring)."""
        options = gym3_options(self.protocol)
        self.close_extras()
        for g, (game, levels, index) in enumerate(self._groups):
            # num_threads 0: the package steps its games in this thread (benchgen gives a run one core per process)
            env = self._env_class(
                num=len(index),
                env_name=game,
                rand_seed=group_seed(seed, g),
                num_threads=0,
                **options,
                **levels.options(),
            )
            self._envs.append(env)

    def _observe(self) -> tuple[np.ndarray, np.ndarray]:
        """Every group's reward (float32, as the package gives it) and first-frame flags; ``self._obs``
        then holds the frames, a fresh array.

        One group playing every sub-environment (most runs) hands on the arrays the package returns: gym3
        copies them out of its buffers on every ``observe`` (``reuse_arrays`` off), so they are the caller's
        and never written to again; several groups are gathered into a new array."""
        if len(self._envs) == 1:
            rew, ob, first = self._envs[0].observe()
            self._obs = ob["rgb"]
            return rew, np.asarray(first, dtype=bool)
        rewards = np.zeros(self.num_envs, dtype=np.float32)
        first = np.zeros(self.num_envs, dtype=bool)
        obs = np.empty((self.num_envs, *FRAME_SHAPE), dtype=np.uint8)
        for env, (_, _, index) in zip(self._envs, self._groups):
            rew, ob, fst = env.observe()
            rewards[index], first[index] = rew, fst
            obs[index] = ob["rgb"]
        self._obs = obs
        return rewards, first

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        if seed is None and self._first_seed is not None:
            seed = self._first_seed
        if seed is None:
            # an unseeded reset continues from the last seeded one (gymnasium's rule), reproducibly
            seed = int(self._reseed.integers(2**31))
        else:
            self._reseed = np.random.default_rng(int(seed) % 2**63)
        self._first_seed = None
        self._build(seed)
        self._observe()
        self.episodes.reset()  # a reset abandons the running episodes: they never finished
        return self._obs.copy(), {}

    def step(self, actions):
        actions = np.asarray(actions)
        if len(self._envs) == 1:
            self._envs[0].act(actions)  # the package casts to its int32
        else:
            for env, (_, _, index) in zip(self._envs, self._groups):
                env.act(actions[index])
        rewards, done = self._observe()  # fresh arrays each step: what is handed out is never written to here
        self.episodes.add(rewards)
        obs = self._obs
        info: dict[str, Any] = {}
        if done.any():
            # the package gives no last frame (module docstring): the finished ones' rows hold the new first
            # frame, the others zeros (np.zeros maps zero pages: only the rows written are touched)
            final = np.zeros(obs.shape, obs.dtype)
            final[done] = obs[done]
            info["final_obs"] = final
            self._record_ends(done)
        truncated = np.zeros(self.num_envs, dtype=bool)
        return obs, rewards, done, truncated, info

    def _record_ends(self, done: np.ndarray) -> None:
        """One ``EpisodeEnd`` per finished episode, with its level seed and why it ended."""
        for env, (game, levels, index) in zip(self._envs, self._groups):
            ended = np.flatnonzero(done[index])
            if not ended.size:
                continue
            infos = env.get_info()
            for j in ended:
                i = int(index[j])
                level = int(infos[j]["prev_level_seed"])
                if not levels.low <= level < levels.high:
                    raise RuntimeError(
                        f"procgen played level {level} of {game} outside the levels [{levels.low}, {levels.high}) it "
                        "was built with; the episode is not recorded"
                    )
                if infos[j]["prev_level_complete"]:
                    reason = COMPLETE
                elif self.episodes.steps[i] >= self._timeouts[i]:
                    reason = TIMEOUT
                else:
                    reason = FAILED
                self.episodes.end(i, reason, extras={"level_seed": level, "test_level": int(levels.test)})

    def pop_episode_ends(self) -> list[EpisodeEnd]:
        return self.episodes.pop()

    def screens(self) -> np.ndarray:
        """The frames as they are now, full resolution (Procgen renders agents 64x64)."""
        return self._obs.copy()

    def close_extras(self, **kwargs: Any) -> None:
        for env in self._envs:
            close = getattr(env, "close", None)
            if close is not None:
                close()
        self._envs = []
