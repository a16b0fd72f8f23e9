"""A run resolved from the user's input (:func:`benchgen.run.plan.resolve`, or rebuilt from a run
directory's record): what every part of the run engine works from."""

from __future__ import annotations

from dataclasses import dataclass
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

    @property
    def num_envs(self) -> int:
        """Sub-environments per unit: ``--num-envs``, else the agent's default, else the suite's."""
        return int(self.run.num_envs or self.spec.default_num_envs or self.suite.default_num_envs)
