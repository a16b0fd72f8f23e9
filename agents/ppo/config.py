"""PPO settings (torch-free, so ``benchgen list`` stays fast).

Defaults are the RL Zoo's Atari hyperparameters for stable-baselines3 PPO (``hyperparams/ppo.yml``,
entry ``atari``): 8 environments, horizon 128, 4 epochs, minibatch 256, lr 2.5e-4 and clip 0.1
both decayed linearly to 0, value coefficient 0.5, entropy coefficient 0.01, gamma 0.99,
GAE lambda 0.95. They follow Schulman et al. 2017, table 5 (which used 3 epochs and a value
coefficient of 1).
Suites supply the values they tuned for their tasks (``Suite.tuned_settings``: Sonic the settings
of Nichol et al. 2018, "Gotta Learn Fast"; gymnasium the RL Zoo's per task).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from benchgen.config import execution_setting
from benchgen_agents.common.torch_device import PRECISIONS, check_device

POLICIES = ("auto", "CnnPolicy", "ImpalaCnnPolicy", "MlpPolicy")
#: how the IMPALA CNN's weights may start (``extractor_init``): SB3's orthogonal or baselines' Glorot
EXTRACTOR_INITS = ("orthogonal", "glorot")
#: the value loss's forms (``value_loss``): stable-baselines3's or openai baselines' PPO2
VALUE_LOSSES = ("sb3", "ppo2")
SCHEDULES = ("linear", "constant")


@dataclass
class PPOConfig:
    """stable-baselines3 PPO as a benchgen agent. Every field maps onto an SB3 PPO argument unless
    said otherwise."""

    policy: str = "auto"
    """'CnnPolicy' (Nature-DQN CNN torso, Mnih et al. 2015, on channel-first uint8 frames / 255),
    'MlpPolicy', or 'auto': the CNN for image observations at least 36x36 pixels (the smallest the
    Nature CNN's 8x8/4, 4x4/2, 3x3/1 convolutions accept), the MLP otherwise. 'ImpalaCnnPolicy':
    the IMPALA CNN (Espeholt et al. 2018; depths 16, 32, 32, the Procgen paper's network, Cobbe et
    al. 2020) under SB3's actor-critic heads (``benchgen_agents.ppo.impala_cnn``)."""
    n_steps: int = 128
    """Horizon T: steps per sub-environment per rollout (RL Zoo Atari 128; Sonic paper 8192)."""
    batch_size: int = 256
    """Minibatch size, in transitions over all sub-environments (RL Zoo Atari 256; Sonic 8192)."""
    n_epochs: int = 4
    """Optimisation epochs over each rollout (RL Zoo Atari 4; Sonic 4)."""
    learning_rate: float = 2.5e-4
    """Adam step size at the start of the unit (RL Zoo Atari 2.5e-4; Sonic 2e-4, the
    OpenAI retro-baselines PPO agent's value: sonic.md does not state one)."""
    lr_schedule: str = "linear"
    """'linear': decay to 0 over the unit's budget (RL Zoo 'lin_2.5e-4'); 'constant'."""
    clip_range: float = 0.1
    """PPO clipping epsilon at the start of the unit (RL Zoo Atari 0.1; Sonic 0.2)."""
    clip_schedule: str = "linear"
    """'linear': decay to 0 over the unit's budget (RL Zoo 'lin_0.1'); 'constant'."""
    gamma: float = 0.99
    """Discount factor (both sources 0.99)."""
    gae_lambda: float = 0.95
    """GAE lambda (both sources 0.95)."""
    ent_coef: float = 0.01
    """Entropy bonus coefficient (RL Zoo Atari 0.01; Sonic 0.001)."""
    vf_coef: float = 0.5
    """Value-loss coefficient (RL Zoo Atari 0.5; SB3 default)."""
    max_grad_norm: float = 0.5
    """Gradient-norm clip (SB3 / OpenAI baselines default 0.5)."""
    normalize_advantage: bool = True
    """Normalise advantages per minibatch (SB3 / baselines default)."""
    target_kl: float | None = None
    """Stop an update's epochs early past this approximate KL (None: never, as in the papers)."""
    clip_reward: bool = True
    """Replace each learning reward by its sign (RL Zoo's AtariWrapper ``clip_reward``, Mnih et al.
    2015). Learning only: the suite records raw scores below the agent. Off on Sonic, whose
    rewards are scaled by ``reward_scale`` instead."""
    reward_scale: float = 1.0
    """Multiply each learning reward by this, after clipping (1: unscaled, as the RL Zoo; Sonic
    0.005, Nichol et al. 2018's PPO hyperparameters, on the allow-backtracking reward of the
    suite's agent wrappers). Learning only: the suite records raw scores below the agent."""
    normalize: bool = False
    """Normalise what the policy learns from by running statistics, stable-baselines3's
    ``VecNormalize`` (the RL Zoo's ``normalize: true``, with its defaults): each observation
    component by its running mean and standard deviation, clipped to [-10, 10], and each learning
    reward by the running standard deviation of the discounted return (discount ``gamma``),
    clipped to [-10, 10]. The statistics are saved in the checkpoint; ``act`` normalises with them,
    frozen (the RL Zoo's evaluation). Learning only: the suite records raw scores below the agent.
    Needs ``workers=0`` and ``virtual_workers=0`` (one PPO in the unit's process)."""
    normalize_reward: bool = False
    """Normalise the learning rewards only, as ``normalize`` does (the running standard deviation of
    the discounted return, clipped to [-10, 10]) but leaving observations as they are: openai
    baselines' ``VecNormalize(ob=False)``, the Procgen paper's reward normalization. The statistics
    are saved in the checkpoint. Learning only: the suite records raw scores below the agent."""
    normalize_gamma: float | None = None
    """The discount of the return whose standard deviation scales rewards under ``normalize`` or
    ``normalize_reward`` (None: ``gamma``, as the RL Zoo; the Procgen paper's baselines code keeps
    VecNormalize's own 0.99 beside PPO's 0.999)."""
    clip_range_vf: float | None = None
    """Clip the value function's change per update to this range around the rollout's values (SB3's
    ``clip_range_vf``, constant; None: no clipping, SB3's default). openai baselines' PPO2, the
    Procgen paper's, always clips it at the policy's clip range."""
    value_loss: str = "sb3"
    """The value term's form under ``clip_range_vf``. "sb3" is stable-baselines3's: ``vf_coef``
    times the mean squared error of the clipped prediction, so a prediction that has moved past
    the clip range gets no gradient, whichever way it moved. "ppo2" is openai baselines' PPO2
    (``baselines/ppo2/model.py``, what the Procgen paper's runs trained with): ``vf_coef`` times
    half the mean of the larger of the clipped and unclipped squared errors, so a prediction that
    moved past the clip *away* from its return is still pulled back (half of SB3's weight, too).
    On coinrun it decides how far the first rounds move the policy: replayed from baselines' own
    weights and rollout, the "sb3" form clips 9% of the samples in the first round, the "ppo2" form
    none, as baselines does (docs/measurements/procgen-diagnosis.md). Without ``clip_range_vf``,
    "ppo2" is half the mean squared error."""
    extractor_init: str = "orthogonal"
    """How the IMPALA CNN's weights start ('ImpalaCnnPolicy' only): "orthogonal" is
    stable-baselines3's (gain sqrt(2) on every convolution and the dense layer, the residual
    blocks' included), "glorot" is openai baselines' (TensorFlow's Glorot-uniform kernels and zero
    biases, ``baselines/common/models.py`` build_impala_cnn), what the Procgen paper's runs started
    from. The heads keep their orthogonal 0.01 (policy) and 1 (value) either way, as both do."""
    precision: str = "float32"
    """The CNN's matrix products in "float32" or "bfloat16" (torch autocast over the features
    extractor only; the policy and value heads, losses and optimizer stay float32, so the PPO
    ratio is computed from float32 logits). On CPUs with AVX512-BF16 the IMPALA CNN trains about
    4x faster (docs: guide/suites.md, Procgen). benchgen setting; float32 is what the papers ran."""
    deterministic_eval: bool = False
    """How ``act`` plays when asked for greedy actions (zero-shot evaluation): False samples from
    the policy, which is what PPO learned (RL Zoo evaluates Atari PPO stochastically because
    argmax policies get stuck, e.g. never pressing FIRE); True takes the most probable action."""
    update_chunk: int | None = execution_setting(None)
    """Samples per forward/backward pass of a minibatch, in every PPO update (one process,
    data-parallel and virtual workers): a larger minibatch's gradient is accumulated over chunks of
    this many (``benchgen_agents.ppo.update``: the same update up to the order of float sums,
    advantages normalized over the whole minibatch). None: 256 when torch runs
    on the CPU (where smaller passes stay in cache: the IMPALA CNN's forward and backward pass over
    Procgen's 2,048-sample minibatches runs about 1.5x faster per sample in chunks of 256, bfloat16,
    one thread), the whole minibatch on a GPU; 0: the whole minibatch (stable-baselines3's
    ``PPO.train``, bit for bit). benchgen setting: speed and memory only."""
    features_dim: int = 512
    """Width of the CNN's fully connected layer (Nature CNN: 512)."""
    device: str = execution_setting("auto")
    """torch device: 'auto' (CUDA if available), 'cpu', 'cuda', 'cuda:1'..."""
    torch_threads: int = execution_setting(0)
    """torch intra-op threads (0: ``OMP_NUM_THREADS`` if set, else every core this process may use but
    one, left to the environments; see ``benchgen_agents.common.torch_device.cpu_threads``)."""
    log_interval: int = execution_setting(1)
    """Write SB3's training statistics to TensorBoard every this many rollouts."""

    # -- data-parallel training (benchgen_agents.data_parallel; Nichol et al. 2018, joint PPO) ---
    virtual_workers: int = 0
    """The paper's workers, the math of a learning unit other than fine-tuning: each plays its own
    ``envs_per_worker`` sub-environments, collects its own rollout of ``n_steps`` per
    sub-environment, shuffles it into its own minibatches of ``batch_size`` (advantages normalized
    per minibatch), and at every gradient step the update averages their minibatch gradients
    (gradient accumulation over however many processes host them: ``workers``). Joint PPO on
    Sonic: 188 (Nichol et al. 2018, section 4.5). 0: one per process (``workers``); with
    ``workers`` 0 too, one PPO over all the unit's sub-environments (benchgen's fallback for small
    runs, not the paper's joint setup). Fine-tuning units always run as one regular PPO."""
    workers: int = 0
    """Processes hosting the virtual workers, a contiguous share each: speed only, the update is
    the same up to the order of float sums. 0 or 1: the unit's own process (no Ray); N > 1: N Ray
    actors averaging over torch.distributed. With ``virtual_workers`` 0, each process is one
    worker (``workers`` is then the worker count too)."""
    envs_per_worker: int | None = None
    """Sub-environments per virtual worker (None: enough for every task of the unit to have one,
    i.e. ceil(tasks / virtual workers); with the paper's 188 workers on 47 levels, 1)."""
    rollout_memory_gib: float = execution_setting(4.0)
    """Rollout observations a process keeps in memory, in GiB (uint8 frames as they are, frame
    stacks one new frame per step); beyond it, its virtual workers' rollouts go to memory-mapped
    files under the unit's directory (188 Sonic workers x 8192 steps of 84x84 frames: 10 GiB a
    round), removed when the unit ends. A run whose disk cannot hold them is refused with what it
    needs."""
    worker_cpus: float = execution_setting(1.0)
    """CPUs Ray reserves for each worker (0.5 lets two workers share a CPU); its torch threads."""
    worker_restarts: int = execution_setting(3)
    """Times a unit restarts its worker group after losing a worker (from the last synchronized
    state), before it fails and the runner's retry resumes it from its last checkpoint."""
    worker_timeout_s: float = execution_setting(600.0)
    """Seconds a round may take before the group counts a worker as lost (and the process
    group's collectives time out)."""

    def __post_init__(self) -> None:
        # Fail fast, with what to do (SB3 would fail later, deep in a learn call).
        if self.policy not in POLICIES:
            raise ValueError(f"policy must be one of {', '.join(POLICIES)}, not '{self.policy}'")
        for name in ("lr_schedule", "clip_schedule"):
            if getattr(self, name) not in SCHEDULES:
                raise ValueError(f"{name} must be 'linear' or 'constant', not '{getattr(self, name)}'")
        for name in ("n_steps", "batch_size", "n_epochs", "features_dim", "log_interval"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be a positive integer, got {getattr(self, name)}")
        if self.batch_size < 2:
            raise ValueError("batch_size must be at least 2 (advantages are normalised per minibatch)")
        if not (0 < self.learning_rate and 0 < self.clip_range and 0 < self.reward_scale):
            raise ValueError("learning_rate, clip_range and reward_scale must be positive")
        if not (0 <= self.gamma <= 1 and 0 <= self.gae_lambda <= 1):
            raise ValueError("gamma and gae_lambda must lie in [0, 1]")
        if self.workers < 0 or self.worker_restarts < 0 or self.virtual_workers < 0:
            raise ValueError("workers, virtual_workers and worker_restarts must be >= 0 (workers=0: one process)")
        if self.virtual_workers and self.workers > self.virtual_workers:
            raise ValueError(
                f"workers={self.workers} processes cannot share virtual_workers={self.virtual_workers}: "
                "set workers at most virtual_workers"
            )
        if self.extractor_init not in EXTRACTOR_INITS:
            raise ValueError(f"extractor_init must be 'orthogonal' or 'glorot', not '{self.extractor_init}'")
        if self.value_loss not in VALUE_LOSSES:
            raise ValueError(f"value_loss must be 'sb3' or 'ppo2', not '{self.value_loss}'")
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be 'float32' or 'bfloat16', not '{self.precision}'")
        if self.normalize and self.normalize_reward:
            raise ValueError("normalize already scales rewards: set normalize_reward only without normalize")
        if self.clip_range_vf is not None and not self.clip_range_vf > 0:
            raise ValueError("clip_range_vf must be positive (or None: no value clipping)")
        if self.normalize_gamma is not None and not 0 <= self.normalize_gamma <= 1:
            raise ValueError("normalize_gamma must lie in [0, 1] (or None: gamma)")
        if (self.normalize or self.normalize_reward) and (self.workers or self.virtual_workers):
            raise ValueError(
                "normalize and normalize_reward (VecNormalize) are not carried by data-parallel workers; set normalize_reward=false and normalize=false, or "
                "workers=0 and virtual_workers=0"
            )
        if not self.rollout_memory_gib >= 0:
            raise ValueError("rollout_memory_gib must be >= 0")
        if self.envs_per_worker is not None and self.envs_per_worker < 1:
            raise ValueError("envs_per_worker must be a positive integer (or None: one per task)")
        if self.worker_cpus < 0 or not self.worker_timeout_s > 0:
            raise ValueError("worker_cpus must be >= 0 and worker_timeout_s positive")
        if (self.workers or self.virtual_workers) and self.target_kl is not None:
            raise ValueError(
                "target_kl stops a worker's epochs early on its own data, which data-parallel workers "
                "cannot do in step; set target_kl=None or workers=0 and virtual_workers=0"
            )
        if self.update_chunk is not None and self.update_chunk < 0:
            raise ValueError("update_chunk must be >= 0 (0: the whole minibatch; None: 256 on the CPU)")
        if self.torch_threads < 0:
            raise ValueError("torch_threads must be >= 0 (0: one core left to the environments)")
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(f"{f.name} must be a finite number, not {value}")
        check_device(self.device)
