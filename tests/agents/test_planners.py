"""The ALE paper's planners (Bellemare et al. 2013, section 3.2) on the agent kit's runner game.

``kit_pixels`` offers ``clone_state`` (:mod:`benchgen.testing.agent_suites`): a runner on a
track of 16 cells, a wall every G cells that only a jumping move passes, +1 per cell forward and
+10 for reaching the end. Positions are hand-made by setting the runner's cell.
"""

from __future__ import annotations

import numpy as np
import pytest

from benchgen.agent import AgentEnvironment
from benchgen.testing.agent_suites import SEMANTICS, TRACK, RunnerVectorEnv
from benchgen_agents.planning.brfs import BrFSAgent
from benchgen_agents.planning.config import BrFSConfig, UCTConfig
from benchgen_agents.planning.uct import UCTAgent


def runner_at(cell: int, task: str = "walls-5") -> RunnerVectorEnv:
    env = RunnerVectorEnv([task], seed=0)
    env.reset()
    env.x[0] = cell
    env._draw(0)
    return env


def planner(cls, config, env):
    agent = cls(config, AgentEnvironment(env.single_observation_space, env.single_action_space, env.frames_per_step))
    agent.use_emulators(env.emulators())
    return agent


def real_state(env):
    return int(env.x[0]), int(env.t[0]), float(env.score[0]), env.stack.copy()


@pytest.mark.parametrize(
    "cls,config",
    [
        (UCTAgent, UCTConfig(simulations_per_action=100)),  # the paper's horizon and exploration constant
        (BrFSAgent, BrFSConfig(max_frames_per_action=4 * 400)),
    ],
)
def test_finds_the_obvious_best_action(cls, config):
    # one cell before the end, a wall in the way: only right_jump finishes (+1 +10)
    env = runner_at(TRACK - 1)
    agent = planner(cls, config, env)
    before = real_state(env)
    assert agent.act(np.zeros(1)).tolist() == [SEMANTICS["right_jump"]]
    after = real_state(env)
    assert after[:3] == before[:3] and np.array_equal(after[3], before[3]), "planning changed the real game"
    assert agent.last_frames[0] > 0


def test_duplicate_actions_are_searched_once():
    # at cell 2 of walls-3 (wall at 3): noop, right (blocked) and jump stay; left and left_jump
    # both go to cell 1; right_jump passes: three distinct states
    env = runner_at(2, "walls-3")
    agent = planner(UCTAgent, UCTConfig(simulations_per_action=50, max_depth_frames=20, reuse_tree=False), env)
    with agent.emulators.sandbox(0):
        root = agent.root(0, reuse=False, prune=True)
        while root.visits < 50:
            agent._sample(0, root, 5)
    assert len(root.children) == 3
    groups = {}
    for action in range(6):
        groups.setdefault(root.alias.get(action, action), set()).add(action)
    assert sorted(map(sorted, groups.values())) == [[0, 2, 3], [1, 4], [5]]


def test_tree_reuse_keeps_the_subtree_of_the_action_taken():
    env = runner_at(0)
    agent = planner(UCTAgent, UCTConfig(simulations_per_action=60, max_depth_frames=40), env)
    action = int(agent.act(np.zeros(1))[0])
    kept = agent.roots[0]
    visits = kept.visits
    assert visits > 0
    env.step(np.array([action]))
    agent.act(np.zeros(1))
    assert kept.visits >= 60 and kept.parent is None  # the next search went on from it
    # under a state the kept root does not match (the game went elsewhere), a new tree starts
    other = agent.roots[0]
    env.step(np.array([SEMANTICS["left"]]))
    agent.act(np.zeros(1))
    assert agent.roots.get(0) is not other


def test_uct_budget_counts_simulated_frames():
    env = runner_at(0)
    agent = planner(UCTAgent, UCTConfig(simulations_per_action=10_000, max_frames_per_action=400), env)
    agent.act(np.zeros(1))
    # one sample past the cap at most: its expansion and a rollout to the 300-frame horizon
    assert 400 <= agent.last_frames[0] <= 400 + 4 + 300


def test_brfs_spends_its_budget_breadth_first():
    env = runner_at(0)
    agent = planner(BrFSAgent, BrFSConfig(max_frames_per_action=4 * 6), env)  # the root's six children
    agent.act(np.zeros(1))
    assert agent.last_frames[0] == 24
