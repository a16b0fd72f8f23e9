"""Joint training (Nichol et al. 2018, "Gotta Learn Fast"): ``ppo_joint``, ``rainbow_joint``
(the paper's two joint baselines) and ``rainbow_iqn_joint`` (SABER's agent trained the same way).

A joint agent is the same algorithm as its single-task agent (same config class, factory and
``AgentSpec.algorithm``, so a suite's tuned settings for it apply, its ``joint`` entry on top:
the Sonic suite's holds the paper's distributed setups). What makes it joint is the runner's plan
(``AgentSpec.joint = True``), per seed:

1. a ``joint`` unit: one policy on the split's train tasks. Data-parallel workers
   (:mod:`benchgen_agents.data_parallel`), each with its own sub-environments (PPO: one training
   level each, cycled over the train tasks) and its own rollouts or replay, average their
   gradients at every step, as the paper's workers did: for PPO ``virtual_workers`` of them (on
   Sonic the paper's 188), accumulated in however many processes ``workers`` says (speed only);
   for Rainbow ``workers`` Ray actors (on Sonic 32). With none, one process steps
   sub-environments cycled over the train tasks (at least one per task) and takes one update per
   minibatch over all of them, a fallback the run's plan says is not the paper's setup;
2. ``zeroshot`` units: the joint policy, not learning, on every train and test task;
3. with ``--finetune``, ``finetune`` units: each test task from the joint unit's final checkpoint,
   under the suite's test protocol, nothing shared between test tasks.

Budget: the joint unit's budget is the run's budget **in total**, summed over all train tasks
and sub-environments (not per task): ``--timesteps 1M`` trains the joint policy for one million
timesteps altogether. Fine-tuning units get the suite's per-task protocol budget (or
``finetune_budget``).

Each joint agent reuses its single-task agent's spec (``benchgen_agents.ppo``, ``.rainbow``,
``.rainbow_iqn``); one whose package is absent is not registered. ``rainbow_joint`` plays
"joint environments" (:mod:`benchgen.joint_env`), each drawing a new training level at every
episode, as the paper's joint Rainbow did; ``--task-sampling fixed`` (the others' default) keeps
one task per sub-environment instead.
"""

from __future__ import annotations

import dataclasses
import importlib

from benchgen.agent import AgentSpec
from benchgen_agents.data_parallel.settings import WorkerSettingsCheck

#: joint agents whose environments draw a new task every episode (``AgentSpec.task_sampling``):
#: joint Rainbow's "joint environments" (section 4.6, Algorithm 2)
TASK_SAMPLING = {"rainbow_joint": "episode"}

#: the paper's setup each joint agent falls short of in one process (named in the run's plan)
PAPER_SETUPS = {
    "ppo_joint": "188 workers, one training level each, gradients averaged; Nichol et al. 2018 section 4.5",
    "rainbow_joint": "32 workers of 8 joint environments and batch 256, gradients all-reduced; Algorithm 2",
}


def joint_variant(spec: AgentSpec, name: str, description: str) -> AgentSpec:
    """The joint-training twin of ``spec``: same algorithm (``AgentSpec.algorithm``) and settings,
    ``joint=True``, the joint version of ``spec`` (``AgentSpec.joint_of``)."""
    check = spec.check_config
    if name in PAPER_SETUPS:
        check = WorkerSettingsCheck(name, PAPER_SETUPS[name])
    return dataclasses.replace(
        spec,
        name=name,
        joint=True,
        joint_of=spec.name,
        description=description,
        check_config=check,
        task_sampling=TASK_SAMPLING.get(name, "fixed"),
    )


def _spec_of(module_name: str, agent: str) -> AgentSpec | None:
    """The spec named ``agent`` of ``benchgen_agents.MODULE_NAME``; None if that package is absent."""
    try:
        module = importlib.import_module(f"benchgen_agents.{module_name}")
    except ModuleNotFoundError as exc:
        if exc.name == f"benchgen_agents.{module_name}":
            return None
        raise
    return next((s for s in module.SPECS if s.name == agent), None)


#: (joint agent, its single-task agent's module and name, description)
JOINT_AGENTS = (
    ("ppo_joint", "ppo", "ppo", "PPO trained jointly on a split's train tasks (Nichol et al. 2018)"),
    (
        "rainbow_joint",
        "rainbow",
        "rainbow",
        "Rainbow (C51) trained jointly on a split's train tasks (Nichol et al. 2018)",
    ),
    (
        "rainbow_iqn_joint",
        "rainbow_iqn",
        "rainbow_iqn",
        "Rainbow-IQN trained jointly on a split's train tasks (Nichol et al. 2018's procedure)",
    ),
)


def _specs() -> list[AgentSpec]:
    specs = []
    for name, module_name, agent, description in JOINT_AGENTS:
        spec = _spec_of(module_name, agent)
        if spec is not None:
            specs.append(joint_variant(spec, name, description))
    return specs


SPECS = _specs()
