"""benchgen from your own training loop: a suite's environment as its protocol defines it, and a
recording of its episodes into a benchgen run directory that ``benchgen report``, ``export`` and
``compare`` read like any other run.

Make the environment, no recording (the suite env under the agent-side wrappers you ask for)::

    env = api.make_env("SUITE", "TASK", num_envs=2, seed=0)

(the Atari plugin's module docstring runs these examples on a real game as doctests).

Record your loop's episodes (the run directory is created, or continued if your script restarts)::

    with api.Recording("runs/mine", "SUITE", "TASK", agent="my-agent", budget=10_000_000,
                       config={"lr": 1e-4}) as rec:
        obs, _ = rec.env.reset(seed=rec.seed)
        while not rec.finished:
            obs, reward, terminated, truncated, info = rec.env.step(my_policy(obs))

Integrity: the loop gets the suite env only through the recorder and the suite's agent wrappers,
so it sees what the protocol lets agents see, and the scores recorded are the ones the suite's env
reports at episode ends (never a number the loop hands over). Crash safety: every finished episode
is committed with the frame counter as it ends; a killed loop loses only the episodes in progress,
and the same ``Recording`` call in a restarted script continues the run where it stopped (the
model's own checkpointing is the loop's business).

Every suite task is also a Gymnasium id (:func:`register_gymnasium_ids`, :func:`gymnasium_id`):
``gymnasium.make("benchgen/SUITE.TASK-vN")`` gives one protocol environment. In the id, the task's
``:`` (which ``gymnasium.make`` reads as "import this module first") becomes ``.`` and its ``-``
becomes ``_`` (so that a task's own version, ``CartPole-v1``, does not read as the id's); ``N`` is
the version of the suite's default protocol. The task itself stays in the id's registration
(:func:`gymnasium_task`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from benchgen import protocols
from benchgen.agent import AgentNeeds
from benchgen.errors import UsageError
from benchgen.run import lifecycle
from benchgen.run.execution.recorder import EpisodeRecorder
from benchgen.run.planning.plan import MAX_SEED
from benchgen.suite import Suite

#: the Gymnasium namespace of benchgen's tasks
GYM_NAMESPACE = "benchgen"


def _suite(name: str, protocol: str | None, needs: AgentNeeds | None = None) -> tuple[Suite, dict | None]:
    """The suite under ``protocol``; for ``needs`` with emulator capabilities, the suite whose envs
    offer them (a one-line ``UsageError`` if it cannot): read them with
    ``benchgen.capabilities.emulators_of(env)``."""
    from benchgen.capabilities import check_capabilities
    from benchgen.registry import get_registry

    choice = protocols.parse_choice(protocol)
    suite = protocols.apply_choice(get_registry().suite(name), choice)
    if needs is not None and needs.capabilities:
        check_capabilities("your training loop", needs.capabilities, suite)
        suite = suite.with_capabilities(needs.capabilities)
    return suite, choice


#: the modes a suite's envs are made in (``Suite.make_env``)
MODES = ("train", "eval")


def _whole(value: Any, name: str, least: int, most: int | None = None) -> int:
    """``value`` if it is a whole number (not a boolean, not a float, not a string) within
    ``[least, most]``; a one-line ``UsageError`` naming the argument otherwise."""
    if not isinstance(value, (int, np.integer)) or isinstance(value, (bool, np.bool_)):
        raise UsageError(f"{name} must be a whole number, not {value!r}")
    if value < least or (most is not None and value > most):
        bounds = f"at least {least}" if most is None else f"in [{least}, {most}]"
        raise UsageError(f"{name} must be {bounds}, not {value!r}")
    return int(value)


def _check_env_args(task: Any, num_envs: Any, seed: Any, mode: Any = "train") -> None:
    """The arguments :func:`make_env` and :class:`Recording` share, checked before anything is built."""
    if not isinstance(task, str) or not task:
        raise UsageError(f"task must be a task name (a string), not {task!r}")
    _whole(num_envs, "num_envs", 1)
    _whole(seed, "seed", 0, MAX_SEED)
    if mode not in MODES:
        raise UsageError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")


def make_env(
    suite: str,
    task: str,
    *,
    num_envs: int = 1,
    seed: int = 0,
    protocol: str | None = None,
    needs: AgentNeeds | None = None,
    mode: str = "train",
) -> gym.vector.VectorEnv:
    """``num_envs`` copies of ``task`` as the suite's protocol defines them (``protocol``: a preset
    or YAML file, as ``--protocol``), under the suite's agent wrappers for ``needs`` (None: the
    default :class:`~benchgen.agent.AgentNeeds`, pixels as the suite gives them and the benchmark
    reward). Episodes are not recorded: use :class:`Recording` for that."""
    _check_env_args(task, num_envs, seed, mode)
    suite_obj, _ = _suite(suite, protocol, needs)
    _check_task(suite_obj, task)
    env = suite_obj.make_env([task] * num_envs, seed=seed, mode=mode)
    return suite_obj.agent_wrappers(env, needs or AgentNeeds())


def _check_task(suite: Suite, task: str) -> None:
    from benchgen.registry import get_registry

    get_registry().check_tasks(suite, [task])
    suite.check_task_available(task)


def _json_config(config: Mapping[str, Any] | None) -> dict[str, Any]:
    """The loop's settings as ``run.json`` keeps them: strict JSON (a NaN or an infinity would be
    written as a bare ``NaN`` no JSON reader takes, an object not at all), as it reads back."""
    import json

    if config is None:
        return {}
    if not isinstance(config, Mapping):
        raise UsageError(f"config must be a mapping of settings, not {type(config).__name__}")
    try:
        return json.loads(json.dumps(dict(config), allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise UsageError(f"config must hold JSON values (finite numbers, strings, lists, mappings): {exc}") from None


class Recording:
    """Record one (task, seed) of your own loop into the run directory ``out``.

    Args:
        out: the run directory (created; or continued when it holds this same recording).
        suite, task, seed, protocol: what is played, as ``benchgen run`` takes them.
        agent: your agent's name, as reports and comparisons label it.
        budget: frames or timesteps (the suite's budget unit; default the protocol's).
        num_envs: sub-environments of ``env``.
        needs: the suite's agent-side wrappers to put on ``env`` (default: none beyond the suite's
            defaults; see :class:`~benchgen.agent.AgentNeeds`).
        config: your loop's settings (JSON-serializable), saved in ``run.json`` with the run.
    """

    def __init__(
        self,
        out: str | Path,
        suite: str,
        task: str,
        *,
        agent: str = "own_loop",
        seed: int = 0,
        budget: int | None = None,
        protocol: str | None = None,
        num_envs: int = 1,
        needs: AgentNeeds | None = None,
        config: Mapping[str, Any] | None = None,
    ):
        from benchgen.registry import get_registry

        _check_env_args(task, num_envs, seed)
        if budget is not None:
            _whole(budget, "budget", 1)
        config = _json_config(config)
        registry = get_registry()
        self.suite, choice = _suite(suite, protocol, needs)
        _check_task(self.suite, task)
        self.seed, self.task = seed, task
        self.run_dir = lifecycle.open_recording(
            registry,
            out,
            self.suite,
            choice,
            task=task,
            agent=agent,
            seed=seed,
            budget=budget,
            protocol=protocol,
            num_envs=num_envs,
            config=config,
        )
        self._lock = self.run_dir.lock()
        self._lock.__enter__()
        try:
            self.store = self.run_dir.store()
            self.unit = self.store.units()[0]
            self.store.update_unit(self.unit.unit_id, status="running", started_at=time.time())
            env_seed = seed * 1_000_003 + self.unit.frames_done  # a restarted loop plays fresh episodes
            suite_env = self.suite.make_env([task] * num_envs, seed=env_seed, mode="train")
            self.recorder = EpisodeRecorder(suite_env, self.store, self.unit, frames_done=self.unit.frames_done)
            #: the environment your loop steps: the suite env, recorded, under the agent wrappers
            self.env = self.suite.agent_wrappers(self.recorder, needs or AgentNeeds())
        except BaseException:
            self._lock.__exit__(None, None, None)
            raise

    @property
    def frames_done(self) -> int:
        """Emulator frames used so far, earlier runs of the script included."""
        return self.recorder.frames_done

    @property
    def budget_done(self) -> int:
        """The same in the suite's budget unit."""
        return self.suite.from_frames(self.recorder.frames_done)

    @property
    def finished(self) -> bool:
        """Whether the budget is used up."""
        return self.recorder.frames_done >= self.unit.budget_frames

    @property
    def episodes(self) -> int:
        """Episodes recorded so far."""
        return self.recorder.episodes_of(self.task)

    def recent_mean(self) -> float:
        """Mean raw score of the last 100 episodes recorded by this process."""
        return self.recorder.recent_mean()

    def close(self) -> None:
        """Close the env; the recording is marked done when its budget is used up."""
        try:
            self.env.close()
        finally:
            status = {"status": "done", "finished_at": time.time()} if self.finished else {"status": "running"}
            # the frames played since the last episode ended count too (as a unit's last checkpoint does)
            self.store.update_unit(self.unit.unit_id, frames_done=self.recorder.frames_done, **status)
            self.store.checkpoint_wal()
            self.store.close()
            self._lock.__exit__(None, None, None)

    def __enter__(self) -> Recording:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# -- Gymnasium ids -------------------------------------------------------------------------------


