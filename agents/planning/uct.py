"""UCT (Kocsis and Szepesvari 2006) as Bellemare et al. 2013 ran it on the ALE (section 3.2, appendix B).

Appendix B's Algorithm 2, line by line: ``sample`` walks down the tree from the root, choosing
with UCB among a node's children once every action has been tried there, and otherwise emulating
an untried action to add a child (the new child is a leaf, where the walk stops); from that leaf a
uniformly random rollout runs to the search horizon ``m`` (appendix C: 300 frames, 60 agent steps
of 5 frames), its discounted return ``R`` is backed up (``update-value``: add the node's immediate
reward, update its average return, pass ``gamma * R`` to the parent). Samples repeat until the
root has been visited ``k`` times (appendix C: 500 simulations per action); the action taken is
the root's most visited child. Section 3.2.1's two departures from textbook UCT are here: actions
whose emulated state equals a sibling's are duplicates, searched once (``prune_duplicates``), and
the subtree under the action taken is kept for the next step (``reuse_tree``; with it the root
may already hold visits, and fewer new samples are drawn, as Algorithm 2's "until visits(root) =
k" implies).

Algorithm 3's UCB line reads ``average-return(c) + sqrt(log[visits(c)] / visits(n))``, the two
counts swapped against UCB1 (Auer et al. 2002), which this module follows:
``average-return(c) + C * sqrt(log visits(n) / visits(c))``, with appendix C's exploration
constant ``C = 0.1`` on the game's raw rewards (the paper normalizes nothing it mentions).
The discount is section 3.1's ``gamma = 0.999`` ("We also used the same discount factor").
"""

from __future__ import annotations

import math

from benchgen_agents.planning.config import UCTConfig
from benchgen_agents.planning.tree import Node, PlannerAgent


class UCTAgent(PlannerAgent):
    """UCT with the ALE paper's duplicate-action pruning and tree reuse (module docstring)."""

    def plan(self, i: int) -> int:
        c = self.config
        root = self.root(i, c.reuse_tree, c.prune_duplicates)
        horizon = max(1, c.max_depth_frames // self.frames_per_step)
        cap = c.max_frames_per_action
        frames = 0
        while root.visits < c.simulations_per_action and (not cap or frames < cap):
            frames += self._sample(i, root, horizon)
        self.last_frames[i] = frames
        action = self._most_visited(root)
        if c.reuse_tree:
            self.keep(i, root, action)
        return action

    def _sample(self, i: int, root: Node, horizon: int) -> int:
        """One sample (appendix B's ``sample``); returns the frames it simulated."""
        c, em, fps = self.config, self.emulators, self.frames_per_step
        node, frames = root, 0
        while not node.terminal and node.depth - root.depth < horizon:
            untried = self._untried(node)
            if untried:
                action = int(self.rng.choice(untried))
                child = self.expand(i, node, action, c.prune_duplicates)
                frames += fps
                if child is None:
                    continue  # a duplicate of a sibling: try another action of this node
                node = child
                break
            node = node.children[self._select(node)]
        ret = 0.0
        steps = horizon - (node.depth - root.depth)
        if not node.terminal and steps > 0:  # the rollout: uniformly random actions to the horizon
            em.restore_state(i, node.state)
            g = 1.0
            for action in self.rng.integers(0, self.num_actions, size=steps):
                reward, done = em.simulate(i, int(action))
                frames += fps
                ret += g * reward
                g *= c.discount
                if done:
                    break
        while True:  # update-value
            ret += node.reward
            node.visits += 1
            node.value += (ret - node.value) / node.visits
            if node is root:
                return frames
            node, ret = node.parent, c.discount * ret

    def _untried(self, node: Node) -> list[int]:
        return [a for a in range(self.num_actions) if a not in node.children and a not in node.alias]

    def _select(self, node: Node) -> int:
        """UCB1 over the children (module docstring on appendix B's swapped counts)."""
        log_n = math.log(max(node.visits, 1))
        best, best_value = -1, -math.inf
        for action, child in node.children.items():
            value = child.value + self.config.exploration * math.sqrt(log_n / child.visits)
            if value > best_value:
                best, best_value = action, value
        return best

    def _most_visited(self, root: Node) -> int:
        """The root's most visited child (ties: the higher average return, then the lower action)."""
        if not root.children:
            return int(self.rng.integers(self.num_actions))
        return max(root.children, key=lambda a: (root.children[a].visits, root.children[a].value, -a))


__all__ = ["UCTAgent", "UCTConfig"]
