"""Sarsa(lambda) with linear function approximation over sparse binary features.

Bellemare et al. 2013, section 3.1: "we augmented the SARSA(lambda) algorithm with linear
function approximation, replacing traces, and epsilon-greedy exploration", after Sutton and
Barto (1998), Figure 8.8 (linear, gradient-descent Sarsa(lambda) with binary features). The
action value is ``Q(s, a) = sum over the active features i of s of w[i, a]``; each step

    e <- gamma * lambda * e                      (traces decay)
    e[i, a_t] <- 1 for the active features i     (replacing; accumulating: += 1)
    delta <- r + gamma * Q(s', a') - Q(s, a_t)   (Q(s', .) = 0 when the episode ended)
    w <- w + (alpha / m) * delta * e

Two details the papers' text leaves out and their released agents (Machado's Sarsa, which states
it follows the ALE paper's code: "Marc used such approach in his JAIR paper") do, done here too:

* the step size is divided by ``m``, the largest number of active features seen so far, so that
  ``alpha`` is a fraction of the error corrected in one step whatever the feature count (and never
  grows: ``m`` only increases);
* traces below ``trace_threshold`` (0.01) are set to zero, keeping them sparse.

Storage is sparse too: a feature gets a row of weights (one per action) the first time it is
active (:class:`SparseSarsaLambda` maps feature indices to rows), so feature sets of tens of
millions of features (Blob-PROST) cost memory only for the features a run meets.
"""

from __future__ import annotations

import numpy as np

#: trace kinds
TRACES = ("replacing", "accumulating")


