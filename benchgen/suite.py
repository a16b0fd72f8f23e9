"""What a suite is: tasks, protocol parameters, splits, and the environment contract.

A plugin contributes :class:`Suite` objects through the ``benchgen_suites`` hook.

The environment contract (``Suite.make_env``):

* a ``gymnasium.vector.VectorEnv`` of ``len(tasks)`` sub-environments, sub-environment ``i``
  playing ``tasks[i]`` (a single-task run passes the same task N times; a joint run passes
  several), pixel observations (uint8) and a ``Discrete`` single action space;
* autoreset mode ``SAME_STEP``: when a sub-environment's episode ends, the returned observation
  is already the first of the next episode, and ``info["final_obs"]`` holds the last one;
* it implements :meth:`SuiteVectorEnv.pop_episode_ends`: after every ``step`` the recorder
  collects one :class:`EpisodeEnd` per finished episode with the protocol's facts (raw score,
  length in emulator frames, end reason, suite-specific extras such as Atari's 5- and 30-minute
  scores, and events such as a score rollover);
* agents never see what the protocol forbids (lives, RAM): such keys are not in ``info``; an
  agent that declares an emulator capability (:mod:`benchgen.capabilities`) reads it through
  :meth:`SuiteVectorEnv.emulators` of an env from a suite that offers it, never through ``info``;
* ``reset(seed=...)`` seeds every sub-environment explicitly, so runs are reproducible;
* observations may be views of the env's own buffers, valid until the next ``step`` or ``reset``,
  provided ``Suite.agent_wrappers`` (always between the env and an agent) gives agents arrays of
  their own; a suite whose wrappers keep observations as they are returns fresh arrays.
"""

from __future__ import annotations

import abc
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import gymnasium as gym

from benchgen.errors import UsageError
from benchgen.inputs import read_yaml
from benchgen.scoring import PublishedAggregate, ReferenceScores, Scorer, read_reference_csv, read_score_csv
from benchgen.speeds import EvaluationSpeed, Speed, read_evaluation_csv, read_speeds_csv
from benchgen.tuned import TunedSettings, entries_for, load_tuned_file

if TYPE_CHECKING:  # pragma: no cover
    from benchgen.capabilities import Emulators
    from benchgen.needs import AgentNeeds

#: a suite's random scores, in its ``data/`` folder (see ``Suite.random_scores``)
RANDOM_SCORES_FILE = "random_scores.csv"
#: how the files of a suite's reference tables end, in its ``data/`` folder (see ``Suite.reference_scores``)
REFERENCE_SCORES_SUFFIX = "_scores.csv"
#: a suite's measured speeds, in its ``data/`` folder (see ``Suite.measured_speeds``)
SPEEDS_FILE = "speeds.csv"
#: a suite's measured evaluation episodes, in its ``data/`` folder (see ``Suite.measured_evaluation``)
EVALUATION_SPEEDS_FILE = "evaluation_speeds.csv"


@dataclass
class EpisodeEnd:
    """The facts a suite records about one finished episode."""

    env_index: int
    """Which sub-environment of the vector env finished."""
    task: str
    """The task that sub-environment was playing."""
    score: float
    """Raw game score (never clipped or normalized); ``inf`` for infinite gameplay."""
    length_frames: int
    """Episode length in emulator frames, skipped frames included."""
    end_reason: str
    """Why it ended, in the suite's words (Atari: game_over, stuck, max_length)."""
    extras: dict[str, Any] = field(default_factory=dict)
    """Suite-specific per-episode values, named in ``Suite.episode_fields``."""
    events: list[dict[str, Any]] = field(default_factory=list)
    """Notable events during the episode (e.g. a corrected score rollover)."""