def gymnasium_id(suite: str, task: str, version: int | None = None) -> str:
    """The Gymnasium id of a suite's task: ``benchgen/SUITE.NAME-vN``, NAME the task with ``:``
    as ``.`` and ``-`` as ``_`` (module docstring), N ``version`` or the suite's default
    protocol's version."""
    if version is None:
        version = _protocol_version(suite)
    name = task.replace(":", ".").replace("-", "_")
    return f"{GYM_NAMESPACE}/{suite}.{name}-v{version}"


def gymnasium_task(env_id: str) -> tuple[str, str]:
    """(suite, task) of a registered benchgen Gymnasium id (``KeyError`` if it is not one)."""
    kwargs = gym.registry[env_id].kwargs
    return kwargs["suite"], kwargs["task"]


def _protocol_version(suite: str) -> int:
    """The version of ``suite``'s default protocol as a whole number (Gymnasium ids take digits;
    0 when the suite's is not one)."""
    from benchgen.registry import get_registry

    described = get_registry().suite(suite).protocol()
    version = str(described.get("protocol_version", described.get("version", "0")))
    return int(version) if version.isdigit() else 0


def register_gymnasium_ids(suites: Sequence[str] | None = None) -> list[str]:
    """Register every task of ``suites`` (default: every installed suite) with Gymnasium, under the
    ``benchgen`` namespace; returns the ids. ``gymnasium.make(id, seed=..., protocol=...)``."""
    from benchgen.registry import get_registry

    registry = get_registry()
    ids = []
    for name in suites or list(registry.suites):
        version = _protocol_version(name)
        for task in registry.suite(name).tasks():
            env_id = gymnasium_id(name, task, version)
            if env_id in gym.registry and gym.registry[env_id].kwargs.get("task") != task:
                raise UsageError(
                    f"tasks '{gym.registry[env_id].kwargs.get('task')}' and '{task}' of suite {name} map to the "
                    f"same Gymnasium id {env_id}; rename one of them"
                )
            if env_id not in gym.registry:
                gym.register(env_id, entry_point=SuiteTaskEnv, kwargs={"suite": name, "task": task})
            ids.append(env_id)
    return ids


