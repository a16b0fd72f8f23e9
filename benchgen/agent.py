"""The agent protocol: small on purpose (learn / act / save / load).

A plugin contributes :class:`AgentSpec` objects through the ``benchgen_agents`` hook. The runner
creates the agent with its resolved config dataclass, the (wrapped, recorded) vector env and a
:class:`TrainingContext`, then calls ``learn``. The agent steps the env until
``ctx.finished``, calling ``ctx.maybe_checkpoint()`` once per vector step (cheap: it saves only
when a checkpoint boundary was crossed). The suite records every episode's raw score underneath
the agent; an agent never reports scores itself. An agent that steps the unit's environment
in other processes relays what the suite recorded there (sealed reports, see
:mod:`benchgen.remote` and :meth:`TrainingContext.remote_envs`).
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import gymnasium as gym

    from benchgen.remote import RemoteEnvFactory, RemoteEpisodes
    from benchgen.suite import EpisodeEnd


class TrainingContext(abc.ABC):
    """What an agent may ask the runner while it learns."""

    #: total agent steps (transitions, summed over sub-environments) this unit may use
    budget_steps: int
    #: the unit's seed (agents seed their own RNGs from it)
    seed: int
    #: the run unit's directory (agents may keep scratch files there)
    unit_dir: Path

    @property
    @abc.abstractmethod
    def steps_done(self) -> int:
        """Agent steps taken so far in this unit, restored on resume."""

    @property
    def reset_seed(self) -> int:
        """Seed for the agent's one ``env.reset``: the unit's seed on a fresh start, another one
        after each resume, so a resumed unit does not replay the episodes it began with."""
        return int(self.seed) + int(self.steps_done)

    @property
    def finished(self) -> bool:
        """True once the budget is spent (or a stop was requested): return from ``learn``."""
        return self.steps_done >= self.budget_steps

    @abc.abstractmethod
    def maybe_checkpoint(self) -> None:
        """Save the agent if a checkpoint boundary was crossed since the last call."""

    @abc.abstractmethod
    def log_scalar(self, tag: str, value: float) -> None:
        """Log a training statistic (TensorBoard), x-axis = frames."""

    # -- environments in other processes (distributed agents; see benchgen.remote) -------------
    def remote_envs(self) -> RemoteEnvFactory:
        """This unit's environment, to build in other processes or on other nodes: a picklable
        :class:`benchgen.remote.RemoteEnvFactory`; there, ``env, collector = factory(num_envs,
        seed, worker=i)`` gives the suite env under an episode collector under the suite's agent
        wrappers. Ship ``collector.report()`` back to :meth:`report_remote_episodes`."""
        raise NotImplementedError("this context cannot build the unit's environment elsewhere; run the agent "
                                  "with `benchgen run`")

    def report_remote_episodes(self, report: RemoteEpisodes) -> list[EpisodeEnd]:
        """Count the frames of a collector's report in this unit (``steps_done``, ``finished``)
        and record its finished episodes under the unit, numbered after those recorded before;
        returns them. Only reports sealed by a collector of this context's :meth:`remote_envs`
        are accepted, each once and in order (``RuntimeError`` otherwise, nothing recorded):
        an agent relays the suite's episode facts, it cannot state a score."""
        raise NotImplementedError("this context records no episodes played elsewhere; run the agent with "
                                  "`benchgen run`")

    def ray(self) -> Any:
        """The ``ray`` module, connected: to the cluster this unit already runs on (``--executor
        ray``), else to a local instance started for the unit (loopback only, stopped when the
        unit ends). A method of the context rather than a function to import, because where Ray
        runs, who may stop it and which plugin settings its workers need are the run engine's
        knowledge, and agents import contracts, not the engine (``docs/ARCHITECTURE.md``).
        ``UsageError`` (one line) when Ray is not installed."""
        raise NotImplementedError("this context offers no Ray connection; run the agent with `benchgen run`")


class Agent(abc.ABC):
    """A learning (or acting) agent."""

    def __init__(self, config: Any, observation_space: "gym.Space", action_space: "gym.Space"):
        self.config = config
        self.observation_space = observation_space
        self.action_space = action_space

    @abc.abstractmethod
    def learn(self, env: "gym.vector.VectorEnv", ctx: TrainingContext) -> None:
        """Interact with ``env`` (and learn) until ``ctx.finished``."""

    @abc.abstractmethod
    def act(self, observations: np.ndarray, greedy: bool = True) -> np.ndarray:
        """Batch of actions for a batch of observations, without learning (zero-shot/eval)."""

    @abc.abstractmethod
    def save(self, directory: Path) -> None:
        """Write everything needed to continue training into ``directory``."""

    @abc.abstractmethod
    def load(self, directory: Path) -> None:
        """Restore what ``save`` wrote."""


@dataclass
class AgentSpec:
    """How a plugin registers an agent."""

    name: str
    """Name on the command line (``benchgen run SUITE NAME``)."""
    config_class: type
    """A dataclass; every field documented; its defaults are the paper's."""
    factory: Callable[..., Agent]
    """``factory(config, observation_space, action_space) -> Agent``."""
    description: str = ""
    """One line for ``benchgen list``."""
    joint: bool = False
    """A joint agent trains one policy on all train tasks of a split at once, then is scored
    zero-shot and (with ``--finetune``) fine-tuned on every test task."""
    default_num_envs: int | None = None
    """Sub-environments per unit if the user does not say (None: the suite's default)."""
    suite_defaults: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per-suite overrides of config defaults, e.g. ``{"sonic": {"n_steps": 8192}}``."""
    check_suite: Callable[[Any], Any] | None = None
    """``check_suite(suite)`` raises ``benchgen.errors.UsageError`` (one line) if the agent cannot
    run on that suite, e.g. a scripted agent needing actions the suite does not name; the runner
    calls it while validating a run, before anything is written."""

    def defaults_for(self, suite: Any) -> dict[str, Any]:
        """The ``suite_defaults`` entry for ``suite``: its own name's, else that of the nearest
        base class with one (a suite derived from ``sonic`` under another name, e.g. a test
        integration, keeps the Sonic settings); empty if none applies."""
        names = [suite.name]
        names += [cls.__dict__["name"] for cls in type(suite).__mro__ if isinstance(cls.__dict__.get("name"), str)]
        for name in names:
            if name in self.suite_defaults:
                return dict(self.suite_defaults[name])
        return {}
