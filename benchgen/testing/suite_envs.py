"""The suite kit's checks of a suite's vector env, driven as an agent drives it (see
:data:`benchgen.testing.checks.CHECKS`): the vector env contract, episode ends, seeding, and
gymnasium's own env checker on the single-task view.

Environments are driven with uniformly random actions from a seeded generator, for a few dozen
steps or until an episode ends."""

from __future__ import annotations

import hashlib
import json
import math
import warnings
from collections.abc import Iterable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from benchgen.errors import UsageError
from benchgen.suite import EpisodeEnd, Suite
from benchgen.testing.kit import ConformanceError
from benchgen.testing.kit import suite_failure as _fail

#: info keys an agent must never see (the protocols forbid life and RAM information)
FORBIDDEN_INFO_KEYS: tuple[str, ...] = ("lives", "ram")


# -- driving a vector env ----------------------------------------------------------------------
def _actions(space: gym.Space, rng: np.random.Generator, n: int) -> np.ndarray:
    return int(getattr(space, "start", 0)) + rng.integers(0, space.n, size=n)


def _end_key(end: EpisodeEnd) -> tuple:
    return (
        int(end.env_index),
        end.task,
        float(end.score),
        int(end.length_frames),
        end.end_reason,
        json.dumps(end.extras, sort_keys=True, default=str),
    )


def _forbidden(info: dict, keys: Sequence[str]) -> list[str]:
    found = []
    for k, v in info.items():
        if str(k).lstrip("_") in keys:
            found.append(str(k))
        if k == "final_info":
            subs = v if isinstance(v, (list, tuple, np.ndarray)) else [v]
            for sub in subs:
                if isinstance(sub, dict):
                    found += [f"final_info.{s}" for s in _forbidden(sub, keys)]
    return found


