"""The agent protocol: small on purpose (learn / act / save / load).

A plugin contributes :class:`AgentSpec` objects through the ``benchgen_agents`` hook. The runner
builds the agent with ``spec.factory(config, environment)``: its resolved config dataclass and an
:class:`AgentEnvironment` (the spaces of the env it will get and the suite's facts), then calls
``learn(env, ctx)`` with the (wrapped, recorded) vector env and a :class:`TrainingContext`.
Agents and suites never name each other: an agent declares what it needs (:class:`AgentNeeds`)
and the suite's agent wrappers answer (``Suite.agent_wrappers``). The agent steps the env until
``ctx.finished``, calling ``ctx.maybe_checkpoint()`` once per vector step (cheap: it saves only
when a checkpoint boundary was crossed). The suite records every episode's raw score underneath
the agent; an agent never reports scores itself. An agent that steps the unit's environment
in other processes relays what the suite recorded there (sealed reports, see
:mod:`benchgen.remote` and :meth:`TrainingContext.remote_envs`).
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from benchgen.capabilities import check_capabilities
from benchgen.errors import UsageError, did_you_mean
from benchgen.needs import OBSERVATION_NEEDS, REWARD_NEEDS, AgentNeeds  # noqa: F401 - part of this contract
from benchgen.phases import FINE_TUNING, TRAIN

if TYPE_CHECKING:  # pragma: no cover
    import gymnasium as gym

    from benchgen.capabilities import Emulators
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
    #: the unit's phase (:mod:`benchgen.phases`): "train" (one task, from scratch), "joint" (one
    #: policy on several train tasks), "finetune" (a test task, from a joint checkpoint), ...: an agent whose settings
    #: differ by phase (data-parallel joint training, single-process fine-tuning) reads it
    phase: str = TRAIN
    #: the tasks the unit plays (a joint unit's train tasks; one task otherwise)
    tasks: tuple[str, ...] = ()

    @property
    @abc.abstractmethod
    def steps_done(self) -> int:
        """Agent steps taken so far in this unit, restored on resume."""

    @property
    def fine_tuning(self) -> bool:
        """Whether the unit fine-tunes a test task from a joint checkpoint (phase "finetune", or
        "transfer_finetune" from an intermediate one)."""
        return self.phase in FINE_TUNING

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
        raise NotImplementedError(
            "this context cannot build the unit's environment elsewhere; run the agent with `benchgen run`"
        )

    def report_remote_episodes(self, report: RemoteEpisodes) -> list[EpisodeEnd]:
        """Count the frames of a collector's report in this unit (``steps_done``, ``finished``)
        and record its finished episodes under the unit, numbered after those recorded before;
        returns them. Only reports sealed by a collector of this context's :meth:`remote_envs`
        are accepted, each once and in order (``RuntimeError`` otherwise, nothing recorded):
        an agent relays the suite's episode facts, it cannot state a score."""
        raise NotImplementedError(
            "this context records no episodes played elsewhere; run the agent with `benchgen run`"
        )

    def ray(self) -> Any:
        """The ``ray`` module, connected: to the cluster this unit already runs on (``--executor
        ray``), else to a local instance started for the unit (loopback only, stopped when the
        unit ends). A method of the context rather than a function to import, because where Ray
        runs, who may stop it and which plugin settings its workers need are the run engine's
        knowledge, and agents import contracts, not the engine (``docs/ARCHITECTURE.md``).
        ``UsageError`` (one line) when Ray is not installed."""
        raise NotImplementedError("this context offers no Ray connection; run the agent with `benchgen run`")


def named_actions(
    agent: str, suite: str, semantics: Mapping[str, int] | None, names: Sequence[str], action_space: Any = None
) -> dict[str, int]:
    """The indices of the actions ``names`` in a suite's ``semantics`` (``Suite.action_semantics``);
    ``UsageError`` (one line) if the suite names none or not all of them, or, given
    ``action_space``, names one outside it."""
    if semantics is None:
        raise UsageError(f"{agent} is not supported on suite {suite}: it does not declare right/left/jump actions")
    missing = [a for a in names if a not in semantics]
    if missing:
        raise UsageError(f"{agent} is not supported on suite {suite}: its action semantics lack {missing}")
    if action_space is not None:
        n = getattr(action_space, "n", None)
        bad = {a: semantics[a] for a in names if n is None or not 0 <= int(semantics[a]) < n}
        if bad:
            raise UsageError(f"suite {suite} names actions {bad} outside the agent's action space {action_space}")
    return {a: int(semantics[a]) for a in names}


