"""The shared agents: every agent runs on every suite through the ``benchgen_agents`` hook.

Each agent lives in its own module or folder and exposes ``SPECS`` (a list of ``AgentSpec``);
heavy imports (torch, stable-baselines3) happen inside the factories, so listing agents stays
fast. An algorithm is a folder of one shape (``config.py``, ``network.py``, ``learner.py``,
``agent.py``, the shared parts in ``common/``, ``value_based/`` and the like); the agents that
learn nothing (random, fixed action, frame random) are single files. ``README.md`` in this
folder describes the shape and says where each algorithm's parts are.
"""

from __future__ import annotations

import importlib

import benchgen

#: agent modules, in the order ``benchgen list`` shows them
AGENT_MODULES = (
    "random_agent",
    "fixed_action",
    "dqn",
    "rainbow",
    "rainbow_iqn",
    "ppo",
    "jerk",
    "joint",
    "sarsa",
    "frame_random",
    "planning",
    "brute",
)


@benchgen.hookimpl
def benchgen_agents():
    specs = []
    for name in AGENT_MODULES:
        specs.extend(importlib.import_module(f"{__name__}.{name}").SPECS)
    return specs
