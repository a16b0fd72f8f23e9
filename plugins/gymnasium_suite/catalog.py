"""Which registered Gymnasium environments are tasks here, and what the registry says about each.

The candidates are the ids gymnasium registers itself (entry points in ``gymnasium.envs``):
classic control, toy text, Box2D, MuJoCo and, where jax is installed, the functional jax envs.
Ids other packages register are left to the suites made for them: ale-py's Atari games (which
``atari_saber`` runs under the SABER protocol), MinAtar's, benchgen's own ``benchgen/`` ids. That
also keeps the task list the same whatever the process imported before.

A candidate is a task when this machine can make it (its dependencies are installed: Box2D and
MuJoCo are optional extras of gymnasium), its action space is ``Discrete`` starting at 0 (what
benchgen's agents act in) and its observations have a codec (:mod:`benchgen_gymnasium.observations`).
Whether an environment makes, and its spaces, are only known by making it: the probe makes each
candidate once per process, with gymnasium's warnings silenced, and keeps the answer. Measured on
gymnasium 1.4 without the optional extras, the 44 candidates take about 40 ms together (an env
whose dependency is missing fails at import, in well under a millisecond).
"""

from __future__ import annotations

import functools
import json
import warnings
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import EnvSpec, parse_env_id

from .observations import ObservationCodec, codec_for

#: entry points of the environments gymnasium itself registers
OWN_ENTRY_POINTS = "gymnasium.envs."


@dataclass(frozen=True)
class Task:
    """A registered environment that runs here, with what its probe found."""

    spec: EnvSpec
    """The registry's entry."""
    codec: ObservationCodec
    """How its observations travel (:mod:`benchgen_gymnasium.observations`)."""
    action_space: gym.spaces.Discrete
    """Its action space."""

    @property
    def group(self) -> str:
        """The gymnasium package it comes from: ``classic_control``, ``toy_text``, ``box2d``..."""
        return str(self.spec.entry_point).removeprefix(OWN_ENTRY_POINTS).split(".")[0].split(":")[0]


def candidates() -> list[EnvSpec]:
    """The registry's entries of gymnasium's own environments, in registration order."""
    return [
        spec
        for spec in gym.registry.values()
        if isinstance(spec.entry_point, str) and spec.entry_point.startswith(OWN_ENTRY_POINTS)
    ]


def probe(spec: EnvSpec) -> Task | None:
    """Make the environment once: a :class:`Task` if it runs here with discrete actions and
    observations the suite can carry, else None."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            env = gym.make(spec.id, disable_env_checker=True)
        except Exception:  # noqa: BLE001 - any failure to make (a missing extra, a broken build) means "not here"
            return None
        try:
            action_space, observation_space = env.action_space, env.observation_space
        finally:
            env.close()
    if not isinstance(action_space, gym.spaces.Discrete) or int(action_space.start) != 0:
        return None
    codec = codec_for(observation_space)
    return None if codec is None else Task(spec, codec, action_space)


@functools.cache
def runnable() -> dict[str, Task]:
    """Id -> :class:`Task` for every candidate that runs here (probed once per process)."""
    found = {}
    for spec in candidates():
        task = probe(spec)
        if task is not None:
            found[spec.id] = task
    return found


def newest_by_group() -> dict[str, list[str]]:
    """Group -> the runnable ids of that gymnasium package, only the newest version of each
    environment (``CartPole-v1``, not ``CartPole-v0``), in registration order."""
    newest: dict[tuple[str | None, str], Task] = {}
    for task in runnable().values():
        namespace, name, version = parse_env_id(task.spec.id)
        key = (namespace, name)
        held = newest.get(key)
        if held is None or (version or 0) > (held.spec.version or 0):
            newest[key] = task
    groups: dict[str, list[str]] = {}
    for task in runnable().values():
        namespace, name, _ = parse_env_id(task.spec.id)
        if newest[(namespace, name)] is task:
            groups.setdefault(task.group, []).append(task.spec.id)
    return groups


def plain(value: Any) -> Any:
    """``value`` as plain JSON (lists, str keys; anything else by its ``repr``), as run.json keeps it."""
    return json.loads(json.dumps(value, sort_keys=True, default=repr))


def spec_facts(task: Task) -> dict[str, Any]:
    """What of an environment's registration can change its scores: the protocol's entry for it."""
    spec = task.spec
    return {
        "entry_point": str(spec.entry_point),
        "spec_version": spec.version,
        "max_episode_steps": spec.max_episode_steps,
        "kwargs": plain(dict(spec.kwargs)),
        "observation": task.codec.kind,
    }