@dataclass(frozen=True)
class EvaluationSchedule:
    """A protocol's separate evaluation phases (Mnih et al. 2015, Hessel et al. 2018, Bellemare et
    al. 2013): learning pauses, the agent plays episodes of its own tasks in the suite's ``"eval"``
    mode, and they are recorded under the phase ``<unit phase>_eval`` (``train_eval``, ...), with
    the training frame counter at which the round began. A round's quota is counted per task in
    episodes or in frames; an episode counts if it started while the quota was open, and the round
    ends when every counted episode has finished (so no episode is cut short and short episodes
    are not favoured). The task score of an evaluation phase is made from its latest round.

    With ``best_policy`` (Mnih et al. 2015 and Hessel et al. 2018, as Machado et al. 2018 section 3
    and SABER section 2.1 describe them), the agent checkpoint of the best round so far (highest
    mean raw score) is kept, and after training that agent plays one more round of the same quota,
    independent of the round that chose it, recorded under ``<unit phase>_best``; that round
    makes the task score, the rounds still show the agent at the end of training."""

    episodes: int = 0
    """episodes per task in each round (0: the round is counted in ``frames``)"""
    frames: int = 0
    """emulator frames per task in each round (0: the round is counted in ``episodes``)"""
    interval_frames: int = 0
    """training frames between rounds; a round also follows training (0: that round only)"""
    epsilon: float = 0.0
    """probability of a uniformly random action at each step (0: the agent's greedy policy)"""
    best_policy: bool = False
    """after training, re-evaluate the best round's agent in a round of its own (see above)"""

    def __post_init__(self):
        if (self.episodes > 0) == (self.frames > 0):
            raise ValueError("an evaluation round is counted in episodes or in frames: give exactly one")
        if self.interval_frames < 0 or not 0.0 <= self.epsilon <= 1.0:
            raise ValueError("interval_frames must be >= 0 and epsilon in [0, 1]")

    def points(self, budget_frames: int) -> list[int]:
        """The training frame counts at which rounds are due, the last one the unit's budget."""
        every = self.interval_frames
        inside = range(every, budget_frames, every) if every else ()
        return [*inside, budget_frames]


class SuiteVectorEnv(gym.vector.VectorEnv):
    """Base for suite environments; see the module docstring for the contract."""

    #: emulator frames per agent step (4 for both first-party suites)
    frames_per_step: int = 4
    #: the task each sub-environment plays
    tasks: Sequence[str] = ()

    @abc.abstractmethod
    def pop_episode_ends(self) -> list[EpisodeEnd]:
        """Return (and forget) the episodes that finished since the last call. A
        :class:`benchgen.episodes.EpisodeBook` keeps them, with each sub-environment's raw return
        and length: hold one, feed it every step's rewards and ends, and return its ``pop()``."""

    def emulators(self) -> Emulators | None:
        """The :class:`benchgen.capabilities.Emulators` of this env's sub-environments, for agents
        that declared capabilities; None (the default): it offers none. Only envs of a suite
        from ``Suite.with_capabilities`` need to offer them."""
        return None


@dataclass(frozen=True)
class Split:
    """A named set of tasks of one suite, divided into train and test tasks."""

    suite: str
    """The suite whose tasks the split names."""
    name: str
    """Name used with ``--split``."""
    train: tuple[str, ...]
    """Tasks to train on (a from-scratch run plays train and test tasks alike)."""
    test: tuple[str, ...] = ()
    """Held-out tasks: zero-shot and fine-tuning targets of joint agents; disjoint from train."""
    description: str = ""
    """One line for ``benchgen list SUITE``."""
    source: str = ""
    """Where the split was read from (a file path), for run metadata."""

    @property
    def tasks(self) -> tuple[str, ...]:
        """Train then test tasks, each once: what a from-scratch run over the split plays."""
        seen: dict[str, None] = {}
        for t in (*self.train, *self.test):
            seen.setdefault(t, None)
        return tuple(seen)


