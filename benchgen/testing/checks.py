"""The conformance checks, as plain functions (no pytest needed).

Each ``check_*`` function raises :class:`ConformanceError` (an ``AssertionError``) with a message
that names the suite, says what is wrong and how to fix it. :class:`SuiteConformance
<benchgen.testing.conformance.SuiteConformance>` runs them as pytest tests; :data:`CHECKS` lists
them for the plugin author guide.

Environments are driven with uniformly random actions from a seeded generator, for a few dozen
steps (``check_steps``) or until an episode ends (``max_episode_steps``), so the whole kit runs in
seconds on a scripted suite and in well under a minute on an emulator.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import math
import os
import re
import tempfile
import warnings
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from benchgen.errors import PluginError, UsageError
from benchgen.registry import EXTRA_PLUGINS_ENV, Registry
from benchgen.scoring import INFINITE_CAP
from benchgen.suite import EpisodeEnd, Suite

#: what every check guarantees, in the order the guide lists them: (test name, what it checks)
CHECKS: tuple[tuple[str, str], ...] = (
    (
        "test_suite_attributes",
        "the suite's name is CLI-friendly; `budget_unit` is frames or timesteps; budgets, "
        "checkpoints and `default_num_envs` are positive and consistent; `end_reasons` is declared; "
        "`episode_fields` are identifiers that do not clash with the core's columns; `tasks()` is a "
        "stable, non-empty list of unique names without commas or spaces; `default_split` exists.",
    ),
    (
        "test_protocol",
        "`protocol()` is a non-empty dict with snake_case keys, holds `version` equal to "
        "`Suite.version`, is the same on every call, and survives a JSON round trip unchanged (what "
        "a run saves is what a later run compares against).",
    ),
    (
        "test_splits",
        "the suite has at least one split; every split names only existing tasks, has a non-empty "
        "train list, lists no task twice, and its train and test lists are disjoint.",
    ),
    (
        "test_unknown_names_give_the_standard_error",
        'an unknown suite, task or split name raises `UsageError` with "did you mean"; `benchgen '
        "run SUITE AGENT --tasks BAD` exits 2 with the one-line `benchgen: error: unknown task ...` "
        "and writes nothing.",
    ),
    (
        "test_vector_env_contract",
        "`make_env(tasks, seed)` with two sub-environments of one task: a `gymnasium.vector.VectorEnv` "
        "with `pop_episode_ends()`, `frames_per_step` equal to the suite's, `tasks` as asked, uint8 "
        "observations, a `Discrete` action space, batched spaces that match, "
        "`metadata['autoreset_mode']` SAME_STEP; `reset` and `step` return arrays of the right shape "
        "and dtype (rewards finite floats, terminated/truncated bool); `info` never holds a forbidden "
        "key (`lives`, `ram`), also not inside `final_info`.",
    ),
    (
        "test_joint_env",
        "the same contract with sub-environments playing different tasks (a joint run), and the "
        "same observation and action spaces for every task.",
    ),
    (
        "test_gymnasium_env_checker",
        "for every task (or `env_check_tasks`): `gymnasium.utils.env_checker.check_env` passes on the "
        "single-task view of the vector env (`SingleTaskEnv`: sub-environment 0, `final_obs` at an "
        "episode's end), with no warning from gymnasium, plus on any single env the test class "
        "returns from `single_envs(task)`.",
    ),
    (
        "test_episode_ends",
        "random play on `episode_tasks` finishes an episode within `max_episode_steps`; after every "
        "step `pop_episode_ends()` returns exactly one `EpisodeEnd` per finished sub-environment, "
        "with the right `env_index` and `task`, a raw score that is a number (equal to the sum of the "
        "episode's rewards unless `score_is_reward_sum = False`), `0 < length_frames <= steps * "
        "frames_per_step`, an `end_reason` from `end_reasons`, `extras` keys equal to "
        "`episode_fields`; and `info['final_obs']` holds the last observation of each finished "
        "sub-environment.",
    ),
    (
        "test_seeding_is_reproducible",
        "two envs made with the same seed and reset with the same seed give identical observations, "
        "rewards, ends and `EpisodeEnd`s under the same actions; `reset(seed=s)` on a used env "
        "replays the same trajectory; and the seed given to `make_env` alone (unseeded `reset()`) "
        "makes runs reproducible.",
    ),
    (
        "test_scorer",
        "random and reference tables name only existing tasks; `task_score` gives NaN for no "
        "episodes and inf when an episode was infinite. A suite with random scores (normalized "
        "scoring): the default baseline resolves; normalization maps the random score to 0 and the "
        "reference to 1; an infinite raw score stays infinite, counts as 200% in the capped mean and "
        "as superhuman; tasks missing from the input are simply absent, tasks without a random or "
        "reference score are reported raw under `unnormalized` and left out of the aggregates. A "
        "suite without random scores is scored raw: `score` must still accept any subset of tasks "
        "and infinite scores.",
    ),
    (
        "test_runs_end_to_end",
        "`benchgen run SUITE random` (in process, one task, a tiny budget) finishes, spends its budget, "
        "records valid episodes and writes its report.",
    ),
)

#: info keys an agent must never see (the protocols forbid life and RAM information)
FORBIDDEN_INFO_KEYS: tuple[str, ...] = ("lives", "ram")

#: per-episode columns the core stores itself; ``episode_fields`` must not reuse them
CORE_EPISODE_COLUMNS = frozenset(
    {
        "id",
        "unit_id",
        "phase",
        "seed",
        "task",
        "episode",
        "env_index",
        "frames_total",
        "length_frames",
        "score",
        "end_reason",
        "extras",
        "events",
    }
)


class ConformanceError(AssertionError):
    """A suite breaks the plugin contract; the message says how to fix it."""


def _fail(suite: Suite | str, message: str) -> ConformanceError:
    name = suite if isinstance(suite, str) else suite.name
    return ConformanceError(f"suite '{name}': {message}")


# -- registries --------------------------------------------------------------------------------
def build_registry(plugins: Any = None, include_agents: bool = True) -> Registry:
    """A registry for the plugin under test.

    ``plugins`` is a plugin module (or object with ``@benchgen.hookimpl`` functions), a list of
    them, or None for the installed plugins (entry points plus ``BENCHGEN_PLUGINS``). Hand-given
    plugins are registered alone (``BENCHGEN_PLUGINS`` is ignored while building it), plus the
    first-party agents (``benchgen_agents``, part of the ``benchgen`` distribution) unless
    ``include_agents`` is false, so the ``random`` agent can run on the suite.
    """
    if plugins is None:
        return Registry()
    if not isinstance(plugins, (list, tuple)):
        plugins = [plugins]
    named = [(getattr(p, "__name__", None) or repr(p), p) for p in plugins]
    if include_agents and not any(name == "benchgen_agents" for name, _ in named):
        try:
            import benchgen_agents
        except ImportError:  # pragma: no cover - benchgen ships it
            pass
        else:
            named.append(("benchgen_agents", benchgen_agents))
    saved = os.environ.pop(EXTRA_PLUGINS_ENV, None)
    try:
        return Registry(plugins=named, autoload=False)
    finally:
        if saved is not None:
            os.environ[EXTRA_PLUGINS_ENV] = saved


@contextlib.contextmanager
def use_registry(registry: Registry) -> Iterator[Registry]:
    """Make ``registry`` the process-wide one (what the CLI and reports use) for a while."""
    from benchgen import registry as registry_module

    saved = registry_module._default
    registry_module._default = registry
    try:
        yield registry
    finally:
        registry_module._default = saved


# -- the suite object --------------------------------------------------------------------------
_NAME_RE = re.compile(r"[a-z0-9][a-z0-9_.-]*")
_KEY_RE = re.compile(r"[a-z][a-z0-9_]*")


def check_suite_attributes(suite: Suite, registry: Registry | None = None) -> None:
    """Class attributes and ``tasks()`` (see :data:`CHECKS`)."""
    if not isinstance(suite, Suite):
        raise _fail(str(getattr(suite, "name", suite)), "is not a benchgen.suite.Suite instance")
    if not isinstance(suite.name, str) or not _NAME_RE.fullmatch(suite.name):
        raise _fail(
            repr(suite.name),
            "the name must be lowercase letters, digits, '_', '.' or '-' (it is typed on the command line)",
        )
    if not suite.description:
        raise _fail(suite, "set `description` (one line, shown by `benchgen list`)")
    if suite.budget_unit not in ("frames", "timesteps"):
        raise _fail(suite, f"budget_unit is '{suite.budget_unit}'; use 'frames' or 'timesteps'")
    for attr in ("frames_per_step", "default_budget", "default_num_envs"):
        value = getattr(suite, attr)
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise _fail(suite, f"{attr} must be a positive integer, got {value!r}")
    cps = tuple(suite.default_checkpoints)
    if any(not isinstance(c, int) or c <= 0 or c > suite.default_budget for c in cps) or list(cps) != sorted(set(cps)):
        raise _fail(
            suite, f"default_checkpoints {cps} must be increasing positive integers no larger than default_budget"
        )
    if not suite.end_reasons or not all(isinstance(r, str) and r for r in suite.end_reasons):
        raise _fail(
            suite, "declare `end_reasons`, the words EpisodeEnd.end_reason may take (e.g. game_over, max_length)"
        )
    for f in suite.episode_fields:
        if not isinstance(f, str) or not f.isidentifier():
            raise _fail(suite, f"episode field {f!r} is not an identifier (it becomes a column)")
        if f in CORE_EPISODE_COLUMNS:
            raise _fail(suite, f"episode field '{f}' clashes with a column the core stores; rename it")
    tasks = suite.tasks()
    if not isinstance(tasks, list) or not tasks:
        raise _fail(suite, "tasks() must return a non-empty list of task names")
    if len(set(tasks)) != len(tasks):
        dups = sorted({t for t in tasks if tasks.count(t) > 1})
        raise _fail(suite, f"tasks() lists {dups[:5]} more than once")
    for t in tasks:
        if not isinstance(t, str) or not t or "," in t or any(c.isspace() for c in t):
            raise _fail(
                suite, f"task name {t!r} must be a non-empty string without commas or spaces (--tasks splits on commas)"
            )
    if suite.tasks() != tasks:
        raise _fail(suite, "tasks() returns a different list on a second call; make it deterministic")
    if suite.default_split is not None and registry is not None:
        splits = _splits(registry, suite)
        if suite.default_split not in splits:
            raise _fail(suite, f"default_split '{suite.default_split}' is not one of its splits {sorted(splits)}")


def check_protocol(suite: Suite) -> None:
    """``protocol()``: see :data:`CHECKS`."""
    proto = suite.protocol()
    if not isinstance(proto, dict) or not proto:
        raise _fail(suite, "protocol() must return a non-empty dict of the parameters that make runs comparable")
    for key in proto:
        if not isinstance(key, str) or not _KEY_RE.fullmatch(key):
            raise _fail(suite, f"protocol key {key!r} must be snake_case (e.g. 'sticky_action_probability')")
    if "version" not in proto:
        raise _fail(suite, "protocol() must include 'version' (Suite.version), bumped whenever the protocol changes")
    if str(proto["version"]) != str(suite.version):
        raise _fail(suite, f"protocol()['version'] is {proto['version']!r} but Suite.version is {suite.version!r}")
    if suite.protocol() != proto:
        raise _fail(suite, "protocol() differs between two calls; it must not depend on time or state")
    try:
        text = json.dumps(proto, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise _fail(suite, f"protocol() is not plain JSON ({exc}); use str, int, float, bool, None, lists and dicts")
    if json.loads(text) != proto:
        raise _fail(
            suite, "protocol() changes in a JSON round trip (tuples? non-str dict keys?); use lists and str keys"
        )


def _splits(registry: Registry, suite: Suite) -> dict:
    try:
        return registry.splits(suite)
    except PluginError as exc:
        raise _fail(suite, str(exc)) from None


def check_splits(registry: Registry, suite: Suite) -> None:
    """Splits: see :data:`CHECKS`."""
    splits = _splits(registry, suite)
    if not splits:
        raise _fail(
            suite,
            "no split is declared; ship a splits/NAME.yaml next to the suite's module (Suite.splits) "
            "or return a Split from benchgen_splits (joint agents and reports need one)",
        )
    known = set(suite.tasks())
    for name, split in splits.items():
        where = f"split '{name}'"
        if split.suite not in ("", suite.name):
            raise _fail(suite, f"{where} says it is for suite '{split.suite}'")
        if not split.name:
            raise _fail(suite, f"{where} has an empty name")
        if not split.train:
            raise _fail(suite, f"{where} has no train tasks")
        for part in ("train", "test"):
            items = list(getattr(split, part))
            if len(set(items)) != len(items):
                raise _fail(suite, f"{where} lists a {part} task twice")
            unknown = [t for t in items if t not in known]
            if unknown:
                raise _fail(suite, f"{where} names unknown {part} tasks {unknown[:5]}")
        overlap = set(split.train) & set(split.test)
        if overlap:
            raise _fail(suite, f"{where} has {sorted(overlap)[:5]} in both train and test; a split must be disjoint")


def check_bad_names(registry: Registry, suite: Suite, agent: str | None = "random") -> None:
    """Unknown names: see :data:`CHECKS`."""
    task = suite.tasks()[0]
    cases = [
        (lambda: registry.suite(suite.name + "x"), ["unknown suite", f"did you mean '{suite.name}'"]),
        (
            lambda: registry.check_tasks(suite, [task + "x"]),
            [f"unknown task of suite '{suite.name}' '{task}x'", "did you mean '"],
        ),
        (
            lambda: registry.split(suite, "no_such_split_zz"),
            [f"unknown split of suite '{suite.name}' 'no_such_split_zz'"],
        ),
    ]
    for call, fragments in cases:
        try:
            call()
        except UsageError as exc:
            msg = str(exc)
            if "\n" in msg or not all(f in msg for f in fragments):
                raise _fail(suite, f"expected a one-line error containing {fragments}, got {msg!r}")
        else:
            raise _fail(suite, f"an unknown name was accepted (expected an error containing {fragments})")
    if agent is None or agent not in registry.agents:
        return
    from benchgen.cli import main

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        err = io.StringIO()
        with use_registry(registry), contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(["run", suite.name, agent, "--tasks", task + "x", "--out", str(out), "--no-progress"])
        lines = [line for line in err.getvalue().splitlines() if line.strip()]
        if code != 2 or len(lines) != 1 or not lines[0].startswith("benchgen: error: unknown task"):
            raise _fail(
                suite,
                f"`benchgen run {suite.name} {agent} --tasks {task}x` should exit 2 with one line "
                f"'benchgen: error: unknown task ...', got exit {code} and {err.getvalue()!r}",
            )
        if out.exists():
            raise _fail(suite, "a run with an unknown task wrote a run directory")


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


# -- scoring -----------------------------------------------------------------------------------
def check_scorer(registry: Registry, suite: Suite) -> None:
    """The scorer (see :data:`CHECKS`)."""
    scorer = registry.scorer(suite)
    known = set(suite.tasks())
    stale = [t for t in scorer.random_scores if t not in known]
    if stale:
        raise _fail(suite, f"the scorer's random scores name unknown tasks {stale[:5]}")
    tables = {**scorer.references, **registry.reference_scores(suite)}
    for name, table in tables.items():
        stale = [t for t in table.scores if t not in known]
        for by in table.by_checkpoint.values():
            stale += [t for t in by if t not in known]
        if stale:
            raise _fail(suite, f"reference table '{name}' names unknown tasks {stale[:5]}")

    # task_score: no episodes -> NaN, an infinite episode -> inf, finite episodes -> finite
    if not math.isnan(scorer.task_score([])):
        raise _fail(suite, "Scorer.task_score([]) must be NaN (a task without finished episodes has no score)")
    if scorer.task_score([1.0, math.inf, 2.0]) != math.inf:
        raise _fail(suite, "Scorer.task_score must be inf when an episode reached infinite gameplay")
    if not math.isfinite(scorer.task_score([1.0, 2.0, 3.0])):
        raise _fail(suite, "Scorer.task_score of finite episodes must be finite")

    task0 = suite.tasks()[0]

    def score(raw):
        try:
            out = scorer.score(raw)
        except Exception as exc:  # noqa: BLE001 - reported with the input that broke it
            raise _fail(suite, f"Scorer.score({raw}) raised {type(exc).__name__}: {exc}") from None
        if not isinstance(out, dict):
            raise _fail(suite, f"Scorer.score must return a dict, got {type(out).__name__}")
        return out

    if not scorer.random_scores:
        if registry.declared_scorer(suite) is None:
            return  # no scorer of the suite's or a plugin's: the core's fallback scores it
        # Scored raw (no per-task normalization, like Sonic): subsets and infinities must not break it.
        score({task0: 1.0})
        score({task0: math.inf})
        return
    try:
        ref = scorer.reference(None)
    except UsageError as exc:
        raise _fail(
            suite, f"the scorer's default baseline '{scorer.default_baseline}' does not resolve: {exc}"
        ) from None
    normalizable = [
        t
        for t in suite.tasks()
        if t in scorer.random_scores
        and t in ref.scores
        and math.isfinite(ref.scores[t])
        and math.isfinite(scorer.random_scores[t])
        and ref.scores[t] != scorer.random_scores[t]
    ]
    if not normalizable:
        raise _fail(
            suite, f"no task has both a random score and a '{ref.name}' score; the scorer can normalize nothing"
        )
    task = normalizable[0]
    r, w = scorer.random_scores[task], ref.scores[task]
    out = score({task: r})
    if abs(out["per_task"][task]) > 1e-9:
        raise _fail(suite, f"the random score of '{task}' normalizes to {out['per_task'][task]}, expected 0")
    out = score({task: w})
    if abs(out["per_task"][task] - 1.0) > 1e-9:
        raise _fail(suite, f"the '{ref.name}' score of '{task}' normalizes to {out['per_task'][task]}, expected 1")
    out = score({task: math.inf})
    if out["per_task"].get(task) != math.inf or out["mean"] != INFINITE_CAP or out["classes"].get("superhuman") != 1:
        raise _fail(
            suite,
            f"an infinite score of '{task}' must stay inf, count {INFINITE_CAP:.0%} in the mean and as "
            f"superhuman; got {out['per_task'].get(task)}, mean {out['mean']}, classes {out['classes']}",
        )
    out = score({})
    if out["n_tasks"] != 0:
        raise _fail(suite, "scoring no tasks must aggregate over no tasks")
    raw = {task: r}
    missing = [t for t in suite.tasks() if t not in normalizable]
    if missing:
        raw[missing[0]] = 1.0
    out = score(raw)
    if out["n_tasks"] != 1 or task not in out["per_task"]:
        raise _fail(
            suite, f"scoring a subset of tasks must aggregate over exactly those that normalize; got {out['n_tasks']}"
        )
    if missing and (missing[0] in out["per_task"] or out["unnormalized"].get(missing[0]) != 1.0):
        raise _fail(
            suite,
            f"task '{missing[0]}' has no random or reference score: it must be reported raw under "
            "'unnormalized' and left out of the aggregates",
        )


# -- a whole run -------------------------------------------------------------------------------
def check_smoke_run(
    registry: Registry,
    suite: Suite,
    task: str,
    run_dir: Path,
    agent: str = "random",
    budget: int | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """Run ``agent`` on ``task`` in this process with a tiny budget (default: 200 agent steps in
    the suite's unit); check the store and the report. Returns the run's report summary dict."""
    from benchgen.config import RunConfig
    from benchgen.results.report import write_report
    from benchgen.run.local import run_in_process
    from benchgen.run.plan import create_run, resolve

    if budget is None:
        budget = 200 * (suite.frames_per_step if suite.budget_unit == "frames" else 1)
    run = RunConfig(suite=suite.name, agent=agent, tasks=[task], seeds=[seed], budget=budget, progress=False)
    with use_registry(registry):
        resolved = resolve(registry, run, {})
        rundir = create_run(registry, resolved, run_dir)
        run_in_process(rundir, resolved, None)
        write_report(run_dir)
    store = rundir.store(readonly=True)
    try:
        units = store.units()
        episodes = list(store.episodes())
    finally:
        store.close()
    budget_frames = suite.to_frames(budget)
    for unit in units:
        if unit.status != "done" or unit.frames_done < budget_frames:
            raise _fail(
                suite, f"unit {unit.unit_id} ended {unit.status} after {unit.frames_done} of {budget_frames} frames"
            )
    for ep in episodes:
        if ep["task"] != task or ep["end_reason"] not in suite.end_reasons:
            raise _fail(
                suite, f"recorded episode {ep} does not belong to task '{task}' or has an undeclared end reason"
            )
    if not (run_dir / "report" / "report.md").is_file():
        raise _fail(suite, "the run wrote no report")
    return {"units": len(units), "episodes": len(episodes)}