class SparseSarsaLambda:
    """The learner: weights, traces and the Sarsa(lambda) update on active-feature index lists.

    Args:
        num_features: size of the feature space (indices ``0 .. num_features - 1``).
        num_actions: discrete actions.
        alpha, gamma, lam: step size (before division by the largest active count), discount,
            trace decay.
        trace: "replacing" (the ALE paper) or "accumulating".
        trace_threshold: traces below it are zeroed.
    """

    def __init__(
        self,
        num_features: int,
        num_actions: int,
        alpha: float,
        gamma: float,
        lam: float,
        trace: str = "replacing",
        trace_threshold: float = 0.01,
    ):
        if trace not in TRACES:
            raise ValueError(f"trace must be one of {TRACES}, not {trace!r}")
        self.num_features, self.num_actions = int(num_features), int(num_actions)
        self.alpha, self.gamma, self.lam = float(alpha), float(gamma), float(lam)
        self.trace, self.trace_threshold = trace, float(trace_threshold)
        # feature -> 1 + its row (0: never seen); zeros, so untouched pages of a huge feature space
        # cost no memory
        self.row_of = np.zeros(self.num_features, dtype=np.int32)
        self.features = np.empty(0, dtype=np.int64)  # row -> feature
        self.weights = np.zeros((1024, self.num_actions), dtype=np.float32)
        # the non-zero traces, compact: their (row, action) entries of the weights, flattened
        # (``row * num_actions + action``), their values, and each entry's position among them
        # (-1: none); a replacing trace is non-zero for the actions taken only, so this is far
        # smaller than a trace per row and action
        self.trace_entries = np.empty(0, dtype=np.int64)
        self.trace_values = np.zeros(0, dtype=np.float32)
        self.trace_position = np.full(self.weights.size, -1, dtype=np.int32)
        self.max_active = 1

    # -- rows --------------------------------------------------------------------------------
    @property
    def rows_used(self) -> int:
        return len(self.features)

    def rows(self, active: np.ndarray) -> np.ndarray:
        """The weight rows of the features ``active`` (unique indices), given rows if new."""
        rows = self.row_of[active]
        new = rows == 0
        if new.any():
            fresh = np.asarray(active)[new]
            start = len(self.features)
            self._grow(start + len(fresh))
            self.row_of[fresh] = np.arange(start + 1, start + len(fresh) + 1, dtype=np.int32)
            self.features = np.concatenate([self.features, fresh.astype(np.int64)])
            rows = self.row_of[active]
        return rows.astype(np.int64) - 1

    def _grow(self, needed: int) -> None:
        if needed <= len(self.weights):
            return
        capacity = max(needed, 2 * len(self.weights))
        weights = np.zeros((capacity, self.num_actions), dtype=np.float32)
        weights[: len(self.weights)] = self.weights
        position = np.full(capacity * self.num_actions, -1, dtype=np.int32)
        position[: len(self.trace_position)] = self.trace_position
        self.weights, self.trace_position = weights, position

    # -- values and updates ----------------------------------------------------------------
    def values(self, rows: np.ndarray) -> np.ndarray:
        """``Q(s, .)`` for a state whose active features have weight rows ``rows``."""
        return self.weights[rows].sum(axis=0).astype(np.float64)

    def trace_of(self, row: int, action: int) -> float:
        """The eligibility trace of feature row ``row`` for ``action``."""
        at = self.trace_position[row * self.num_actions + action]
        return float(self.trace_values[at]) if at >= 0 else 0.0

    def clear_traces(self) -> None:
        """Episode start: all traces zero."""
        self.trace_position[self.trace_entries] = -1
        self.trace_entries = np.empty(0, dtype=np.int64)
        self.trace_values = np.zeros(0, dtype=np.float32)

    def update(self, rows: np.ndarray, action: int, delta: float) -> None:
        """One step: decay the traces, mark ``rows`` for ``action``, move the weights along the
        traces by ``alpha / max_active * delta`` (the error ``delta`` computed by the caller
        with the values of this step)."""
        self.max_active = max(self.max_active, len(rows))
        # e <- gamma * lambda * e, the traces below the threshold set to zero; their entries are
        # dropped once they are half of all (an entry at zero changes no weight, and a trace set
        # again reuses it)
        values = self.trace_values
        values *= np.float32(self.gamma * self.lam)
        values[values < self.trace_threshold] = 0.0
        live = np.count_nonzero(values)
        if live < len(values) // 2:
            keep = values > 0
            self.trace_position[self.trace_entries[~keep]] = -1
            self.trace_entries, values = self.trace_entries[keep], values[keep]
            self.trace_position[self.trace_entries] = np.arange(len(values), dtype=np.int32)
        # the active features' traces for the action taken: replaced by 1, or 1 added
        entries = rows * self.num_actions + action
        at = self.trace_position[entries]
        new = at < 0
        if new.any():
            added = entries[new]
            self.trace_position[added] = np.arange(len(values), len(values) + len(added), dtype=np.int32)
            self.trace_entries = np.concatenate([self.trace_entries, added])
            values = np.concatenate([values, np.zeros(len(added), dtype=np.float32)])
            at = self.trace_position[entries]
        if self.trace == "replacing":
            values[at] = 1.0
        else:
            values[at] += 1.0  # rows are unique: no entry repeats
        self.trace_values = values
        # w <- w + alpha / m * delta * e
        flat = self.weights.reshape(-1)
        flat[self.trace_entries] += np.float32(self.alpha / self.max_active * delta) * values

    # -- state -------------------------------------------------------------------------------
    def state(self) -> dict[str, np.ndarray]:
        """What :meth:`load_state` needs to continue exactly: the rows in use only."""
        return {
            "features": self.features,
            "weights": self.weights[: self.rows_used],
            "trace_entries": self.trace_entries,
            "trace_values": self.trace_values,
            "max_active": np.array(self.max_active),
        }

    def load_state(self, state: dict[str, np.ndarray]) -> None:
        features = np.asarray(state["features"], dtype=np.int64)
        if len(features) and features.max() >= self.num_features:
            raise ValueError("the saved weights are of a larger feature set than this learner's")
        self.row_of = np.zeros(self.num_features, dtype=np.int32)
        self.features = np.empty(0, dtype=np.int64)
        self.weights = np.zeros((max(1024, len(features)), self.num_actions), dtype=np.float32)
        self.trace_position = np.full(self.weights.size, -1, dtype=np.int32)
        self.rows(features)  # rows in the saved order
        self.weights[: len(features)] = state["weights"]
        self.trace_entries = np.asarray(state["trace_entries"], dtype=np.int64)
        self.trace_values = np.asarray(state["trace_values"], dtype=np.float32)
        self.trace_position[self.trace_entries] = np.arange(len(self.trace_entries), dtype=np.int32)
        self.max_active = int(state["max_active"])
