"""Settings of the Sarsa(lambda) feature agent, with each feature set's published parameters.

Bellemare et al. 2013, appendix C ("Experimental Parameters"), for all its learning agents:
discount 0.999, exploration rate 0.05; per feature set, the learning rate and trace decay:

| features | alpha | lambda | source |
|---|---|---|---|
| Basic, BASS | 0.5 | 0.9 | appendix C, "BASS and Basic" |
| DISCO | 0.1 | 0.9 | appendix C, "DISCO" |
| RAM | 0.2 | 0.5 | appendix C, "RAM-based" |
| LSH | 0.5 | 0.5 | appendix C, "LSH" |
| Blob-PROST | 0.5 | 0.9 | Liang et al. 2016's released configuration (b-pro ``conf/bpro.cfg``), with gamma 0.99 and epsilon 0.01 |

A setting left at None takes the chosen feature set's value from :data:`PAPER_PARAMETERS`.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchgen_agents.ale_features import FEATURE_SETS

_ALE = {"gamma": 0.999, "epsilon": 0.05}  # appendix C, "All agents"
#: feature set -> its paper's alpha, lambda, gamma, epsilon
PAPER_PARAMETERS: dict[str, dict[str, float]] = {
    "basic": {"alpha": 0.5, "lam": 0.9, **_ALE},
    "bass": {"alpha": 0.5, "lam": 0.9, **_ALE},
    "disco": {"alpha": 0.1, "lam": 0.9, **_ALE},
    "ram": {"alpha": 0.2, "lam": 0.5, **_ALE},
    "lsh": {"alpha": 0.5, "lam": 0.5, **_ALE},
    "blob_prost": {"alpha": 0.5, "lam": 0.9, "gamma": 0.99, "epsilon": 0.01},
}
assert set(PAPER_PARAMETERS) == set(FEATURE_SETS)


@dataclass
class SarsaConfig:
    """Sarsa(lambda) with linear function approximation on one of the papers' feature sets."""

    features: str = "bass"
    """Feature set: basic, bass, disco, lsh, ram (Bellemare et al. 2013) or blob_prost (Liang et
    al. 2016); it picks the defaults of alpha, lam, gamma and epsilon (:data:`PAPER_PARAMETERS`)."""
    alpha: float | None = None
    """Step size, divided by the largest number of active features seen so far (None: the
    feature set's published value)."""
    lam: float | None = None
    """Trace decay lambda (None: the feature set's published value)."""
    gamma: float | None = None
    """Discount factor (None: 0.999 for the ALE paper's sets, 0.99 for Blob-PROST)."""
    epsilon: float | None = None
    """Probability of a uniformly random action at each training step (None: 0.05 for the ALE
    paper's sets, 0.01 for Blob-PROST)."""
    trace: str = "replacing"
    """Eligibility traces: "replacing" (Bellemare et al. 2013, section 3.1) or "accumulating"."""
    trace_threshold: float = 0.01
    """Traces below this are set to zero to keep them sparse (the released agents' value)."""
    reward_scaling: str = "first_reward"
    """"first_reward": rewards are divided by the magnitude of the first non-zero reward of the
    run (the released agents, after the ALE paper's code); "none": raw rewards. Recorded scores
    are raw either way."""
    background_samples: int = 18_000
    """Screens of uniformly random play, at the start of training, from which Basic, BASS and
    DISCO learn the game's background (ALE paper, appendix C: 18,000 sample screens per game;
    its samples followed a human trajectory first, which benchgen does not have). Those steps
    count in the budget; 0: no background removal."""
    disco_samples: int = 36_000
    """DISCO: screens of uniformly random play, after the background's, on which it discovers its
    object classes (ALE paper, appendix C: 36,000); those steps count in the budget."""
    lsh_vectors: int = 2000
    """LSH: number of random bit vectors l (ALE paper, appendix C)."""
    lsh_nonzero: int = 1000
    """LSH: non-zero entries k of each random vector (appendix C)."""
    lsh_buckets: int = 50
    """LSH: hash table size M per vector (appendix C)."""
    blob_neighbourhood: int = 3
    """Blob-PROST: same-coloured pixels this close (Chebyshev distance) join one blob (Liang et
    al. 2016's released code)."""
    seed_offset: int = 0
    """Added to the unit seed for the agent's RNG (exploration, tie-breaking, LSH vectors)."""

    def resolved(self) -> dict[str, float]:
        """alpha, lam, gamma, epsilon: the ones set, else the feature set's published values."""
        paper = PAPER_PARAMETERS[self.features]
        return {k: float(paper[k] if getattr(self, k) is None else getattr(self, k)) for k in paper}