class _Driver:
    """Steps a suite env with seeded random actions, checking the contract at every step."""

    def __init__(
        self, suite: Suite, env: Any, tasks: Sequence[str], forbidden: Sequence[str], score_is_reward_sum: bool = True
    ):
        self.suite, self.env, self.tasks = suite, env, list(tasks)
        self.forbidden = tuple(forbidden)
        self.score_is_reward_sum = score_is_reward_sum
        self.n = len(self.tasks)
        self.returns = np.zeros(self.n)
        self.steps = np.zeros(self.n, dtype=int)
        self.ends: list[EpisodeEnd] = []

    def fail(self, message: str) -> ConformanceError:
        return _fail(self.suite, f"env for tasks {self.tasks}: {message}")

    def check_static(self) -> None:
        env, n = self.env, self.n
        if not isinstance(env, gym.vector.VectorEnv):
            raise self.fail(
                f"make_env returned {type(env).__name__}, not a gymnasium.vector.VectorEnv (subclass SuiteVectorEnv)"
            )
        if not callable(getattr(env, "pop_episode_ends", None)):
            raise self.fail("the env has no pop_episode_ends() (subclass benchgen.suite.SuiteVectorEnv)")
        if getattr(env, "frames_per_step", None) != self.suite.frames_per_step:
            raise self.fail(
                f"env.frames_per_step is {getattr(env, 'frames_per_step', None)}, the suite says {self.suite.frames_per_step}"
            )
        if env.num_envs != n:
            raise self.fail(f"num_envs is {env.num_envs}, expected one sub-environment per task ({n})")
        if list(getattr(env, "tasks", ())) != self.tasks:
            raise self.fail(f"env.tasks is {list(getattr(env, 'tasks', ()))}, expected {self.tasks}")
        obs_space, act_space = env.single_observation_space, env.single_action_space
        if not isinstance(obs_space, gym.spaces.Box) or obs_space.dtype != np.uint8:
            raise self.fail(f"single_observation_space must be a uint8 Box (pixels), got {obs_space}")
        if not isinstance(act_space, gym.spaces.Discrete):
            raise self.fail(f"single_action_space must be Discrete, got {act_space}")
        if (
            getattr(env.observation_space, "shape", None) != (n, *obs_space.shape)
            or env.observation_space.dtype != np.uint8
        ):
            raise self.fail(
                f"observation_space {env.observation_space} is not single_observation_space batched {n} times"
            )
        if getattr(env.action_space, "shape", None) != (n,):
            raise self.fail(f"action_space {env.action_space} is not single_action_space batched {n} times")
        mode = (getattr(env, "metadata", None) or {}).get("autoreset_mode")
        if mode not in (gym.vector.AutoresetMode.SAME_STEP, "SameStep", "same_step"):
            raise self.fail(f"metadata['autoreset_mode'] is {mode!r}; the contract is AutoresetMode.SAME_STEP")

    def check_obs(self, obs: Any, where: str) -> np.ndarray:
        space = self.env.single_observation_space
        obs = np.asarray(obs) if not isinstance(obs, np.ndarray) else obs
        if obs.dtype != np.uint8 or obs.shape != (self.n, *space.shape):
            raise self.fail(
                f"{where} returned observations {obs.dtype}{obs.shape}, expected uint8{(self.n, *space.shape)}"
            )
        return obs

    def check_info(self, info: Any, where: str) -> None:
        if not isinstance(info, dict):
            raise self.fail(f"{where} returned info of type {type(info).__name__}, expected a dict")
        bad = _forbidden(info, self.forbidden)
        if bad:
            raise self.fail(f"{where} info holds {bad}: agents must never see {list(self.forbidden)}; drop those keys")

    def reset(self, seed: int | None) -> np.ndarray:
        out = self.env.reset(seed=seed) if seed is not None else self.env.reset()
        if not isinstance(out, tuple) or len(out) != 2:
            raise self.fail("reset() must return (observations, info)")
        obs, info = out
        self.check_info(info, "reset()")
        self.returns[:] = 0
        self.steps[:] = 0
        self.env.pop_episode_ends()  # a reset abandons episodes: nothing to record
        return self.check_obs(obs, "reset()")

    def step(self, actions: np.ndarray) -> tuple:
        out = self.env.step(actions)
        if not isinstance(out, tuple) or len(out) != 5:
            raise self.fail("step() must return (observations, rewards, terminated, truncated, info)")
        obs, rew, term, trunc, info = out
        obs = self.check_obs(obs, "step()")
        rew, term, trunc = np.asarray(rew), np.asarray(term), np.asarray(trunc)
        if rew.shape != (self.n,) or rew.dtype.kind not in "fiu" or not np.isfinite(rew).all():
            raise self.fail(f"step() rewards must be {self.n} finite numbers, got {rew.dtype}{rew.shape}")
        for name, arr in (("terminated", term), ("truncated", trunc)):
            if arr.shape != (self.n,) or arr.dtype != np.bool_:
                raise self.fail(f"step() {name} must be a bool array of shape ({self.n},), got {arr.dtype}{arr.shape}")
        self.check_info(info, "step()")
        self.returns += rew
        self.steps += 1
        done = term | trunc
        if done.any():
            if "final_obs" not in info:
                raise self.fail("an episode ended but info has no 'final_obs' (SAME_STEP autoreset contract)")
            space = self.env.single_observation_space
            for i in np.flatnonzero(done):
                last = np.asarray(info["final_obs"][i])
                if last.shape != space.shape or last.dtype != np.uint8:
                    raise self.fail(f"info['final_obs'][{i}] is {last.dtype}{last.shape}, expected uint8{space.shape}")
        ends = self.env.pop_episode_ends()
        if not isinstance(ends, list) or not all(isinstance(e, EpisodeEnd) for e in ends):
            raise self.fail("pop_episode_ends() must return a list of benchgen.suite.EpisodeEnd")
        got = sorted(int(e.env_index) for e in ends)
        if got != sorted(int(i) for i in np.flatnonzero(done)):
            raise self.fail(
                f"after a step where sub-environments {list(np.flatnonzero(done))} finished, "
                f"pop_episode_ends() returned ends for {got}: record one EpisodeEnd per finished episode"
            )
        for end in ends:
            self.check_end(end)
        if self.env.pop_episode_ends():
            raise self.fail("pop_episode_ends() returned episodes a second time; it must forget what it returned")
        self.returns[done] = 0
        self.steps[done] = 0
        self.ends += ends
        return obs, rew, term, trunc, info, ends

    def check_end(self, end: EpisodeEnd) -> None:
        i = int(end.env_index)
        fps = self.suite.frames_per_step
        if end.task != self.tasks[i]:
            raise self.fail(f"EpisodeEnd of sub-environment {i} names task '{end.task}', it plays '{self.tasks[i]}'")
        if not isinstance(end.score, (int, float, np.integer, np.floating)) or math.isnan(end.score):
            raise self.fail(f"EpisodeEnd.score must be a number (inf allowed), got {end.score!r}")
        if self.score_is_reward_sum and not math.isinf(end.score):
            expected = float(self.returns[i])
            if abs(float(end.score) - expected) > 1e-6 * max(1.0, abs(expected)):
                raise self.fail(
                    f"EpisodeEnd.score {end.score} differs from the episode's summed rewards {expected}; "
                    "record the raw score (or set score_is_reward_sum = False if rewards are shaped)"
                )
        steps = int(self.steps[i])
        if not isinstance(end.length_frames, (int, np.integer)) or not (steps <= int(end.length_frames) <= steps * fps):
            raise self.fail(
                f"EpisodeEnd.length_frames {end.length_frames!r} after {steps} steps of {fps} frames; "
                "count emulator frames, skipped frames included"
            )
        if end.end_reason not in self.suite.end_reasons:
            raise self.fail(
                f"EpisodeEnd.end_reason '{end.end_reason}' is not in the suite's end_reasons {list(self.suite.end_reasons)}"
            )
        if set(end.extras) != set(self.suite.episode_fields):
            raise self.fail(
                f"EpisodeEnd.extras has keys {sorted(end.extras)}, the suite declares episode_fields "
                f"{list(self.suite.episode_fields)}"
            )

    def run(self, steps: int, rng: np.random.Generator, until_end: bool = False) -> list[tuple]:
        """Step ``steps`` times (or until the first episode ends); return a comparable trace."""
        trace = []
        for _ in range(steps):
            obs, rew, term, trunc, _info, ends = self.step(_actions(self.env.single_action_space, rng, self.n))
            trace.append(
                (
                    hashlib.sha1(obs.tobytes()).hexdigest(),
                    rew.tolist(),
                    term.tolist(),
                    trunc.tolist(),
                    [_end_key(e) for e in ends],
                )
            )
            if until_end and ends:
                break
        return trace


