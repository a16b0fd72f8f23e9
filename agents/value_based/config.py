"""Settings shared by the value-based agents (``dqn``, ``rainbow``, ``rainbow_iqn``).

:class:`ValueBasedConfig` holds what every agent of the family has: network widths, the n-step
target, the replay, the update schedule and the runtime. Its defaults are Rainbow's (Hessel et
al. 2018, table 1); each agent's config subclasses it, overrides the defaults its paper sets
differently (each with its source in the field's docstring) and adds its own fields.

Budgets in the papers are emulator frames; the agents count *agent steps* (one step = one
transition of one sub-environment = ``frames_per_step`` emulator frames, the suite's: 4 on Atari
and Sonic). Frame-denominated settings end in ``_frames`` and are converted to agent steps in
``__post_init__`` (the ``*_steps`` fields, which are derived and cannot be set).

This module imports neither torch nor numpy, so ``benchgen list`` stays fast.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

from benchgen.config import execution_setting, from_suite
from benchgen.errors import UsageError, did_you_mean
from benchgen_agents.common.torch_device import PRECISIONS, check_device

#: ``torso`` values (``layers.CNN_TORSOS`` builds them; named here so this module stays torch-free)
TORSOS = ("nature", "data_efficient")
#: ``network_style`` values (``layers.py`` builds and ``layers.initialize`` starts them)
NETWORK_STYLES = ("pytorch", "dopamine")
#: ``augmentation`` values (``augmentation.py`` applies them)
AUGMENTATIONS = ("none", "shift_intensity", "shift_intensity_batch")


@dataclass
class ValueBasedConfig:
    """The settings every value-based agent has (defaults: Rainbow's)."""

    # -- network --------------------------------------------------------------------------
    torso: str = "nature"
    """Convolutional torso for image observations: "nature" (Mnih et al. 2015: 32x8x8/4,
    64x4x4/2, 64x3x3/1) or "data_efficient" (van Hasselt et al. 2019, Data-Efficient Rainbow:
    32x5x5/5, 64x5x5/5). Flat vector observations always get the MLP torso."""
    hidden_size: int = 512
    """Units of the hidden layer of each stream of the head (Nature DQN, Rainbow: 512)."""
    mlp_hidden_size: int = 256
    """Width of the two-layer MLP torso used instead of the Nature CNN when observations are flat
    vectors (benchgen's choice for non-pixel tasks; no paper value)."""
    mlp_layers: int = 2
    """Hidden ReLU layers of ``mlp_hidden_size`` units in the MLP torso (benchgen: 2). The head
    adds its own hidden layer of ``hidden_size``, so 1 gives a network of two hidden layers:
    stable-baselines3's QNetwork with ``net_arch=[256, 256]`` at both widths 256."""
    dueling: bool = True
    """Dueling value and advantage streams, Q = V + A - mean_a A (Wang et al. 2016; Rainbow)."""
    network_style: str = "pytorch"
    """How the network is laid out and started. "pytorch": unpadded convolutions (the Nature torso's
    3,136 features on 84x84), a hidden layer per dueling stream (Wang et al. 2016), PyTorch's default
    initialization. "dopamine": as Dopamine's JAX ``FullRainbowNetwork``, which produced the Atari 100K
    re-runs of Agarwal et al. 2021 (DrQ(epsilon) among them): flax's "SAME"-padded convolutions
    (7,744 features), one hidden layer shared by the dueling streams, Glorot-uniform weights and zero
    biases (noisy layers keep NoisyNet's start either way)."""
    frame_stack: int = 4
    """Frames stacked along the observation's channel axis (DQN/Rainbow: 4). The replay stores
    each frame once and rebuilds the stack; 1 stores every observation whole (set it for image
    observations that are not a sliding frame stack)."""

    # -- return and targets ---------------------------------------------------------------
    gamma: float = 0.99
    """Discount factor (DQN, Rainbow, IQN: 0.99)."""
    n_step: int = 3
    """Multi-step return length (Rainbow: 3)."""
    double_q: bool = True
    """Pick the bootstrap action with the online net and evaluate it with the target net
    (double DQN, van Hasselt et al. 2016; part of Rainbow)."""
    reward_clip: float = 1.0
    """Rewards are clipped to [-reward_clip, reward_clip] for learning only; 0 disables
    (DQN, Rainbow, SABER: 1). Recorded scores are never clipped."""

    # -- replay ---------------------------------------------------------------------------
    augmentation: str = "none"
    """Image augmentation of the sampled states and next states of every learner update (not of
    acting): "none", or "shift_intensity" (DrQ, Kostrikov et al. 2021: each image padded by 4
    pixels, edges repeated, and cropped back at a random offset; then, as Dopamine's
    ``labs/atari_100k`` DrQ and SPR (Schwarzer et al. 2021), its intensity scaled by
    1 + 0.05 * clip(N(0, 1), -2, 2)). States and next states draw their own shifts.
    "shift_intensity_batch": the same, but one offset of 0 to 7 pixels a side for the whole batch,
    as Dopamine's ``labs/atari_100k`` shifted from July 2021 until February 2022 (the version behind
    Agarwal et al. 2021's DrQ(epsilon) runs)."""
    replay_capacity: int = 1_000_000
    """Transitions the replay memory holds, over all sub-environments (DQN, Rainbow: 1M)."""
    priority_exponent: float = 0.5
    """omega: sampling probability proportional to priority**omega; 0 samples uniformly
    (Rainbow: 0.5)."""
    priority_weight_start: float = 0.4
    """beta at the start: importance-sampling exponent, annealed linearly to
    ``priority_weight_end`` over the unit's budget (Rainbow, PER: 0.4 -> 1). No effect with
    uniform replay (``priority_exponent = 0``)."""
    priority_weight_end: float = 1.0
    """beta at the end of the budget (PER, Rainbow: 1)."""
    actor_priorities: bool = False
    """Give each new transition an initial priority computed from its own loss before it can
    be sampled, as an Ape-X actor does, instead of the largest priority seen so far (PER and
    Rainbow: false). Computed with the online and target nets every ``update_period_steps``
    agent steps, before the next update."""
    save_replay: bool = execution_setting(False)
    """Write the replay memory into checkpoints (up to ~7 GB on Atari) so that a resumed run
    continues exactly; without it a resumed run refills the memory before learning again
    (benchgen setting)."""

    # -- optimisation and schedule --------------------------------------------------------
    learning_rate: float = 6.25e-5
    """Learning rate of the optimizer (Rainbow: Adam, 6.25e-5). The family's one default: an agent
    whose paper sets another overrides it with its source."""
    adam_eps: float = 1.5e-4
    """Adam epsilon (Rainbow: 1.5e-4; DER and DrQ kept it)."""
    batch_size: int = 32
    """Transitions per learner update (DQN, Rainbow, IQN: 32)."""
    max_grad_norm: float = 0.0
    """Clip the gradient's global norm to this value; 0 disables (DQN, Rainbow, IQN papers: no
    norm clipping)."""
    frames_per_step: int = from_suite("frames_per_step", 4)
    """Emulator frames per agent step, used to convert ``*_frames`` settings to agent steps: the
    suite's ``frames_per_step``, set from it when a run is resolved (not a setting; 4 = the Atari
    action repeat for a config built without a suite)."""
    learning_starts_frames: int = 80_000
    """No learning before the replay holds this many frames' worth of transitions; until the
    unit has taken that many agent steps the agent acts uniformly at random over all actions
    (DQN's "replay start size" policy; SABER's code and Dopamine do the same for Rainbow; a
    resumed unit past it or an agent that has learned does not). Rainbow: 80K frames."""
    update_period_steps: int = 4
    """One learner update per this many agent steps, counted over all sub-environments together
    (DQN, Rainbow: 4)."""
    updates_per_period: int = 1
    """Learner updates taken one after another every ``update_period_steps`` (DQN, Rainbow: 1).
    More is stable-baselines3's ``gradient_steps`` with ``train_freq = update_period_steps``, the
    schedule of the RL Zoo's tuned classic-control DQN (e.g. 128 updates every 256 steps). The
    single-process agents only: Ape-X learners and data-parallel workers refuse other values."""
    target_update_frames: int = 32_000
    """Copy the online net into the target net every this many frames (Rainbow: 32K)."""

    # -- runtime --------------------------------------------------------------------------
    device: str = execution_setting("auto")
    """Torch device: "auto" (CUDA when available, else CPU), "cpu", "cuda" or "cuda:N"."""
    torch_threads: int = execution_setting(0)
    """CPU threads for torch (0: on the CPU, the runner's share of the cores, else every core this
    process may use but one, which the emulator keeps: ``torch_device.cpu_threads`` says why; on a
    GPU, 1)."""
    flush_denormals: bool = execution_setting(True)
    """On the CPU, compute with denormal floats (magnitudes below 1.2e-38) flushed to zero
    (``torch.set_flush_denormal``, for the thread that builds the agent and the threads torch
    starts after it; benchgen setting). Adam's moments of a unit whose gradient stays zero (a dead
    ReLU) decay into denormals, which Intel CPUs compute tens of times slower: Data-Efficient
    Rainbow's Adam step at its Qbert run's 280K-frame checkpoint took 10.3 ms with them and 0.95
    ms flushed, on an Intel Xeon (docs/measurements/performance.md, "Denormal floats"). What a
    flushed value would have moved a weight by is below 1e-38 (Adam's step is the learning rate
    times the first moment over the second's root plus epsilon); false: torch's default."""
    precision: str = "float32"
    """Matrix products in "float32" (as in the papers) or "bfloat16" (torch autocast; losses stay
    float32): about 3x faster learner updates on CPUs with AMX/AVX512-BF16; on an H100, 1.13x for
    Rainbow-IQN with the CUDA graph and slower without, since batch-32 updates there are bound
    by kernel count, not arithmetic (docs/measurements/performance.md, "On a GPU"); about 3 significant digits per product
    (benchgen setting). Opt-in until a learning check shows that bfloat16 learns as float32 does
    (not yet run; see docs/measurements/performance.md)."""
    cuda_graphs: bool = execution_setting(True)
    """On a CUDA device, replay the learner step (losses, backward pass, optimizer step) as a
    CUDA graph after three eager steps: the same arithmetic with one launch instead of hundreds
    (``value_based/cuda_graph.py``; benchgen setting). No effect on the CPU; false: eager steps."""
    log_every_updates: int = execution_setting(250)
    """Log loss and Q statistics (TensorBoard) averaged over this many learner updates."""

    # -- derived (computed in __post_init__, not settable) -----------------------------------
    learning_starts_steps: int = field(init=False)
    """``learning_starts_frames`` in agent steps."""
    target_update_steps: int = field(init=False)
    """``target_update_frames`` in agent steps."""

    def __post_init__(self) -> None:
        from benchgen.suite import frames_to_steps  # (here: importing this module stays light)

        self._validate()
        self.learning_starts_steps = frames_to_steps(self.learning_starts_frames, self.frames_per_step)
        self.target_update_steps = max(1, frames_to_steps(self.target_update_frames, self.frames_per_step))
        if self.learning_starts_steps > self.replay_capacity:
            raise UsageError(
                f"learning_starts_frames={self.learning_starts_frames} is more than the replay holds "
                f"({self.replay_capacity} transitions x {self.frames_per_step} frames); lower it or raise replay_capacity"
            )

    # -- validation (one line per bad value, before anything is built) --------------------------
    _POSITIVE_INTS = (
        "hidden_size",
        "mlp_hidden_size",
        "mlp_layers",
        "frame_stack",
        "n_step",
        "replay_capacity",
        "batch_size",
        "frames_per_step",
        "update_period_steps",
        "updates_per_period",
        "target_update_frames",
        "log_every_updates",
    )
    _NON_NEGATIVE_INTS = ("learning_starts_frames", "torch_threads")
    _BOOLS = ("dueling", "double_q", "actor_priorities", "save_replay")

    def _validate(self) -> None:
        for name in self._POSITIVE_INTS:
            check_int(name, getattr(self, name), minimum=1)
        for name in self._NON_NEGATIVE_INTS:
            check_int(name, getattr(self, name), minimum=0)
        for name in self._BOOLS:
            if not isinstance(getattr(self, name), bool):
                raise UsageError(f"{name} must be true or false, not {getattr(self, name)!r}")
        check_number("gamma", self.gamma, 0.0 <= self.gamma <= 1.0, "in [0, 1]")
        check_number("reward_clip", self.reward_clip, self.reward_clip >= 0, "non-negative (0 disables clipping)")
        check_number(
            "priority_exponent", self.priority_exponent, self.priority_exponent >= 0, "non-negative (0 = uniform)"
        )
        for name in ("priority_weight_start", "priority_weight_end"):
            value = getattr(self, name)
            check_number(name, value, 0.0 <= value <= 1.0, "in [0, 1]")
        check_number("learning_rate", self.learning_rate, self.learning_rate > 0, "positive")
        check_number("adam_eps", self.adam_eps, self.adam_eps > 0, "positive")
        check_number("max_grad_norm", self.max_grad_norm, self.max_grad_norm >= 0, "non-negative (0 disables)")
        for name, allowed in (("torso", TORSOS), ("augmentation", AUGMENTATIONS), ("network_style", NETWORK_STYLES)):
            if getattr(self, name) not in allowed:
                raise did_you_mean(name, str(getattr(self, name)), allowed)
        if self.precision not in PRECISIONS:
            raise UsageError(f"precision must be 'float32' or 'bfloat16', not {self.precision!r}")
        check_device(self.device)


def check_int(name: str, value, minimum: int) -> None:
    """``UsageError`` unless ``value`` is an int (not a bool) of at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        what = "a positive integer" if minimum == 1 else f"an integer of at least {minimum}"
        if minimum == 0:
            what = "a non-negative integer"
        raise UsageError(f"{name} must be {what}, not {value!r}")


def check_number(name: str, value, ok: bool, what: str) -> None:
    """``UsageError`` unless ``value`` is a finite number and ``ok``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not ok or not math.isfinite(float(value)):
        raise UsageError(f"{name} must be {what}, not {value!r}")


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
