"""Rainbow-IQN settings: every default is a paper's value, and every field names its source.

Sources (see ``docs`` of the agents spec):

* **SABER**: Toromanoff, Wirbel, Moutarde 2019, "Is Deep RL Really Superhuman on Atari?",
  section 4 and its reference code (valeoai/rainbow-iqn-apex).
* **IQN**: Dabney, Ostrovski, Silver, Munos 2018, "Implicit Quantile Networks for Distributional
  Reinforcement Learning".
* **Rainbow**: Hessel et al. 2018, "Rainbow: Combining Improvements in Deep RL", table 1.
* **PER**: Schaul et al. 2016, "Prioritized Experience Replay".
* **NoisyNet**: Fortunato et al. 2018, "Noisy Networks for Exploration".

The settings shared with DQN and Rainbow (frames and agent steps, replay, schedule, runtime)
come from :class:`~benchgen_agents.value_based.config.ValueBasedConfig`; the fields below are
Rainbow-IQN's own values and the ones it sets differently.

Two variants (``--set variant=NAME``, :data:`VARIANTS`): ``paper``, the defaults below (the
Rainbow and IQN papers' values, with SABER's priority exponent), and ``saber_code``, what SABER's
released runs used (``valeoai/rainbow-iqn-apex``, ``rainbowiqn/args.py``): noisy sigma0 0.1,
learning start 80K and target copy 32K counted in agent steps (320K and 128K frames at its 4
frames per step), and initial priorities computed by the actor even with one actor. A variant
only supplies defaults: settings given with ``--set``/``--config`` override its values. Each
field the variants set names both values and their sources.

This module imports neither torch nor numpy, so ``benchgen list`` stays fast.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchgen.errors import UsageError, did_you_mean
from benchgen_agents.common.ray_engine import import_ray
from benchgen_agents.value_based.config import ValueBasedConfig, check_number

#: ``variant`` -> the config defaults it gives (``AgentSpec.variants``): ``paper`` is the field
#: defaults; ``saber_code`` the values of SABER's released code (``valeoai/rainbow-iqn-apex``,
#: ``rainbowiqn/args.py``: ``--noisy-std 0.1``, ``--learn-start 80e3`` and ``--target-update 32e3``
#: in agent steps; ``launch_actor.py``: the actor computes the priorities of its transitions).
VARIANTS: dict[str, dict[str, object]] = {
    "paper": {},
    "saber_code": {
        "noisy_sigma0": 0.1,
        "learning_starts_frames": 320_000,
        "target_update_frames": 128_000,
        "actor_priorities": True,
    },
}


@dataclass
class RainbowIQNConfig(ValueBasedConfig):
    """Rainbow with its C51 head replaced by an implicit quantile network (SABER section 4)."""

    variant: str = "paper"
    """Which defaults the settings below take (``VARIANTS``): "paper" (the Rainbow and IQN
    papers' values, with SABER's priority exponent) or "saber_code" (SABER's released code:
    noisy_sigma0 0.1, learning_starts_frames 320K, target_update_frames 128K, actor_priorities
    true). Settings given explicitly override the variant's."""

    # -- network --------------------------------------------------------------------------
    noisy_sigma0: float = 0.5
    """Initial noise scale of factorised noisy layers, sigma_i = sigma0 / sqrt(fan_in)
    (paper: 0.5, NoisyNet and Rainbow; saber_code: 0.1, SABER's code ``--noisy-std``, "the value
    used for all experiments")."""
    cosine_embedding_dim: int = 64
    """Cosines cos(pi * i * tau), i = 1..n, embedding each sampled tau (IQN: n = 64)."""
    num_tau_samples: int = 64
    """N: quantile fractions sampled for the online net's current-state quantiles (IQN: 64)."""
    num_tau_prime_samples: int = 64
    """N': quantile fractions sampled for the target quantiles (IQN: 64)."""
    num_quantile_samples: int = 32
    """K: quantile fractions averaged to estimate Q when acting and for the double-Q argmax
    (IQN: 32)."""
    kappa: float = 1.0
    """Huber threshold of the quantile Huber loss (IQN: 1)."""

    # -- prioritized replay ---------------------------------------------------------------
    priority_exponent: float = 0.2
    """omega: sampling probability proportional to priority**omega (SABER: 0.2, tuned down from
    Rainbow's 0.5 because the IQN loss is more spread out)."""
    actor_priorities: bool = False
    """Single-process agent (``actors = 0``): give each new transition an initial priority
    computed from its own loss before it can be sampled, as an Ape-X actor does, instead of the
    largest priority seen so far (paper: false, PER and Rainbow; saber_code: true, SABER's code
    ran one actor process beside the learner and that actor computed the priorities of its
    transitions). Computed with the online and target nets every ``update_period_steps`` agent
    steps, before the next update. With ``actors > 0`` the actors always compute them (Ape-X)."""

    # -- optimisation and schedule --------------------------------------------------------
    learning_rate: float = 5e-5
    """Adam learning rate (IQN: 5e-5; SABER found it slightly better than Rainbow's 6.25e-5)."""
    adam_eps: float = 3.125e-4
    """Adam epsilon (IQN: 0.01 / 32 = 3.125e-4; SABER code)."""
    max_grad_norm: float = 0.0
    """Clip the gradient's global norm to this value; 0 disables (SABER code and IQN: no
    clipping; the Rainbow PyTorch code SABER started from clipped at 10)."""
    learning_starts_frames: int = 80_000
    """No learning before the replay holds this many frames' worth of transitions; until the
    unit has taken that many agent steps the agent acts uniformly at random over all actions
    (SABER's code and Dopamine do; a resumed unit past it or an agent that has learned does
    not). Paper: 80K frames = 20K agent steps (Rainbow); saber_code: 320K frames = 80K agent
    steps (SABER's code ``--learn-start 80e3``, in agent steps)."""
    target_update_frames: int = 32_000
    """Copy the online net into the target net every this many frames. Paper: 32K frames = 8K
    agent steps (Rainbow); saber_code: 128K frames = 32K agent steps (SABER's code
    ``--target-update 32e3``, in agent steps)."""

    # -- Ape-X (distributed acting; see ``apex.py``) -------------------------------------------
    actors: int = 0
    """Ape-X actor processes (Ray actors), each with its own environment copies and its own
    exploration noise, feeding one learner that owns the prioritized replay (SABER distributed
    Rainbow-IQN Ape-X style; Horgan et al. 2018). 0: the single-process agent. Needs Ray
    (``pip install 'benchgen[ray]'``). Actors act and compute priorities on the CPU; the learner
    uses ``device``."""
    actor_envs: int = 0
    """Sub-environments per actor (0: the unit's ``--num-envs``)."""
    actor_chunk_steps: int = 50
    """Vector steps an actor takes between two messages to the learner (each message carries
    the chunk's transitions, their initial priorities and the finished episodes; benchgen
    setting, Ape-X sent batches of 50 transitions)."""
    weight_sync_updates: int = 100
    """The learner publishes its weights every this many updates; each actor picks up the
    newest ones at its next chunk (Ape-X: actors refreshed every 400 frames = 100 agent steps;
    benchgen counts learner updates so that the period does not depend on the actor count)."""
    synchronized: bool = False
    """Lock the learner to the actors: each chunk of S agent steps is followed by S /
    ``update_period_steps`` learner updates before that actor continues (SABER's single-actor
    setting: one learner step per 4 actor steps). False: asynchronous Ape-X, the actors never
    wait and the learner does as many updates as it can, at most one per
    ``update_period_steps`` agent steps received."""
    actor_cpus: float = 1.0
    """CPUs each actor reserves from Ray (0 lets actors share whatever is free; benchgen setting)."""

    _POSITIVE_INTS = ValueBasedConfig._POSITIVE_INTS + (
        "cosine_embedding_dim",
        "num_tau_samples",
        "num_tau_prime_samples",
        "num_quantile_samples",
        "actor_chunk_steps",
        "weight_sync_updates",
    )
    _NON_NEGATIVE_INTS = ValueBasedConfig._NON_NEGATIVE_INTS + ("actors", "actor_envs")
    _BOOLS = ValueBasedConfig._BOOLS + ("synchronized",)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.actors > 0:  # Ape-X needs Ray: say so before a run directory is made
            import_ray()

    def _validate(self) -> None:
        if self.variant not in VARIANTS:
            raise did_you_mean("rainbow_iqn variant", str(self.variant), VARIANTS)
        super()._validate()
        check_number("kappa", self.kappa, self.kappa > 0, "positive")
        if self.actors and self.updates_per_period != 1:
            raise UsageError("updates_per_period is for the single-process agent; Ape-X learners take 1")
        check_number("noisy_sigma0", self.noisy_sigma0, self.noisy_sigma0 >= 0, "non-negative")
        check_number("actor_cpus", self.actor_cpus, self.actor_cpus >= 0, "a non-negative number")
