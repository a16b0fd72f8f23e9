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
        self.traces = np.zeros_like(self.weights)
        self.live = np.zeros(len(self.weights), dtype=bool)  # rows with a non-zero trace
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
        for name in ("weights", "traces"):
            old = getattr(self, name)
            grown = np.zeros((capacity, self.num_actions), dtype=np.float32)
            grown[: len(old)] = old
            setattr(self, name, grown)
        live = np.zeros(capacity, dtype=bool)
        live[: len(self.live)] = self.live
        self.live = live

    # -- values and updates ----------------------------------------------------------------
    def values(self, rows: np.ndarray) -> np.ndarray:
        """``Q(s, .)`` for a state whose active features have weight rows ``rows``."""
        return self.weights[rows].sum(axis=0, dtype=np.float64)

    def clear_traces(self) -> None:
        """Episode start: all traces zero."""
        live = np.flatnonzero(self.live)
        self.traces[live] = 0.0
        self.live[live] = False

    def update(self, rows: np.ndarray, action: int, delta: float) -> None:
        """One step: decay the traces, mark ``rows`` for ``action``, move the weights along the
        traces by ``alpha / max_active * delta`` (the error ``delta`` computed by the caller
        with the values of this step)."""
        self.max_active = max(self.max_active, len(rows))
        live = np.flatnonzero(self.live)
        if len(live):
            decayed = self.traces[live] * np.float32(self.gamma * self.lam)
            dead = (decayed < self.trace_threshold).all(axis=1)
            decayed[decayed < self.trace_threshold] = 0.0
            self.traces[live] = decayed
            self.live[live[dead]] = False
        if self.trace == "replacing":
            self.traces[rows, action] = 1.0
        else:
            np.add.at(self.traces[:, action], rows, 1.0)
        self.live[rows] = True
        live = np.flatnonzero(self.live)
        self.weights[live] += np.float32(self.alpha / self.max_active * delta) * self.traces[live]

    # -- state -------------------------------------------------------------------------------
    def state(self) -> dict[str, np.ndarray]:
        """What :meth:`load_state` needs to continue exactly: the rows in use only."""
        n = self.rows_used
        return {
            "features": self.features,
            "weights": self.weights[:n],
            "traces": self.traces[:n],
            "max_active": np.array(self.max_active),
        }

    def load_state(self, state: dict[str, np.ndarray]) -> None:
        features = np.asarray(state["features"], dtype=np.int64)
        if len(features) and features.max() >= self.num_features:
            raise ValueError("the saved weights are of a larger feature set than this learner's")
        self.row_of = np.zeros(self.num_features, dtype=np.int32)
        self.features = np.empty(0, dtype=np.int64)
        self.weights = np.zeros((max(1024, len(features)), self.num_actions), dtype=np.float32)
        self.traces = np.zeros_like(self.weights)
        self.live = np.zeros(len(self.weights), dtype=bool)
        self.rows(features)
        n = len(features)
        self.weights[:n] = state["weights"]
        self.traces[:n] = state["traces"]
        self.live[:n] = (self.traces[:n] != 0).any(axis=1)
        self.max_active = int(state["max_active"])
