"""Joint training (Nichol et al. 2018, "Gotta Learn Fast"): ``ppo_joint`` and
``rainbow_joint``.

A joint agent is the same algorithm as its single-task agent (same config class, factory and
per-suite defaults): one policy over a vector env whose sub-environments play every train task
of the split. What makes it joint is the runner's plan (``AgentSpec.joint = True``), per seed:

1. a ``joint`` unit: sub-environments cycled over the split's train tasks, at least one per task
   (the paper's workers "each on one training level", gradients averaged every step: here one
   SB3 update over the batch of all sub-environments, which is the same average);
2. ``zeroshot`` units: the joint policy, not learning, on every train and test task;
3. with ``--finetune``, ``finetune`` units: each test task from the joint unit's final checkpoint,
   under the suite's test protocol, nothing shared between test tasks.

Budget: the joint unit's budget is the run's budget **in total**, summed over all train tasks
and sub-environments (not per task): ``--timesteps 1M`` trains the joint policy for one million
timesteps altogether. Fine-tuning units get the suite's per-task protocol budget (or
``finetune_budget``).

``rainbow_joint`` reuses ``benchgen_agents.rainbow_iqn``'s spec; where that package is absent
only ``ppo_joint`` is registered. The paper's joint Rainbow drew a new training level at every
episode in each environment; here each sub-environment keeps its train task, which covers the
same tasks with the same weight.
"""

from __future__ import annotations

import dataclasses
import importlib

from benchgen.agent import AgentSpec
from benchgen_agents.ppo import SPECS as _PPO_SPECS


def joint_variant(spec: AgentSpec, name: str, description: str) -> AgentSpec:
    """The joint-training twin of ``spec``: same algorithm and settings, ``joint=True``."""
    return dataclasses.replace(
        spec,
        name=name,
        joint=True,
        description=description,
        suite_defaults={k: dict(v) for k, v in spec.suite_defaults.items()},
    )


def _rainbow_spec() -> AgentSpec | None:
    try:
        module = importlib.import_module("benchgen_agents.rainbow_iqn")
    except ModuleNotFoundError as exc:
        if exc.name == "benchgen_agents.rainbow_iqn":
            return None
        raise
    return next((s for s in module.SPECS if s.name == "rainbow_iqn"), None)


def _specs() -> list[AgentSpec]:
    ppo = next(s for s in _PPO_SPECS if s.name == "ppo")
    specs = [joint_variant(ppo, "ppo_joint", "PPO trained jointly on a split's train tasks (Nichol et al. 2018)")]
    rainbow = _rainbow_spec()
    if rainbow is not None:
        specs.append(
            joint_variant(
                rainbow, "rainbow_joint", "Rainbow-IQN trained jointly on a split's train tasks (Nichol et al. 2018)"
            )
        )
    return specs


SPECS = _specs()
