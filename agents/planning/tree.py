"""What the ALE paper's two planners share: search-tree nodes and the agent that plans every action.

Bellemare et al. 2013, section 3.2: the planners use the emulator as a generative model, "applied
online to select an action at every time step (every five frames) until the game was over". The
emulator is reached through the suite's ``clone_state`` capability (:mod:`benchgen.capabilities`):
each plan runs inside ``Emulators.sandbox(i)``, so the real episode, which the suite records, never
sees a simulated frame. Budgets count simulated emulator frames, as the paper's appendix C does
("maximum frames emulated per action"): one simulated agent step is ``frames_per_step`` frames.

:class:`PlannerAgent` is the shared loop (act, learn, save, load); :mod:`.brfs` and :mod:`.uct`
define ``plan``. The planners learn nothing: ``learn`` plays the unit's frames, planning each
action, and ``act`` plans the same way in an evaluation round's env. What a checkpoint holds is the
random generator; search trees are dropped at every checkpoint boundary a run resumes from (a
resumed unit starts new episodes, so no tree would match), so a run resumes at episode boundaries.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from benchgen.agent import Agent, AgentEnvironment
from benchgen.errors import UsageError
from benchgen_agents.common.checkpoint_io import save_json


class Node:
    """One emulator state reached in a search: how it was reached and what the search learned."""

    __slots__ = (
        "state",
        "key",
        "reward",
        "terminal",
        "depth",
        "parent",
        "children",
        "alias",
        "keys",
        "visits",
        "value",
    )

    def __init__(self, state: Any, key: bytes | None, reward: float, terminal: bool, depth: int, parent=None):
        self.state = state  # the emulator state (Emulators.clone_state); None once it is not needed
        self.key = key  # Emulators.state_key of the state (duplicate pruning, tree reuse)
        self.reward = reward  # the reward of the step that led here (the paper's immediate-return)
        self.terminal = terminal  # the game ended on that step
        self.depth = depth  # agent steps below the search's first root
        self.parent = parent
        self.children: dict[int, Node] = {}  # action -> child
        self.alias: dict[int, int] = {}  # a pruned action -> the action whose state it reached
        self.keys: dict[bytes, int] = {}  # state key -> the child action that reached it
        self.visits = 0
        self.value = 0.0  # UCT: the average return; BrFS: the best discounted return


class PlannerAgent(Agent):
    """Plans every action of every sub-environment with the emulator (module docstring)."""

    def __init__(self, config: Any, environment: AgentEnvironment):
        super().__init__(config, environment)
        if not hasattr(self.action_space, "n"):
            raise UsageError(f"the planners need a discrete action space, got {self.action_space}")
        self.num_actions = int(self.action_space.n)
        self.frames_per_step = int(environment.frames_per_step)
        self.rng = np.random.default_rng(config.seed_offset)
        self._seeded_for: int | None = None
        self.roots: dict[int, Node] = {}  # sub-environment -> the tree kept for its next action
        #: simulated frames of the last plan of each sub-environment (tests, logs)
        self.last_frames: dict[int, int] = {}

    # -- the agent protocol --------------------------------------------------------------------
    def use_emulators(self, emulators) -> None:
        if emulators is not self.emulators:
            self.roots = {}  # trees of another env
        super().use_emulators(emulators)

    def learn(self, env, ctx) -> None:
        if self._seeded_for is None:
            self.rng = np.random.default_rng(ctx.seed + self.config.seed_offset)
            self._seeded_for = ctx.seed
        env.reset(seed=ctx.reset_seed)
        while not ctx.finished:
            _, _, terminated, truncated, _ = env.step(self.act(np.zeros(env.num_envs), greedy=True))
            for i in np.flatnonzero(np.asarray(terminated) | np.asarray(truncated)):
                self.roots.pop(int(i), None)  # a new episode: nothing to reuse
            ctx.maybe_checkpoint()

    def act(self, observations, greedy: bool = True) -> np.ndarray:
        """One planned action per row (sub-environment ``i`` of the current env's emulators); the
        observations themselves are not read."""
        if self.emulators is None:
            raise RuntimeError("a planner acts through the emulator: the runner gives it one (Agent.use_emulators)")
        actions = np.empty(len(observations), dtype=np.int64)
        for i in range(len(observations)):
            with self.emulators.sandbox(i):
                actions[i] = self.plan(i)
        return actions

    def save(self, directory: Path) -> None:
        state = {"bit_generator": self.rng.bit_generator.state, "seeded_for": self._seeded_for}
        save_json(state, Path(directory) / "planner.json")

    def load(self, directory: Path) -> None:
        path = Path(directory) / "planner.json"
        if not path.is_file():
            return  # a checkpoint of another agent: nothing to restore
        state = json.loads(path.read_text())
        self.rng.bit_generator.state = state["bit_generator"]
        self._seeded_for = state["seeded_for"]
        self.roots = {}

    # -- planning ------------------------------------------------------------------------------
    def plan(self, i: int) -> int:
        """The action to take now in sub-environment ``i`` (inside its sandbox)."""
        raise NotImplementedError

    def root(self, i: int, reuse: bool, prune: bool) -> Node:
        """The tree to search from: the subtree kept from the last plan when its root is the state
        the emulator is in now (Bellemare et al. 2013, appendix B: "if root(Psi) != s then Psi <-
        empty search tree"), else a new root."""
        em = self.emulators
        key = em.state_key(i) if (reuse or prune) else None
        kept = self.roots.pop(i, None)
        if reuse and kept is not None and kept.key == key:
            kept.parent = None  # the rest of the old tree can go
            kept.state = em.clone_state(i)  # the real state (random generator included)
            return kept
        return Node(em.clone_state(i), key, 0.0, False, 0)

    def expand(self, i: int, node: Node, action: int, prune: bool) -> Node | None:
        """Emulate ``action`` from ``node`` and add the child (one simulated agent step); None when
        ``prune`` finds its state equal to a sibling's (the paper's duplicate actions, section 3.2.1),
        the action then being recorded as an alias of that sibling's."""
        em = self.emulators
        em.restore_state(i, node.state)
        reward, done = em.simulate(i, action)
        key = em.state_key(i) if prune else None
        if prune and key in node.keys:
            node.alias[action] = node.keys[key]
            return None
        child = Node(None if done else em.clone_state(i), key, reward, done, node.depth + 1, node)
        node.children[action] = child
        if prune:
            node.keys[key] = action
        return child

    def keep(self, i: int, root: Node, action: int) -> None:
        """Keep the subtree of ``action`` for the next plan (tree reuse)."""
        action = root.alias.get(action, action)
        child = root.children.get(action)
        if child is not None and not child.terminal:
            self.roots[i] = child