class SuiteTaskEnv(gym.Env):
    """One sub-environment of a suite's env as a plain Gymnasium ``Env`` (no recording): an episode
    ends as the protocol ends it, and ``reset`` starts the next one."""

    def __init__(self, suite: str, task: str, seed: int = 0, protocol: str | None = None, render_mode=None):
        self._vec = make_env(suite, task, num_envs=1, seed=seed, protocol=protocol, mode="eval")
        self.observation_space = self._vec.single_observation_space
        self.action_space = self._vec.single_action_space
        self.render_mode = render_mode
        self._next_obs: np.ndarray | None = None  # the vector env's autoreset observation

    def reset(self, *, seed: int | None = None, options=None):
        super().reset(seed=seed)
        if self._next_obs is not None and seed is None:
            obs, self._next_obs = self._next_obs, None
            return obs, {}
        obs, _ = self._vec.reset(seed=seed)
        self._next_obs = None
        return obs[0], {}

    def step(self, action):
        obs, reward, terminated, truncated, info = self._vec.step(np.array([action]))
        if terminated[0] or truncated[0]:
            self._next_obs = obs[0]
            final = info.get("final_obs")
            obs = final if final is not None else obs
        return obs[0], float(reward[0]), bool(terminated[0]), bool(truncated[0]), {}

    def close(self):
        self._vec.close()
