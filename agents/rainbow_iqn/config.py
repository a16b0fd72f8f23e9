"""Rainbow-IQN settings: every default is a paper's value, and every field names its source.

Sources (see ``docs`` of the agents spec):

* **SABER**: Toromanoff, Wirbel, Moutarde 2019, "Is Deep RL Really Superhuman on Atari?",
  section 4 and its reference code (valeoai/rainbow-iqn-apex).
* **IQN**: Dabney, Ostrovski, Silver, Munos 2018, "Implicit Quantile Networks for Distributional
  Reinforcement Learning".
* **Rainbow**: Hessel et al. 2018, "Rainbow: Combining Improvements in Deep RL", table 1.
* **PER**: Schaul et al. 2016, "Prioritized Experience Replay".
* **NoisyNet**: Fortunato et al. 2018, "Noisy Networks for Exploration".

Budgets in the papers are emulator frames; the agent counts *agent steps* (one step = one
transition of one sub-environment = ``frames_per_step`` emulator frames, the suite's: 4 on Atari
and Sonic). Frame-denominated settings end in ``_frames`` and are converted to agent steps in
``__post_init__`` (the ``*_steps`` fields, which are derived and cannot be set).

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

import importlib
import math
import os
from dataclasses import dataclass, field

from benchgen.config import from_suite
from benchgen.errors import UsageError, did_you_mean
from benchgen_agents.torch_device import check_device

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
class RainbowIQNConfig:
    """Rainbow with its C51 head replaced by an implicit quantile network (SABER section 4)."""

    variant: str = "paper"
    """Which defaults the settings below take (``VARIANTS``): "paper" (the Rainbow and IQN
    papers' values, with SABER's priority exponent) or "saber_code" (SABER's released code:
    noisy_sigma0 0.1, learning_starts_frames 320K, target_update_frames 128K, actor_priorities
    true). Settings given explicitly override the variant's."""

    # -- network --------------------------------------------------------------------------
    hidden_size: int = 512
    """Units of the hidden noisy layer of each dueling stream (Rainbow; Wang et al. 2016)."""
    mlp_hidden_size: int = 256
    """Width of the two-layer MLP torso used instead of the Nature CNN when observations are flat
    vectors (benchgen's choice for non-pixel tasks; no paper value)."""
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
    frame_stack: int = 4
    """Frames stacked along the observation's channel axis (DQN/Rainbow: 4). The replay stores
    each frame once and rebuilds the stack; 1 stores every observation whole (set it for image
    observations that are not a sliding frame stack)."""

    # -- return and targets ---------------------------------------------------------------
    gamma: float = 0.99
    """Discount factor (Rainbow, IQN: 0.99)."""
    n_step: int = 3
    """Multi-step return length (Rainbow: 3)."""
    double_q: bool = True
    """Pick the bootstrap action with the online net and evaluate it with the target net
    (double DQN, part of Rainbow and SABER's Rainbow-IQN)."""
    reward_clip: float = 1.0
    """Rewards are clipped to [-reward_clip, reward_clip] for learning only; 0 disables
    (DQN/Rainbow/SABER: 1). Recorded scores are never clipped."""

    # -- prioritized replay ---------------------------------------------------------------
    replay_capacity: int = 1_000_000
    """Transitions the replay memory holds, over all sub-environments (Rainbow, SABER: 1M)."""
    priority_exponent: float = 0.2
    """omega: sampling probability proportional to priority**omega (SABER: 0.2, tuned down from
    Rainbow's 0.5 because the IQN loss is more spread out)."""
    priority_weight_start: float = 0.4
    """beta at the start: importance-sampling exponent, annealed linearly to
    ``priority_weight_end`` over the unit's budget (Rainbow, PER: 0.4 -> 1)."""
    priority_weight_end: float = 1.0
    """beta at the end of the budget (PER, Rainbow: 1)."""
    actor_priorities: bool = False
    """Single-process agent (``actors = 0``): give each new transition an initial priority
    computed from its own loss before it can be sampled, as an Ape-X actor does, instead of the
    largest priority seen so far (paper: false, PER and Rainbow; saber_code: true, SABER's code
    ran one actor process beside the learner and that actor computed the priorities of its
    transitions). Computed with the online and target nets every ``update_period_steps`` agent
    steps, before the next update. With ``actors > 0`` the actors always compute them (Ape-X)."""
    save_replay: bool = False
    """Write the replay memory into checkpoints (up to ~7 GB on Atari) so that a resumed run
    continues exactly; without it a resumed run refills the memory before learning again
    (benchgen setting)."""

    # -- optimisation and schedule --------------------------------------------------------
    learning_rate: float = 5e-5
    """Adam learning rate (IQN: 5e-5; SABER found it slightly better than Rainbow's 6.25e-5)."""
    adam_eps: float = 3.125e-4
    """Adam epsilon (IQN: 0.01 / 32 = 3.125e-4; SABER code)."""
    batch_size: int = 32
    """Transitions per learner update (Rainbow, IQN, SABER: 32)."""
    max_grad_norm: float = 0.0
    """Clip the gradient's global norm to this value; 0 disables (SABER code and IQN: no
    clipping; the Rainbow PyTorch code SABER started from clipped at 10)."""
    frames_per_step: int = from_suite("frames_per_step", 4)
    """Emulator frames per agent step, used to convert ``*_frames`` settings to agent steps: the
    suite's ``frames_per_step``, set from it when a run is resolved (not a setting; 4 = the Atari
    action repeat for a config built without a suite)."""
    learning_starts_frames: int = 80_000
    """No learning before the replay holds this many frames' worth of transitions; until the
    unit has taken that many agent steps the agent acts uniformly at random over all actions
    (SABER's code and Dopamine do; a resumed unit past it or an agent that has learned does
    not). Paper: 80K frames = 20K agent steps (Rainbow); saber_code: 320K frames = 80K agent
    steps (SABER's code ``--learn-start 80e3``, in agent steps)."""
    update_period_steps: int = 4
    """One learner update per this many agent steps, counted over all sub-environments together
    (Rainbow; SABER locks one learner step to every 4 actor steps)."""
    target_update_frames: int = 32_000
    """Copy the online net into the target net every this many frames. Paper: 32K frames = 8K
    agent steps (Rainbow); saber_code: 128K frames = 32K agent steps (SABER's code
    ``--target-update 32e3``, in agent steps)."""

    # -- runtime --------------------------------------------------------------------------
    device: str = "auto"
    """Torch device: "auto" (CUDA when available, else CPU), "cpu", "cuda" or "cuda:N"."""
    torch_threads: int = 0
    """CPU threads for torch (0: every core this process may use)."""
    precision: str = "float32"
    """Matrix products in "float32" (as in the papers) or "bfloat16" (torch autocast; losses stay
    float32): about 3x faster learner updates on CPUs with AMX/AVX512-BF16 and on recent GPUs,
    at about 3 significant digits per product (benchgen setting). Opt-in until a learning check
    shows that bfloat16 learns as float32 does (not yet run; see the README)."""
    log_every_updates: int = 250
    """Log loss and Q statistics (TensorBoard) averaged over this many learner updates."""

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

    # -- derived (computed in __post_init__, not settable) -----------------------------------
    learning_starts_steps: int = field(init=False)
    """``learning_starts_frames`` in agent steps."""
    target_update_steps: int = field(init=False)
    """``target_update_frames`` in agent steps."""

    def __post_init__(self) -> None:
        self._validate()
        if self.actors > 0:  # Ape-X needs Ray: say so before a run directory is made
            try:
                importlib.import_module("ray")
            except ImportError:
                raise UsageError("Ray is not installed; pip install 'benchgen[ray]'") from None
        self.learning_starts_steps = self.learning_starts_frames // self.frames_per_step
        self.target_update_steps = max(1, self.target_update_frames // self.frames_per_step)
        if self.learning_starts_steps > self.replay_capacity:
            raise UsageError(
                f"learning_starts_frames={self.learning_starts_frames} is more than the replay holds "
                f"({self.replay_capacity} transitions x {self.frames_per_step} frames); lower it or raise replay_capacity"
            )

    def _validate(self) -> None:
        if self.variant not in VARIANTS:
            raise did_you_mean("rainbow_iqn variant", str(self.variant), VARIANTS)
        positive_ints = (
            "hidden_size",
            "mlp_hidden_size",
            "cosine_embedding_dim",
            "num_tau_samples",
            "num_tau_prime_samples",
            "num_quantile_samples",
            "frame_stack",
            "n_step",
            "replay_capacity",
            "batch_size",
            "frames_per_step",
            "update_period_steps",
            "target_update_frames",
            "log_every_updates",
        )
        for name in positive_ints:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise UsageError(f"{name} must be a positive integer, not {value!r}")
        for name in ("actor_chunk_steps", "weight_sync_updates"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise UsageError(f"{name} must be a positive integer, not {value!r}")
        for name in ("synchronized", "actor_priorities"):
            if not isinstance(getattr(self, name), bool):
                raise UsageError(f"{name} must be true or false, not {getattr(self, name)!r}")
        if (
            isinstance(self.actor_cpus, bool)
            or not isinstance(self.actor_cpus, (int, float))
            or not (math.isfinite(self.actor_cpus) and self.actor_cpus >= 0)
        ):
            raise UsageError(f"actor_cpus must be a non-negative number, not {self.actor_cpus!r}")
        for name in ("learning_starts_frames", "torch_threads", "actors", "actor_envs"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise UsageError(f"{name} must be a non-negative integer, not {value!r}")
        checks = [
            ("gamma", 0.0 <= self.gamma <= 1.0, "in [0, 1]"),
            ("kappa", self.kappa > 0, "positive"),
            ("noisy_sigma0", self.noisy_sigma0 >= 0, "non-negative"),
            ("reward_clip", self.reward_clip >= 0, "non-negative (0 disables clipping)"),
            ("priority_exponent", self.priority_exponent >= 0, "non-negative (0 = uniform replay)"),
            ("priority_weight_start", 0.0 <= self.priority_weight_start <= 1.0, "in [0, 1]"),
            ("priority_weight_end", 0.0 <= self.priority_weight_end <= 1.0, "in [0, 1]"),
            ("learning_rate", self.learning_rate > 0, "positive"),
            ("adam_eps", self.adam_eps > 0, "positive"),
            ("max_grad_norm", self.max_grad_norm >= 0, "non-negative (0 disables clipping)"),
        ]
        for name, ok, what in checks:
            if not ok or not math.isfinite(float(getattr(self, name))):
                raise UsageError(f"{name} must be {what}, not {getattr(self, name)!r}")
        if self.precision not in ("float32", "bfloat16"):
            raise UsageError(f"precision must be 'float32' or 'bfloat16', not {self.precision!r}")
        check_device(self.device)


def available_memory_bytes() -> int | None:
    """Memory this machine can still give (Linux MemAvailable; psutil or sysconf elsewhere)."""
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        import psutil  # optional

        return int(psutil.virtual_memory().available)
    except Exception:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def check_replay_fits(needed_bytes: int, capacity: int, what: str) -> None:
    """Raise ``UsageError`` when a replay of ``needed_bytes`` would not fit in available memory."""
    available = available_memory_bytes()
    if available is not None and needed_bytes > available:
        gib = 1024**3
        fits = int(capacity * available / needed_bytes)
        raise UsageError(
            f"replay_capacity={capacity} needs {needed_bytes / gib:.1f} GiB for {what} but only "
            f"{available / gib:.1f} GiB is available; set replay_capacity to at most {fits}"
        )
