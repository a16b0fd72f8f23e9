"""A run resolved from the user's input (:func:`benchgen.run.plan.resolve`, or rebuilt from a run
directory's record): what every part of the run engine works from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from benchgen.agent import AgentSpec
from benchgen.config import RunConfig
from benchgen.suite import Split, Suite


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
    #: a re-evaluation run's one round (``EvaluationSchedule`` fields; ``benchgen.run.studies``)
    reevaluation: dict[str, Any] | None = None
    #: where each value of ``agent_config`` comes from (``benchgen.run.agent_settings``)
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

    def unit_budget(self, task: str) -> int:
        """A one-task training unit's budget (budget unit): the suite's for the task when the run
        gives none, else the run's."""
        return self.task_budgets.get(task, self.budget)