def _make(suite: Suite, tasks: Sequence[str], seed: int):
    try:
        return suite.make_env(list(tasks), seed)
    except UsageError as exc:
        raise _fail(suite, f"make_env({list(tasks)}) failed: {exc}") from None


def _drive(
    suite: Suite,
    tasks: Sequence[str],
    seed: int,
    steps: int,
    forbidden_info_keys: Sequence[str],
    score_is_reward_sum: bool,
    until_end: bool = False,
) -> _Driver:
    """Make the env, check its spaces, reset it and take up to ``steps`` random steps, checking
    every step against the contract; the env is closed after."""
    env = _make(suite, tasks, seed)
    try:
        driver = _Driver(suite, env, tasks, forbidden_info_keys, score_is_reward_sum)
        driver.check_static()
        driver.reset(seed)
        driver.run(steps, np.random.default_rng(seed), until_end=until_end)
    finally:
        env.close()
    return driver


def check_vector_env(
    suite: Suite,
    tasks: Sequence[str],
    seed: int = 0,
    steps: int = 32,
    forbidden_info_keys: Sequence[str] = FORBIDDEN_INFO_KEYS,
    score_is_reward_sum: bool = True,
) -> None:
    """The vector env contract on ``tasks`` (see :data:`CHECKS`)."""
    _drive(suite, tasks, seed, steps, forbidden_info_keys, score_is_reward_sum)


def check_episode_ends(
    suite: Suite,
    tasks: Sequence[str],
    seed: int = 0,
    max_steps: int = 5000,
    forbidden_info_keys: Sequence[str] = FORBIDDEN_INFO_KEYS,
    score_is_reward_sum: bool = True,
) -> list[EpisodeEnd]:
    """Play until an episode ends and check what is recorded (see :data:`CHECKS`)."""
    driver = _drive(suite, tasks, seed, max_steps, forbidden_info_keys, score_is_reward_sum, until_end=True)
    if not driver.ends:
        raise _fail(
            suite,
            f"no episode of {list(tasks)} ended within {max_steps} random steps; set `episode_tasks` "
            "to a task whose random episodes are short, or raise `max_episode_steps`",
        )
    return driver.ends


