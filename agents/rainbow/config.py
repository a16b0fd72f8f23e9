"""Rainbow settings (Hessel et al. 2018, "Rainbow: Combining Improvements in Deep Reinforcement
Learning", table 1 and section "Hyper-parameter tuning"), every field with its source.

The settings shared with DQN and Rainbow-IQN come from
:class:`~benchgen_agents.value_based.config.ValueBasedConfig`, whose defaults are Rainbow's
already (n = 3, double Q, dueling, PER omega 0.5 and beta 0.4 -> 1, replay 1M, learning start
80K frames, target copy every 32K frames, one update per 4 agent steps, batch 32, gamma 0.99,
rewards clipped to [-1, 1], Adam with lr 6.25e-5 and eps 1.5e-4); the fields below are the C51
head and the noisy nets.

On Sonic the Sonic suite supplies Gotta Learn Fast's values (Nichol et al. 2018, section 4.2;
``plugins/sonic/tuned/rainbow.yaml``): Vmax = 200, replay 0.5M, no hyperparameter schedules
(beta stays at its initial 0.4), rewards not clipped.

Variants (``--set variant=NAME``, :data:`VARIANTS`): ``paper``, the defaults below, and ``der``,
Data-Efficient Rainbow for Atari 100K (:data:`DER`). A variant only supplies defaults: settings
given with ``--set``/``--config`` override its values.

This module imports neither torch nor numpy, so ``benchgen list`` stays fast.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchgen.config import execution_setting
from benchgen.errors import UsageError, did_you_mean
from benchgen_agents.value_based.config import ValueBasedConfig, check_int, check_number

#: Data-Efficient Rainbow (van Hasselt, Hessel, Aslanides 2019, "When to use parametric models in
#: reinforcement learning?", appendix, the hyper-parameter table beside Rainbow's): one update per
#: agent step, learning from 1,600 steps of replay on, a target copy every 2,000 updates, 20-step
#: returns, Adam lr 1e-4 (eps 1.5e-4, as Rainbow), noisy nets sigma0 0.1, gradient norm clipped
#: at 10, 256 hidden units, and its own two-layer torso. The rest is Rainbow's (C51 over
#: [-10, 10], dueling, double Q, PER omega 0.5, beta 0.4 -> 1, batch 32, rewards clipped). Replay:
#: the whole run (DER: "unbounded"; 100K agent steps). Frame-counted values are agent steps x 4.
#: Where the public implementations differ: SPR's and Dopamine's DER (``labs/atari_100k/configs/
#: DER.gin``) use 10-step returns, the Nature torso with 512 units and, in Dopamine, an extra
#: epsilon-greedy 0.01; benchgen follows the paper, whose per-game table is the published DER.
DER: dict[str, object] = {
    "torso": "data_efficient",
    "hidden_size": 256,
    "n_step": 20,
    "learning_starts_frames": 6_400,
    "update_period_steps": 1,
    "target_update_frames": 8_000,
    "learning_rate": 1e-4,
    "adam_eps": 1.5e-4,
    "noisy_sigma0": 0.1,
    "max_grad_norm": 10.0,
    "replay_capacity": 100_000,
}

#: ``variant`` -> the config defaults it gives (``AgentSpec.variants``)
VARIANTS: dict[str, dict[str, object]] = {"paper": {}, "der": DER}


@dataclass
class RainbowConfig(ValueBasedConfig):
    """Rainbow: C51 head, dueling noisy nets, double Q, 3-step returns, prioritized replay."""

    variant: str = "paper"
    """Which defaults the settings below take (:data:`VARIANTS`): "paper" (Hessel et al. 2018) or
    "der" (Data-Efficient Rainbow for Atari 100K: :data:`DER`). Settings given explicitly
    override the variant's."""

    # -- distributional head (C51, Bellemare et al. 2017) --------------------------------------
    num_atoms: int = 51
    """Atoms of the return distribution's support (C51, Rainbow: 51)."""
    v_min: float = -10.0
    """Smallest atom (Rainbow: -10; Sonic: -200)."""
    v_max: float = 10.0
    """Largest atom (Rainbow: 10; Sonic, Gotta Learn Fast: 200)."""

    # -- exploration ---------------------------------------------------------------------------
    noisy_sigma0: float = 0.5
    """Initial noise scale of the factorised noisy layers, sigma_i = sigma0 / sqrt(fan_in)
    (NoisyNet, Rainbow: 0.5). Rainbow uses no epsilon-greedy exploration."""

    # -- data-parallel joint training (Gotta Learn Fast, section 4.6 and Algorithm 2) ----------
    workers: int = 0
    """Data-parallel workers (Ray actors) of a learning unit other than fine-tuning, each running
    Algorithm 2 on its own environments and its own replay, gradients all-reduced (averaged) at
    every update. 0: the single-process agent (benchgen's fallback, not the paper's joint setup).
    Joint Rainbow on Sonic: 32 (Nichol et al. 2018: "32 GPUs. Each GPU corresponds to a single
    worker"). Fine-tuning units always run in one process."""
    envs_per_worker: int = 8
    """Sub-environments per worker ("each worker has its own replay buffer and eight environments")."""
    round_steps: int = 250
    """Vector steps each worker plays between two reports to the unit's process (its episodes
    recorded, the synchronized state kept for checkpoints and restarts): a lost worker costs at
    most a round; benchgen's choice, not the paper's."""
    worker_cpus: float = execution_setting(1.0)
    """CPUs Ray reserves for each worker (0.5 lets two workers share a CPU); its torch threads."""
    worker_restarts: int = execution_setting(3)
    """Times a unit restarts its worker group after losing a worker (from the last round's state;
    the replays start empty) before it fails and the runner's retry resumes it."""
    worker_timeout_s: float = execution_setting(600.0)
    """Seconds a round may take before the group counts a worker as lost."""

    def _validate(self) -> None:
        if self.variant not in VARIANTS:
            raise did_you_mean("rainbow variant", str(self.variant), VARIANTS)
        super()._validate()
        for name in ("workers", "worker_restarts"):
            check_int(name, getattr(self, name), minimum=0)
        for name in ("envs_per_worker", "round_steps"):
            check_int(name, getattr(self, name), minimum=1)
        check_number("worker_cpus", self.worker_cpus, self.worker_cpus >= 0, "non-negative")
        check_number("worker_timeout_s", self.worker_timeout_s, self.worker_timeout_s > 0, "positive")
        if self.workers and self.updates_per_period != 1:
            raise UsageError("updates_per_period is for the single-process agent; data-parallel workers take 1")
        if self.workers and self.actor_priorities:
            raise UsageError("actor_priorities is for Ape-X actors; data-parallel workers (workers > 0) do not use it")
        check_int("num_atoms", self.num_atoms, minimum=2)
        for name in ("v_min", "v_max"):
            check_number(name, getattr(self, name), True, "a finite number")
        if self.v_min >= self.v_max:
            raise UsageError(f"v_min ({self.v_min}) must be less than v_max ({self.v_max})")
        check_number("noisy_sigma0", self.noisy_sigma0, self.noisy_sigma0 >= 0, "non-negative")