def load_split_yaml(path: str | Path, suite: str | None = None) -> Split:
    """Read a split file: ``{suite, name, description, train: [...], test: [...]}``.

    A file with ``tasks: [...]`` instead of train/test is a split whose tasks are all train tasks.
    """
    path = Path(path)
    data = read_yaml(path, "split file", "; pass a split name or an existing YAML file")
    if not isinstance(data, dict):
        raise UsageError(f"split file {path} must be a mapping with 'train' and 'test' lists")
    allowed = {"suite", "name", "description", "train", "test", "tasks", "source"}
    unknown = set(data) - allowed
    if unknown:
        raise UsageError(f"split file {path} has unknown keys {sorted(unknown)}; allowed: {sorted(allowed)}")
    train = data.get("train", data.get("tasks"))
    test = data.get("test") or []
    if not isinstance(train, list) or not train or not isinstance(test, list):
        raise UsageError(f"split file {path} needs a non-empty 'train' (or 'tasks') list and an optional 'test' list")
    file_suite = data.get("suite")
    if suite and file_suite and file_suite != suite:
        raise UsageError(f"split file {path} is for suite '{file_suite}', not '{suite}'")
    overlap = set(train) & set(test)
    if overlap:
        raise UsageError(f"split file {path} lists {sorted(overlap)} in both train and test; a split must be disjoint")
    return Split(
        suite=file_suite or suite or "",
        name=str(data.get("name") or path.stem),
        train=tuple(str(t) for t in train),
        test=tuple(str(t) for t in test),
        description=str(data.get("description", "")),
        source=str(path),
    )


# The one conversion between emulator frames, agent steps and a budget unit: a suite's methods
# below, a recorded run's (``benchgen.results.record.RunRecord``), the run engine and every report
# use these three.
def frames_to_steps(frames: int, frames_per_step: int) -> int:
    """Whole agent steps in ``frames`` emulator frames (rounded down)."""
    return int(frames) // int(frames_per_step)


def budget_to_frames(amount: int, budget_unit: str, frames_per_step: int) -> int:
    """An amount in a suite's budget unit ("frames" or "timesteps") as emulator frames."""
    return int(amount) if budget_unit == "frames" else int(amount) * int(frames_per_step)


def frames_to_budget(frames: int, budget_unit: str, frames_per_step: int) -> int:
    """Emulator frames in a suite's budget unit (whole agent steps, rounded down, for timesteps)."""
    return int(frames) if budget_unit == "frames" else frames_to_steps(frames, frames_per_step)