def check_reproducible(
    suite: Suite,
    tasks: Sequence[str],
    seed: int = 0,
    steps: int = 64,
    forbidden_info_keys: Sequence[str] = FORBIDDEN_INFO_KEYS,
) -> None:
    """Seeding (see :data:`CHECKS`)."""

    def trace(env, reset_seed, action_seed):
        d = _Driver(suite, env, tasks, forbidden_info_keys, score_is_reward_sum=False)
        first = d.reset(reset_seed)
        return [hashlib.sha1(first.tobytes()).hexdigest()] + d.run(steps, np.random.default_rng(action_seed))

    def first_difference(a, b):
        return next(i for i, (x, y) in enumerate(zip(a, b)) if x != y)

    a, b = _make(suite, tasks, seed), _make(suite, tasks, seed)
    try:
        ta, tb = trace(a, seed + 1, seed), trace(b, seed + 1, seed)
        if ta != tb:
            raise _fail(
                suite,
                f"two envs made and reset with the same seeds diverge at step {first_difference(ta, tb)}; "
                "seed every source of randomness from make_env's seed and reset(seed=...)",
            )
        again = trace(a, seed + 1, seed)
        if again != ta:
            raise _fail(
                suite,
                f"reset(seed=...) on a used env does not replay the trajectory (differs at step "
                f"{first_difference(again, ta)}); reseed every sub-environment in reset",
            )
    finally:
        a.close()
        b.close()
    c, d = _make(suite, tasks, seed), _make(suite, tasks, seed)
    try:
        tc, td = trace(c, None, seed), trace(d, None, seed)
        if tc != td:
            raise _fail(
                suite,
                f"two envs made with the same seed and reset() without a seed diverge at step "
                f"{first_difference(tc, td)}; make_env's seed must seed the environments",
            )
    finally:
        c.close()
        d.close()


# -- gymnasium's checker -----------------------------------------------------------------------
class SingleTaskEnv(gym.Env):
    """Sub-environment 0 of a suite's vector env, seen as a ``gymnasium.Env``.

    What gymnasium's ``check_env`` sees is exactly what an agent sees of one sub-environment:
    the spaces, ``reset``/``step`` results and seeding. When the episode ends, ``step`` returns
    ``info["final_obs"][0]`` (the episode's last observation) as a single env would; the next
    ``step`` continues in the already reset next episode.
    """

    metadata = {"render_modes": []}

    def __init__(self, vector_env: gym.vector.VectorEnv):
        self.vector_env = vector_env
        self.observation_space = vector_env.single_observation_space
        self.action_space = vector_env.single_action_space

    def _info(self, info: dict) -> dict:
        out = {}
        for k, v in info.items():
            if k.startswith("_") or k in ("final_obs", "final_info"):
                continue
            out[k] = np.array(v[0]) if isinstance(v, np.ndarray) and v.shape[:1] == (self.vector_env.num_envs,) else v
        return out

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        obs, info = self.vector_env.reset(seed=seed, options=options)
        self.vector_env.pop_episode_ends()
        return np.array(obs[0]), self._info(info)

    def step(self, action):
        obs, rew, term, trunc, info = self.vector_env.step(np.array([action]))
        self.vector_env.pop_episode_ends()
        single = np.array(info["final_obs"][0]) if (term[0] or trunc[0]) else np.array(obs[0])
        return single, float(rew[0]), bool(term[0]), bool(trunc[0]), self._info(info)

    def close(self):
        self.vector_env.close()


def check_gymnasium_env_checker(suite: Suite, task: str, seed: int = 0, extra_envs: Iterable[gym.Env] = ()) -> None:
    """gymnasium's ``check_env`` on the single-task view (and on ``extra_envs``, the suite's own
    single envs, which may be wrapped); any warning from the checker fails too."""
    from gymnasium.utils.env_checker import check_env

    envs = [(f"SingleTaskEnv({task})", SingleTaskEnv(_make(suite, [task], seed)), False)]
    envs += [(f"single env {i} for {task}", e, True) for i, e in enumerate(extra_envs)]
    for label, env, wrapped_ok in envs:
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    check_env(env, skip_render_check=True, skip_close_check=True)
                except (AssertionError, gym.error.Error, TypeError, AttributeError) as exc:
                    raise _fail(suite, f"gymnasium's env checker rejects {label}: {exc}") from None
            msgs = [
                str(w.message)
                for w in caught
                if not issubclass(w.category, (DeprecationWarning, PendingDeprecationWarning, ResourceWarning))
                and not (wrapped_ok and "different from the unwrapped version" in str(w.message))
            ]
            if msgs:
                raise _fail(suite, f"gymnasium's env checker warns about {label}: {msgs[0]}")
        finally:
            env.close()
