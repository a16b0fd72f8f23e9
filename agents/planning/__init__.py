"""The ALE paper's planners, breadth-first search and UCT (Bellemare et al. 2013, section 3.2).

They plan with the emulator itself, so they need the suite's ``clone_state`` capability
(:mod:`benchgen.capabilities`): a suite that does not offer it refuses them in one line.
``benchgen run atari_saber uct --protocol ale2013`` plays as the paper did (an action every 5
frames, 500 simulations of up to 300 frames per action); the paper's budgets are large (about 15
seconds per action on its machines), see each config's fields to reduce them. The planners learn
nothing: the ale2013 preset scores them, like its learners, on 500 evaluation episodes after
training, where the paper ran its planners for 10 episodes per game; a protocol file with
``evaluation_episodes: 10`` and a training budget of one step (``--frames 5``) is the paper's
setup (``benchmarks/ale_agents/ale2013_small.yaml``; ``benchmarks/ale_planners_runs.sh`` runs a
smaller one).

``config.py`` holds both planners' settings, ``brfs.py`` and ``uct.py`` one planner each, and
``tree.py`` the search tree and the acting loop they share; the emulator is their model, so they
have no network.
"""

from __future__ import annotations

from benchgen.agent import AgentNeeds, AgentSpec
from benchgen_agents.planning.config import BrFSConfig, UCTConfig


def _brfs(config, environment):
    from benchgen_agents.planning.brfs import BrFSAgent

    return BrFSAgent(config, environment)


def _uct(config, environment):
    from benchgen_agents.planning.uct import UCTAgent

    return UCTAgent(config, environment)


#: both plan with the emulator and ignore observations and the learning reward
PLANNER_NEEDS = AgentNeeds(reward="benchmark", capabilities=("clone_state",))

SPECS = [
    AgentSpec(
        name="brfs",
        config_class=BrFSConfig,
        factory=_brfs,
        description="breadth-first search with the emulator, 133,000 frames per action (Bellemare et al. 2013)",
        needs=PLANNER_NEEDS,
        default_num_envs=1,
    ),
    AgentSpec(
        name="uct",
        config_class=UCTConfig,
        factory=_uct,
        description="UCT with the emulator, 500 simulations of 300 frames per action (Bellemare et al. 2013)",
        needs=PLANNER_NEEDS,
        default_num_envs=1,
    ),
]