@dataclass(frozen=True)
class AgentEnvironment:
    """What an agent is built for, ``AgentSpec.factory``'s second argument: the spaces of the env
    ``learn`` gets (the suite env under the suite's agent wrappers) and the suite's facts."""

    observation_space: Any
    """One sub-environment's observation space (``gym.Space``)."""
    action_space: Any
    """One sub-environment's action space (``gym.Space``)."""
    frames_per_step: int = 1
    """Emulator frames per agent step, the suite's ``frames_per_step``: settings given in frames
    convert to agent steps with it."""
    action_semantics: Mapping[str, int] | None = None
    """The actions the suite names (``Suite.action_semantics``), indices in ``action_space``,
    for an agent that declares ``AgentNeeds.actions``; None for others."""
    suite: str = ""
    """The suite's name, for messages; an agent never branches on it (it declares needs)."""

    def named_actions(self, agent: str, names: Sequence[str]) -> dict[str, int]:
        """:func:`named_actions` for ``agent`` in this environment's action space."""
        return named_actions(agent, self.suite, self.action_semantics, names, self.action_space)


class Agent(abc.ABC):
    """A learning (or acting) agent."""

    def __init__(self, config: Any, environment: AgentEnvironment):
        """``AgentSpec.factory``'s signature: the resolved config and what the agent is built for."""
        self.config = config
        self.environment = environment
        self.observation_space = environment.observation_space
        self.action_space = environment.action_space

    #: the emulators of the env the agent acts in now, for an agent that declared
    #: ``AgentNeeds.capabilities`` (None otherwise); see :meth:`use_emulators`
    emulators: Emulators | None = None

    def use_emulators(self, emulators: Emulators | None) -> None:
        """Called by the runner with the :class:`benchgen.capabilities.Emulators` of every env it
        is about to hand this agent (the training env before ``learn``, each evaluation round's
        env before its first ``act``), when the agent declared capabilities. Row ``i`` of the
        observations is ``emulators``' sub-environment ``i``. Default: keep it in
        :attr:`emulators`."""
        self.emulators = emulators

    @abc.abstractmethod
    def learn(self, env: gym.vector.VectorEnv, ctx: TrainingContext) -> None:
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
    factory: Callable[[Any, AgentEnvironment], Agent]
    """``factory(config, environment) -> Agent``: the resolved config (an instance of
    ``config_class``) and the :class:`AgentEnvironment` the agent is built for; the signature of
    :class:`Agent`'s constructor, so an ``Agent`` subclass is its own factory (or a function that
    imports it, to keep heavy imports out of ``benchgen list``)."""
    description: str = ""
    """One line for ``benchgen list``."""
    joint: bool = False
    """A joint agent trains one policy on all train tasks of a split at once, then is scored
    zero-shot and (with ``--finetune``) fine-tuned on every test task."""
    random_play: bool = False
    """The agent plays uniformly random actions and learns nothing: the play a suite's random
    scores measure. The conformance kits' smoke runs and a new plugin's tests run such an agent
    (``Registry.random_play_agent``)."""
    joint_of: str = ""
    """A joint agent's single-task agent, the one it is the joint version of (its name): the plan
    estimates the joint agent's units from that agent's measured speed where the suite measured
    none of its own (``Suite.measured_speeds``). Empty: none (a single-task agent, or a joint
    agent of its own)."""
    default_num_envs: int | None = None
    """Sub-environments per unit if the user does not say (None: the suite's default)."""
    algorithm: str = ""
    """The algorithm whose published settings this agent's config takes: suites key the settings
    they tuned for their tasks by it (``Suite.tuned_settings``, :mod:`benchgen.tuned`), so an
    agent gets a task's tuned values without knowing any suite. Empty: the agent's name. A joint
    agent keeps its single-task agent's; another plugin's implementation of the same algorithm,
    with the same config field names, may declare it too."""
    needs: AgentNeeds = field(default_factory=AgentNeeds)
    """What the agent asks of the suite's agent wrappers: observation format, reward, named
    actions (:class:`AgentNeeds`)."""
    check_suite: Callable[[Any], Any] | None = None
    """``check_suite(suite)`` raises ``benchgen.errors.UsageError`` (one line) if the agent cannot
    run on that suite for a reason ``needs`` does not state; the runner calls it (after checking
    ``needs``, see :meth:`check`) while validating a run, before anything is written."""
    variants: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Named sets of config defaults, e.g. a paper's values and those of its released code:
    ``{"paper": {}, "code": {"noisy_sigma0": 0.1}}``. The config class then has a ``variant``
    field whose default names the set a run uses unless told (``--set variant=NAME``). A run's
    agent config is the config class's defaults, overridden by the suite's tuned settings for
    the task (``Suite.tuned_settings``), then by the chosen variant's, then by the user's
    ``--config``/``--set`` settings: a setting given explicitly always wins. An unknown variant is refused in one line while the run
    resolves, before anything is written (:meth:`variant_defaults`). Empty: no variants."""

    task_sampling: str = "fixed"
    """How the agent's joint units give tasks to sub-environments unless the run says
    (``--task-sampling``): "fixed" (one task each) or "episode" (a new task every episode,
    :mod:`benchgen.joint_env`)."""
    check_config: Callable[[Any, Any], Sequence[str]] | None = None
    """``check_config(config, run)``, called while a run is resolved, before anything is written,
    with the resolved agent config and the :class:`benchgen.config.RunConfig`: raises
    ``benchgen.errors.UsageError`` (one line) for settings that cannot run (e.g. more workers
    than this machine has CPUs) and returns lines the run's plan shows (e.g. that a fallback is
    not the paper's setup). None: nothing to check."""

    vector_width: Callable[[Any, int, int, bool], int | None] | None = None
    """``vector_width(config, num_envs, tasks, fine_tuning)``: the sub-environments a learning unit
    of this agent steps at once when that is not the unit's own count, e.g. all data-parallel
    workers' together (``num_envs`` each, or one per task); None from the call or no function:
    the unit's own. The plan and the unit's planned frames use it, so a run says what plays."""
    round_steps: Callable[[Any, int], int] | None = None
    """``round_steps(config, width)``: agent steps a learning unit of this agent plays between two
    updates when it steps ``width`` sub-environments (PPO: its rollout, ``n_steps`` x width); a
    unit whose budget is shorter never updates, and the plan says so. None: no such round."""
    device: Callable[[Any], str] | None = None
    """``device(config)``: where a unit of this agent with ``config`` puts its network, "cpu" or
    "cuda" (resolving a setting such as "auto" on this machine); the plan estimates the run's
    wall time from a speed measured on that kind of device where the suite has one
    (``Suite.measured_speeds``). None: the CPU (an agent without a network, or one that never
    uses a GPU)."""
    software: tuple[str, ...] = ()
    """The distributions (pip names) the agent depends on beyond benchgen's own, its deep-learning
    library say: every run of the agent records their installed versions in ``run.json``
    (``versions``), and a resume under other versions is refused unless forced. Empty: none."""

    def __post_init__(self) -> None:
        self.algorithm = self.algorithm or self.name
        if self.joint_of and not self.joint:
            raise TypeError(f"agent '{self.name}' names a single-task agent (joint_of) but is not joint")
        if self.variants:  # a plugin author's mistake: say so at registration, not in a user's run
            settable = {f.name for f in dataclasses.fields(self.config_class) if f.init}
            if "variant" not in settable:
                raise TypeError(
                    f"agent '{self.name}' has variants but {self.config_class.__name__} has no 'variant' field"
                )
            for name, values in self.variants.items():
                unknown = sorted(set(values) - settable)
                if unknown:
                    raise TypeError(f"variant '{name}' of agent '{self.name}' sets unknown config fields {unknown}")

    def check(self, suite: Any) -> None:
        """``UsageError`` (one line) if the agent cannot run on ``suite``: emulator capabilities it
        needs that the suite does not offer, actions it needs that the suite does not name, then
        its own ``check_suite``."""
        check_capabilities(self.name, self.needs.capabilities, suite)
        if self.needs.actions:
            named_actions(self.name, suite.name, suite.action_semantics(), self.needs.actions)
        if self.check_suite is not None:
            self.check_suite(suite)

    def suite_for(self, suite: Any) -> Any:
        """``suite`` as this agent runs on it: checked (:meth:`check`), and, for an agent that needs
        emulator capabilities, the suite whose envs offer them (``Suite.with_capabilities``)."""
        self.check(suite)
        return suite.with_capabilities(self.needs.capabilities) if self.needs.capabilities else suite

    def environment(self, suite: Any, env: gym.vector.VectorEnv) -> AgentEnvironment:
        """The :class:`AgentEnvironment` of ``env``, a vector env of ``suite`` under the suite's
        agent wrappers for this agent's needs."""
        semantics = suite.action_semantics() if self.needs.actions else None
        return AgentEnvironment(
            env.single_observation_space, env.single_action_space, suite.frames_per_step, semantics, suite.name
        )

    def variant_defaults(self, name: Any = None) -> dict[str, Any]:
        """The config defaults variant ``name`` gives (``None``: the variant the config's
        ``variant`` field defaults to); empty when the agent has no :attr:`variants`. An unknown
        name is a one-line ``UsageError`` naming the known ones."""
        if not self.variants:
            return {}
        if name is None:
            name = next(f.default for f in dataclasses.fields(self.config_class) if f.name == "variant")
        if not isinstance(name, str) or name not in self.variants:
            raise did_you_mean(f"{self.name} variant", str(name), self.variants)
        return dict(self.variants[name])
