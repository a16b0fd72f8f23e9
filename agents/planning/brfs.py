"""Breadth-first ("full tree") search as Bellemare et al. 2013 ran it on the ALE (section 3.2.1).

"Our first approach builds a search tree in a breadth-first fashion until a node limit is reached.
Once the tree is expanded, node values are updated recursively from the bottom of the tree to the
root. The agent then selects the action corresponding to the branch with the highest discounted
sum of rewards." The node limit is appendix C's "maximum frames emulated per action", 133,000:
every child costs one simulated agent step (5 frames), so about 26,600 children per action, three
levels of 18 actions and part of a fourth. A node's value is the best discounted sum of rewards
below it, ``V(n) = max_a [r(child) + gamma * V(child)]`` (0 at the leaves and at game over), with
section 3.1's ``gamma = 0.999``. Among branches of equal value the action is drawn uniformly (the
paper does not say; most of a short search's branches are worth 0). Children are expanded in a
random order of the actions, so a budget that ends inside a level favours no action.

Section 3.2.1 describes duplicate-action pruning and tree reuse as UCT's optimizations; here they
are options, off by default, as in the paper's breadth-first search.
"""

from __future__ import annotations

from collections import deque

from benchgen_agents.planning.tree import Node, PlannerAgent


class BrFSAgent(PlannerAgent):
    """Breadth-first search to a budget of simulated frames (module docstring)."""

    def plan(self, i: int) -> int:
        c, fps = self.config, self.frames_per_step
        root = self.root(i, c.reuse_tree, c.prune_duplicates)
        frames = 0
        queue = deque(self._frontier(root))
        while queue and frames + fps <= c.max_frames_per_action:
            node = queue.popleft()
            for action in self.rng.permutation(self.num_actions).tolist():
                if frames + fps > c.max_frames_per_action:
                    break
                if action in node.children or action in node.alias:
                    continue
                child = self.expand(i, node, action, c.prune_duplicates)
                frames += fps
                if child is not None and not child.terminal:
                    queue.append(child)
            else:
                if node is not root:
                    node.state = None  # fully expanded: its state is not needed again
        self.last_frames[i] = frames
        values = self._values(root)
        if not values:
            return int(self.rng.integers(self.num_actions))
        best = max(values.values())
        ties = sorted(a for a, v in values.items() if v == best)
        action = int(ties[int(self.rng.integers(len(ties)))])
        if c.reuse_tree:
            self.keep(i, root, action)
        return action

    def _frontier(self, root: Node) -> list[Node]:
        """The nodes still to expand, shallowest first: a new root, or a kept tree's nodes that
        still have a state and untried actions."""
        out, queue = [], deque([root])
        while queue:
            node = queue.popleft()
            tried = len(node.children) + len(node.alias)
            if not node.terminal and node.state is not None and tried < self.num_actions:
                out.append(node)
            queue.extend(node.children.values())
        return out

    def _values(self, root: Node) -> dict[int, float]:
        """Each root action's discounted sum of rewards along its best branch, bottom-up."""
        gamma = self.config.discount
        order, stack = [], [root]
        while stack:  # parents before children; reversed, children before parents
            node = stack.pop()
            order.append(node)
            stack.extend(node.children.values())
        for node in reversed(order):
            node.value = max((ch.reward + gamma * ch.value for ch in node.children.values()), default=0.0)
        return {a: ch.reward + gamma * ch.value for a, ch in root.children.items()}
