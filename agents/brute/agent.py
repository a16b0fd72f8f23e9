"""The Brute (Bellemare et al. 2015; Machado et al. 2018, section 4.1), an agent built to exploit a
deterministic emulator.

Machado et al. 2018: "It uses the agent's trajectory as state representation, assigning individual
values to each state. Because of the ALE's determinism, a single sample from each state-action pair
is sufficient for a perfect estimate of the agent's return up to that point. The Brute maintains a
partial history tree that contains all visited histories. Each node, associated with a history,
maintains an action-conditional transition function and a reward function. The Brute estimates
the value for any history-action pair using bottom-up dynamic programming. The agent follows the
best trajectory found so far, with infrequent random actions used to search for better
trajectories." Their Table 1 shows what it is worth once the emulator is not deterministic: under
sticky actions (0.25) its scores collapse (Asterix 6909 -> 308).

Here a history is the sequence of actions the agent chose since the episode began (it never
reads an observation, so it needs nothing from the suite but its rewards). For each history ``h``
and action ``a`` tried there the node keeps maximum-likelihood estimates, as the paper's version
for stochastic emulators does: the mean reward ``r(h, a)`` of the step and the frequency
``p(h, a)`` with which the episode ended on it. After every episode the values along its path are
recomputed bottom-up, ``Q(h, a) = r(h, a) + (1 - p(h, a)) V(ha)`` and ``V(h) = max_a Q(h, a)``
over the actions tried (undiscounted: the episode's score). The agent takes ``argmax_a Q(h, a)``
(ties: uniformly) and, with probability ``epsilon``, or at a history never seen before, a
uniformly random action. Returns are the benchmark's raw rewards (``AgentNeeds.reward =
"benchmark"``).

What the extended abstract does not state, and what benchgen chose: ``epsilon = 0.005`` (the value
of the reimplementation shipped with OpenAI's Gym Retro, which follows Machado et al.); an episode
cut by a time limit ends the history like a game over.

The Brute is scored on its training episodes (Machado et al.'s last 100): a protocol with separate
evaluation phases, whose episodes ``act`` would have to play without knowing when they begin, is
refused in one line. The tree is saved with every checkpoint (``brute.npz``): a resumed run goes on
from it, at an episode boundary (the episodes in progress at a stop are lost, as in every run).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from benchgen.agent import Agent, AgentEnvironment
from benchgen.errors import UsageError
from benchgen_agents.brute.config import BruteConfig
from benchgen_agents.common.checkpoint_io import as_json, as_npz, save_files


class _Node:
    """A history: per action tried there, ``[count, reward sum, ends, Q, child]`` (the ML estimates:
    times taken, their summed rewards, times the episode ended on that step; ``Q(h, a)``; the
    history one step longer)."""

    __slots__ = ("edges",)

    def __init__(self):
        self.edges: dict[int, list] = {}

    def value(self) -> float:
        return max((e[3] for e in self.edges.values() if e[0]), default=0.0)

    def child(self, action: int) -> _Node:
        edge = self.edges.get(action)
        if edge is None:
            edge = self.edges[action] = [0, 0.0, 0, 0.0, _Node()]
        return edge[4]


COUNT, REWARD, ENDS, Q, CHILD = range(5)


class BruteAgent(Agent):
    """See the module docstring."""

    def __init__(self, config: BruteConfig, environment: AgentEnvironment):
        super().__init__(config, environment)
        if not hasattr(self.action_space, "n"):
            raise UsageError(f"the Brute needs a discrete action space, got {self.action_space}")
        self.num_actions = int(self.action_space.n)
        self.rng = np.random.default_rng(config.seed_offset)
        self._seeded_for: int | None = None
        self.root = _Node()
        self.episodes = 0

    def _choose(self, node: _Node, explore: bool) -> int:
        tried = {a: e[Q] for a, e in node.edges.items() if e[COUNT]}
        if not tried or (explore and self.rng.random() < self.config.epsilon):
            return int(self.rng.integers(self.num_actions))
        best = max(tried.values())
        ties = sorted(a for a, q in tried.items() if q == best)
        return ties[int(self.rng.integers(len(ties)))] if len(ties) > 1 else ties[0]

    def learn(self, env, ctx) -> None:
        if self._seeded_for is None:
            self.rng = np.random.default_rng(ctx.seed + self.config.seed_offset)
            self._seeded_for = ctx.seed
        n = env.num_envs
        env.reset(seed=ctx.reset_seed)
        paths: list[list[tuple[_Node, int, float]]] = [[] for _ in range(n)]  # (history, action, reward)
        cursors = [self.root] * n
        while not ctx.finished:
            actions = np.array([self._choose(cursors[i], explore=True) for i in range(n)], dtype=np.int64)
            _, rewards, terminated, truncated, _ = env.step(actions)
            ended = np.asarray(terminated) | np.asarray(truncated)
            for i in range(n):
                node, action = cursors[i], int(actions[i])
                paths[i].append((node, action, float(rewards[i])))
                if ended[i]:
                    self._backup(paths[i])
                    paths[i], cursors[i] = [], self.root
                else:
                    cursors[i] = node.child(action)
            ctx.maybe_checkpoint()

    def _backup(self, path: list[tuple[_Node, int, float]]) -> None:
        """Count the episode's steps into the estimates, then recompute Q bottom-up along it."""
        last = len(path) - 1
        for k, (node, action, reward) in enumerate(path):
            node.child(action)  # the edge exists
            edge = node.edges[action]
            edge[COUNT] += 1
            edge[REWARD] += reward
            edge[ENDS] += k == last
        for node, action, _ in reversed(path):
            edge = node.edges[action]
            n = edge[COUNT]
            edge[Q] = edge[REWARD] / n + (1.0 - edge[ENDS] / n) * edge[CHILD].value()
        self.episodes += 1

    def act(self, observations, greedy: bool = True) -> np.ndarray:
        """The greedy first action of an episode for every row: the Brute's policy is a function of
        the history, which ``act`` is not told (the runner scores it on its training episodes)."""
        return np.array([self._choose(self.root, explore=False) for _ in range(len(observations))], dtype=np.int64)

    def save(self, directory: Path) -> None:
        """The tree as flat arrays (``brute.npz``; a history can be thousands of steps deep, too
        deep for pickle's recursion), the generator and the episode count (``brute.json``)."""
        directory = Path(directory)
        parents, actions, stats, queue = [], [], [], [(self.root, -1, -1)]
        ids = 0
        while queue:  # depth-first: a node's id is its position, larger than its parent's
            node, parent, action = queue.pop()
            me = ids
            ids += 1
            parents.append(parent)
            actions.append(action)
            for a, e in node.edges.items():
                stats.append((me, a, e[COUNT], e[REWARD], e[ENDS], e[Q]))
                queue.append((e[CHILD], me, a))
        edges = np.array(stats, dtype=np.float64).reshape(-1, 6)
        arrays = {"parents": np.array(parents, np.int64), "actions": np.array(actions, np.int64), "edges": edges}
        state = {
            "bit_generator": self.rng.bit_generator.state,
            "seeded_for": self._seeded_for,
            "episodes": self.episodes,
        }
        save_files({directory / "brute.npz": as_npz(arrays), directory / "brute.json": as_json(state)})

    def load(self, directory: Path) -> None:
        directory = Path(directory)
        if not (directory / "brute.json").is_file():
            return  # a checkpoint of another agent
        state = json.loads((directory / "brute.json").read_text())
        with np.load(directory / "brute.npz") as data:
            parents, actions, edges = data["parents"], data["actions"], data["edges"]
        nodes = [_Node() for _ in range(len(parents))]
        for me in range(1, len(parents)):
            nodes[int(parents[me])].edges[int(actions[me])] = [0, 0.0, 0, 0.0, nodes[me]]
        for me, a, count, reward, ends, q in edges.tolist():
            edge = nodes[int(me)].edges[int(a)]
            edge[COUNT], edge[REWARD], edge[ENDS], edge[Q] = int(count), reward, int(ends), q
        self.root = nodes[0]
        self.rng.bit_generator.state = state["bit_generator"]
        self._seeded_for, self.episodes = state["seeded_for"], state["episodes"]


def check_suite(suite) -> None:
    """The Brute is scored on its training episodes: refuse protocols with evaluation phases."""
    if suite.evaluation_schedule() is not None:
        raise UsageError(
            f"the Brute is scored on its training episodes (Machado et al. 2018), but this {suite.name} protocol "
            "scores separate evaluation episodes; choose a protocol without them (atari_saber: --protocol machado2018)"
        )