class Suite(abc.ABC):
    """A benchmark suite. Subclass it in a plugin and return instances from ``benchgen_suites``.

    A suite owns its data: its splits, random scores, reference tables and measured speeds are
    files next to the module that defines its class, shipped as package data
    (``splits/<name>.yaml``, ``data/random_scores.csv``, ``data/<name>_scores.csv``,
    ``data/speeds.csv``) and read by :meth:`splits`, :meth:`random_scores`,
    :meth:`reference_scores`, :meth:`scorer` and :meth:`measured_speeds`; override those to build
    them in code. Other plugins add splits and reference tables to a suite through the
    ``benchgen_splits`` and ``benchgen_reference_scores`` hooks."""

    #: unique suite name, used on the command line
    name: str = ""
    #: one-line description for ``benchgen list``
    description: str = ""
    #: version of the suite's protocol; part of the protocol parameters
    version: str = "1"
    #: what budgets count: "frames" (emulator frames) or "timesteps" (agent steps)
    budget_unit: str = "frames"
    #: emulator frames per agent step
    frames_per_step: int = 4
    #: default training budget per task, in ``budget_unit``
    default_budget: int = 1
    #: default reporting checkpoints, in ``budget_unit``
    default_checkpoints: tuple[int, ...] = ()
    #: default parallel environments per run
    default_num_envs: int = 1
    #: names of suite-specific per-episode values (``EpisodeEnd.extras`` keys), exported as columns
    episode_fields: tuple[str, ...] = ()
    #: the suite's time views of an episode's score, shortest first: ``EpisodeEnd.extras`` keys
    #: (also in ``episode_fields``) -> label, e.g. Atari's ``{"score_5min": "5 min"}``; reports and
    #: comparisons show each next to the final score
    score_views: dict[str, str] = {}
    #: end reasons this suite records
    end_reasons: tuple[str, ...] = ()
    #: how the per-task score of a run is computed, in words (shown in reports)
    task_score_rule: str = "mean raw score of the last 100 episodes"
    #: split used when neither --tasks nor --split is given
    default_split: str | None = None
    #: split a joint agent trains and tests on when no --split is given (needs a test set)
    default_joint_split: str | None = None
    #: whether the evaluation phases play held-out instances of each task (levels held out from training),
    #: not the trained ones: reports then show each task's score on both and the generalization gap
    held_out_evaluation: bool = False
    #: the distributions (pip names) the suite's environments depend on beyond benchgen's own, its
    #: emulator's package say: every run on the suite records their installed versions in
    #: ``run.json`` (``versions``), and a resume under other versions is refused unless forced
    software: tuple[str, ...] = ()

    def to_frames(self, amount: int) -> int:
        """An amount in ``budget_unit`` as emulator frames."""
        return budget_to_frames(amount, self.budget_unit, self.frames_per_step)

    def from_frames(self, frames: int) -> int:
        """Emulator frames in ``budget_unit`` (whole agent steps, rounded down, for timesteps)."""
        return frames_to_budget(frames, self.budget_unit, self.frames_per_step)

    def budget_from_frames(self, frames: int) -> int:
        """A budget given in emulator frames (``--frames``) in ``budget_unit``; a one-line
        ``UsageError`` if it is not a whole number of the unit (never silently rounded)."""
        budget = self.from_frames(frames)
        if self.to_frames(budget) != int(frames):
            below, above = self.to_frames(budget), self.to_frames(budget + 1)
            raise UsageError(
                f"--frames {frames} is not a whole number of {self.name}'s agent steps ({self.frames_per_step} "
                f"frames each); give --frames {below} or {above} (or --timesteps {budget} or {budget + 1})"
            )
        return budget

    def from_timesteps(self, steps: int) -> int:
        """Agent steps (timesteps) in ``budget_unit``."""
        return self.from_frames(int(steps) * self.frames_per_step)

    @abc.abstractmethod
    def tasks(self) -> list[str]:
        """All task names of the suite."""

    @abc.abstractmethod
    def protocol(self) -> dict[str, Any]:
        """The protocol parameters: every value that must match for two runs to be compared."""

    @abc.abstractmethod
    def make_env(self, tasks: Sequence[str], seed: int, *, mode: str = "train") -> SuiteVectorEnv:
        """Build the vector env (see the module docstring). ``mode`` is "train" or "eval" (the
        episodes of zero-shot units and of evaluation phases); a protocol with training-only rules
        or an evaluation episode cap applies them by mode."""

    # -- named protocols (optional: a suite that implements several published protocols) --------
    #: the preset a run uses when it names none (``--protocol``); None: the suite has one protocol
    default_protocol: str | None = None
    #: parameter -> (preset value, value used) when the suite runs a changed (custom) protocol
    protocol_changes: dict[str, tuple[Any, Any]] = {}

    def protocol_presets(self) -> dict[str, dict[str, Any]]:
        """The named protocols this suite can run: name -> its parameters and their sources, for
        ``benchgen protocols`` (the key ``task_score``, if present, is shown by ``benchgen list``).
        Empty (the default): the suite has one protocol and takes no ``--protocol``."""
        return {}

    def with_protocol(self, preset: str, changes: Mapping[str, Any]) -> Suite:
        """A suite of the same name that runs protocol ``preset`` with ``changes`` (parameter ->
        value, from a custom protocol file; its :attr:`protocol_changes` record them and its
        ``protocol()`` names the protocol, ``custom`` when changed). Unknown names, parameters
        or values raise a one-line ``UsageError``. Called only when :meth:`protocol_presets`
        is non-empty."""
        raise UsageError(f"suite '{self.name}' has a single protocol; run it without --protocol")

    # -- emulator capabilities (benchgen.capabilities) ------------------------------------------
    def capabilities(self) -> frozenset[str]:
        """The emulator capabilities (:data:`benchgen.capabilities.CAPABILITIES`) this suite can
        offer agents that declare them (``AgentNeeds.capabilities``); an agent that needs one not
        listed is refused in one line when its run is planned. Default: none."""
        return frozenset()

    def with_capabilities(self, names: Sequence[str]) -> Suite:
        """A suite of the same name and protocol whose envs offer the capabilities ``names`` (a
        subset of :meth:`capabilities`) through ``SuiteVectorEnv.emulators()``: the runner uses it
        for agents that declare them. Default: this suite (its envs already offer what it lists)."""
        return self

    def make_video_env(self, task: str, seed: int) -> SuiteVectorEnv:
        """One sub-environment of ``task`` in ``"eval"`` mode whose screen :meth:`screens` can show
        (``benchgen video``). Default: :meth:`make_env`; a suite whose fast env cannot show its
        screen builds one that can (the same protocol, frame for frame)."""
        return self.make_env([task], seed, mode="eval")

    def screens(self, env: SuiteVectorEnv) -> Any:
        """The full-resolution RGB screens of an env this suite made, as they are now (after the
        last ``reset`` or ``step``): a ``uint8`` array ``(num_envs, height, width, 3)``, not the
        agents' view. None (the default): the suite cannot show them."""
        return None

    def evaluation_schedule(self) -> EvaluationSchedule | None:
        """The protocol's separate evaluation phases (see :class:`EvaluationSchedule`); None (the
        default): scores come from the training episodes themselves."""
        return None

    def episode_budget(self) -> int | None:
        """Training episodes per task after which a learning unit ends, even short of its frame
        budget (Bellemare et al. 2013 train for 5,000 episodes); None (the default): frames only."""
        return None

    def allows_infinite_scores(self) -> bool:
        """Whether a raw score may be ``inf`` under this suite's protocol (SABER's infinite
        gameplay, an episode cut by the cap while still scoring); False (the default): every
        score is finite, and ``benchgen score`` refuses an ``inf`` in one line."""
        return False

    def check_task_available(self, task: str) -> None:
        """Raise ``UsageError`` (one line, saying how to fix it) if ``task`` cannot run here.
        Default: every task can."""
        return None

    def task_available(self, task: str) -> bool:
        """Whether ``task`` can run on this machine (``benchgen list`` shows it)."""
        try:
            self.check_task_available(task)
        except UsageError:
            return False
        return True

    def agent_wrappers(self, env: gym.vector.VectorEnv, needs: AgentNeeds) -> gym.vector.VectorEnv:
        """Wrap ``env`` with the suite's agent-side helpers (action discretizer, reward shaping,
        frame warping) that answer an agent's ``needs`` (:class:`benchgen.agent.AgentNeeds`:
        observation format, reward, named actions), never its name. They sit above the recorder,
        so they never touch a recorded score. Default: none (the env already gives what agents
        need, and fresh observation arrays)."""
        return env

    def action_semantics(self) -> dict[str, int] | None:
        """Indices (in the action space ``agent_wrappers`` gives agents that need named actions) of
        the 'right', 'left', 'jump', 'right_jump', 'left_jump' and 'noop' actions, for agents
        such as JERK; None if the suite cannot name them."""
        return None

    # -- the suite's own data ------------------------------------------------------------------
    def package_files(self, folder: str, pattern: str) -> list[Path]:
        """The files ``folder/pattern`` next to the module that defines this suite's class,
        sorted by name; none where that folder does not exist (a subclass defined in another
        module has the files next to its own module)."""
        source = getattr(sys.modules.get(type(self).__module__), "__file__", None)
        return sorted((Path(source).parent / folder).glob(pattern)) if source else []

    def tuned_settings(self, algorithm: str, task: str | None, joint: bool = False) -> list[TunedSettings]:
        """The settings this suite's sources tuned ``algorithm`` with (``AgentSpec.algorithm``) for
        a unit playing ``task`` (None with ``joint``: a unit that trains on several tasks at once),
        lowest precedence first (:func:`benchgen.tuned.entries_for`): each with its source and
        optionally the task's budget and sub-environments. Default: the file
        ``tuned/<algorithm>.yaml`` (:mod:`benchgen.tuned` describes it) next to the module of this
        suite's class, else of the nearest base class that has one (a suite derived from another,
        e.g. a test integration of Sonic, keeps its settings); none without it."""
        for cls in type(self).__mro__:
            source = getattr(sys.modules.get(cls.__module__), "__file__", None)
            path = Path(source).parent / "tuned" / f"{algorithm}.yaml" if source else None
            if path is not None and path.is_file():
                return entries_for(load_tuned_file(path), task, joint)
        return []

    def splits(self) -> list[Split]:
        """The suite's own splits: every ``splits/*.yaml`` file (see :func:`load_split_yaml`; a
        file's ``suite`` must be this suite's name). Override it to build splits in code, e.g.
        from an emulator's task list. Every task a split names must be one of the suite's; a
        split name given twice (here or by a plugin's ``benchgen_splits``) stops start-up."""
        return [load_split_yaml(path, suite=self.name) for path in self.package_files("splits", "*.yaml")]

    def random_scores(self) -> dict[str, float]:
        """The random agent's score per task, the ``r`` of every normalization:
        ``data/random_scores.csv`` (``task,score``, read by :func:`benchgen.scoring.read_score_csv`);
        empty without that file."""
        files = self.package_files("data", RANDOM_SCORES_FILE)
        return read_score_csv(files[0]) if files else {}

    def reference_scores(self) -> list[ReferenceScores]:
        """The suite's own reference tables: every other ``data/<name>_scores.csv`` is the table
        ``<name>`` (``task,score``; its leading ``#`` comment lines describe it). A table name
        given twice (here or by a plugin's ``benchgen_reference_scores``) stops start-up."""
        return [
            read_reference_csv(path, path.name.removesuffix(REFERENCE_SCORES_SUFFIX))
            for path in self.package_files("data", "*" + REFERENCE_SCORES_SUFFIX)
            if path.name != RANDOM_SCORES_FILE
        ]

    def measured_speeds(self) -> list[Speed]:
        """Frames per second measured of agents' units on this suite's tasks, from which the
        planner states a run's wall time (:mod:`benchgen.speeds` describes a row):
        ``data/speeds.csv``; none without that file (the plan then gives no estimate)."""
        found = self._data_table(SPEEDS_FILE)
        return read_speeds_csv(*found) if found else []

    def measured_evaluation(self) -> list[EvaluationSpeed]:
        """How agents' evaluation episodes ran on this suite's tasks (mean length, frames per
        second; :class:`benchgen.speeds.EvaluationSpeed`), from which the planner counts the
        evaluation rounds of :meth:`evaluation_schedule` in a run's wall time:
        ``data/evaluation_speeds.csv``; none without that file (evaluation is then not estimated)."""
        found = self._data_table(EVALUATION_SPEEDS_FILE)
        return read_evaluation_csv(*found) if found else []

    def _data_table(self, name: str) -> tuple[Path, str] | None:
        """The suite's ``data/<name>`` file and its name as the plan shows it (the package path,
        e.g. ``benchgen_mysuite/data/speeds.csv``); None without that file."""
        files = self.package_files("data", name)
        if not files:
            return None
        package = type(self).__module__.rpartition(".")[0]
        return files[0], f"{package.replace('.', '/') + '/' if package else ''}data/{name}"

    def published_aggregates(self) -> list[PublishedAggregate]:
        """The aggregates the suite's papers print, each recomputed from the per-task reference
        tables the suite ships through its own scorer (``benchgen selfcheck``). Default: none."""
        return []

    def scorer(self) -> Scorer | None:
        """The suite's own scorer: a :class:`benchgen.scoring.Scorer` over :meth:`random_scores`
        and :meth:`reference_scores` (its default baseline the one table, if there is one table:
        ``Scorer.default_baseline``), or None when the suite has neither; a plugin's
        ``benchgen_scorer`` may then give one, else runs are scored raw. Override it to return a
        ``Scorer`` subclass (a declared default baseline, per-task score or aggregate)."""
        random_scores, references = self.random_scores(), self.reference_scores()
        if not random_scores and not references:
            return None
        return Scorer(random_scores, {table.name: table for table in references})
