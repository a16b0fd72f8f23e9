"""A run resolved from the user's input (:func:`benchgen.run.planning.plan.resolve`, or rebuilt from a run
directory's record): what every part of the run engine works from.

Its numbers are worked out here once: :meth:`ResolvedRun.planned` turns the run's budget and
reporting checkpoints (given, or the suite's defaults scaled to the budget) into the budget
unit; the resolved run holds them in frames too and converts frames to agent steps by the
suite's conversion (:func:`benchgen.suite.frames_to_steps`). The planner, the units, their
checkpoints and the reports read them from it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from benchgen.agent import AgentSpec
from benchgen.config import RunConfig
from benchgen.errors import UsageError
from benchgen.phases import JOINT, LEARNING
from benchgen.results.store import Unit
from benchgen.suite import Split, Suite, frames_to_steps


def scaled_checkpoints(suite: Suite, budget: int) -> list[int]:
    """The suite's default reporting checkpoints scaled from its default budget to ``budget``
    (budget unit), the budget itself included."""
    scale = budget / suite.default_budget
    return sorted({max(1, int(round(c * scale))) for c in suite.default_checkpoints} | {budget})


@dataclass
class ResolvedRun:
    """Everything a run needs, resolved from the user's input."""

    run: RunConfig
    agent_config: Any
    suite: Suite
    spec: AgentSpec
    split: Split | None
    tasks: list[str]
    budget: int
    checkpoints: list[int]
    #: ``--protocol`` as data (``benchgen.protocols.parse_choice``); None: the suite's default
    protocol_choice: dict[str, Any] | None = None
    #: a re-evaluation run's one round (``EvaluationSchedule`` fields; ``benchgen.run.planning.studies``)
    reevaluation: dict[str, Any] | None = None
    #: where each value of ``agent_config`` comes from (``benchgen.run.planning.agent_settings``)
    config_sources: dict[str, str] = field(default_factory=dict)
    #: the agent configs of tasks the suite tuned on their own, in a run of several tasks
    task_configs: dict[str, Any] = field(default_factory=dict)
    #: their sources
    task_sources: dict[str, dict[str, str]] = field(default_factory=dict)
    #: each task's budget the suite gives (budget unit), used as the task's units' budget when the
    #: run gives none (empty when it does)
    task_budgets: dict[str, int] = field(default_factory=dict)
    #: each task's sub-environments the suite gives, for a run without ``--num-envs``
    task_num_envs: dict[str, int] = field(default_factory=dict)
    #: the budget in emulator frames (worked out from ``budget`` when built)
    budget_frames: int = field(init=False)
    #: the joint points the transfer units start from, in frames: (zero-shot, fine-tuning), each
    #: below the joint budget (worked out from ``run`` when built; empty for other runs)
    transfer_frames: tuple[list[int], list[int]] = field(init=False)

    def __post_init__(self) -> None:
        self.budget_frames = self.suite.to_frames(self.budget)
        zeroshot, finetune = [], []
        if self.run.transfer_every and self.run.transfer_every > 0:
            every = self.suite.to_frames(self.run.transfer_every)
            zeroshot = list(range(every, self.budget_frames, every))
        if self.run.finetune_at:
            points = (self.suite.to_frames(p) for p in self.run.finetune_at)
            finetune = sorted({p for p in points if p < self.budget_frames})
        self.transfer_frames = (zeroshot, finetune)

    @classmethod
    def planned(
        cls,
        run: RunConfig,
        agent_config: Any,
        suite: Suite,
        spec: AgentSpec,
        split: Split | None,
        tasks: list[str],
        protocol_choice: dict[str, Any] | None = None,
        task_budgets: dict[str, int] | None = None,
        **more: Any,
    ) -> ResolvedRun:
        """A new run's resolved form: its budget is ``run.budget``, else the longest of the tasks'
        own budgets the suite gives (``task_budgets``, kept only when the run gives none), else
        the suite's default; its reporting checkpoints are ``run.checkpoints`` (each in (0,
        budget], else a one-line ``UsageError``), else the suite's scaled to the budget."""
        task_budgets = dict(task_budgets or {}) if run.budget is None else {}
        if run.budget is not None:
            budget = run.budget
        elif task_budgets:  # the longest task's: reporting points scale to each unit's own budget
            budget = max(task_budgets.get(t, suite.default_budget) for t in tasks)
        else:
            budget = suite.default_budget
        if run.checkpoints is not None:
            checkpoints = sorted(set(run.checkpoints))
            if any(c <= 0 or c > budget for c in checkpoints):
                raise UsageError(f"reporting checkpoints must lie in (0, {budget}] {suite.budget_unit}")
        else:
            checkpoints = scaled_checkpoints(suite, budget)
        return cls(
            run,
            agent_config,
            suite,
            spec,
            split,
            tasks,
            budget,
            checkpoints,
            protocol_choice,
            task_budgets=task_budgets,
            **more,
        )

    def to_steps(self, frames: int) -> int:
        """Emulator frames as whole agent steps (the suite's conversion)."""
        return frames_to_steps(frames, self.suite.frames_per_step)

    def unit_frames(self, task: str) -> int:
        """A one-task training unit's budget in frames: the suite's for the task when the run
        gives none, else the run's."""
        return self.suite.to_frames(self.task_budgets.get(task, self.budget))

    def reporting_frames(self, unit: Unit) -> set[int]:
        """A learning unit's reporting checkpoints in frames (their agent checkpoints are kept),
        scaled to its budget (a task's own budget, a fine-tuning unit's); a joint unit's also
        include the points its transfer units start from (:attr:`transfer_frames`)."""
        if unit.phase not in LEARNING:
            return set()
        scale = unit.budget_frames / self.budget_frames
        points = {int(self.suite.to_frames(c) * scale) for c in self.checkpoints}
        if unit.phase == JOINT:
            zeroshot, finetune = self.transfer_frames
            points |= set(zeroshot) | set(finetune)
        return points

    @property
    def num_envs(self) -> int:
        """Sub-environments per unit: ``--num-envs``, else the suite's tuned number when every
        task of the run has the same one, else the agent's default, else the suite's."""
        tuned = {self.task_num_envs.get(t) for t in self.tasks}
        common = tuned.pop() if len(tuned) == 1 else None
        return int(self.run.num_envs or common or self.spec.default_num_envs or self.suite.default_num_envs)

    def num_envs_for(self, tasks) -> int:
        """Sub-environments of a unit playing ``tasks``: a one-task unit's tuned number, if the
        suite gives one and ``--num-envs`` does not, else :attr:`num_envs`."""
        if not self.run.num_envs and len(tasks) == 1 and tasks[0] in self.task_num_envs:
            return int(self.task_num_envs[tasks[0]])
        return self.num_envs

    def config_for(self, tasks) -> Any:
        """The agent config of a unit playing ``tasks``: its task's own, if the suite tuned it, else
        the run's."""
        return self.task_configs.get(tasks[0], self.agent_config) if len(tasks) == 1 else self.agent_config
