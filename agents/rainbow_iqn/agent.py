"""Rainbow-IQN (SABER section 4): the algorithm core, top to bottom.

1. ``quantile_huber_loss``: the IQN loss (Dabney et al. 2018, eq. 3 with the quantile Huber
   loss of eq. 10 of QR-DQN, Dabney et al. 2018a).
2. ``RainbowIQNAgent.update``: one learner step, sampled from prioritized replay: double-Q
   bootstrap action from the online net's mean over K quantiles, N' target quantiles from the
   target net, N online quantiles, importance-weighted loss, new priorities from the loss.
3. ``RainbowIQNAgent.learn``: the interaction loop: uniformly random actions until learning
   starts (``warmup_steps``, as SABER's code and Dopamine do), then noisy-net exploration (no
   epsilon), replay writes (with ``actor_priorities``, initial priorities from each new
   transition's loss), one update every ``update_period_steps`` agent steps (summed over
   sub-environments), target copies every ``target_update_steps`` agent steps.
4. ``act`` (greedy: noise off, mean over K quantiles), ``save`` / ``load``.

Config, network and replay live in ``config.py``, ``networks.py`` and ``replay.py``; with
``actors > 0``, ``learn`` hands over to the Ape-X learner of ``apex.py`` (``IQNCore`` holds what
its actors share with this agent: the targets, the loss and acting).
"""

from __future__ import annotations

import copy
import dataclasses
import os
import random
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch

from benchgen.agent import Agent, AgentEnvironment, TrainingContext
from benchgen.errors import UsageError
from benchgen_agents.checkpoint_io import load_json, load_tensors, refusing_bad_state, save_json, save_tensors
from benchgen_agents.rainbow_iqn.config import RainbowIQNConfig, check_replay_fits
from benchgen_agents.rainbow_iqn.networks import IQNNetwork
from benchgen_agents.rainbow_iqn.replay import PrioritizedReplay
from benchgen_agents.torch_device import pick_device

CHECKPOINT = "rainbow_iqn.pt"
STATE_JSON = "rainbow_iqn.json"
REPLAY_DIR = "replay"


def quantile_huber_loss(
    quantiles: torch.Tensor, taus: torch.Tensor, targets: torch.Tensor, kappa: float
) -> torch.Tensor:
    """Per-sample IQN loss.

    ``quantiles`` (B, N): Z_{tau_i}(x, a) of the online net at the sampled ``taus`` (B, N);
    ``targets`` (B, N'): r + gamma^m Z_{tau'_j}(x', a*). With the TD errors
    ``delta_ij = target_j - quantile_i`` (IQN eq. 3 and QR-DQN eq. 10)::

        rho^kappa_tau(delta) = |tau - 1{delta < 0}| * L_kappa(delta) / kappa
        L_kappa(delta) = delta^2 / 2 if |delta| <= kappa else kappa (|delta| - kappa / 2)
        loss = sum_i (1/N') sum_j rho^kappa_{tau_i}(delta_ij)   (summed over N, averaged over N')
    """
    delta = targets.unsqueeze(1) - quantiles.unsqueeze(2)  # (B, N, N')
    abs_delta = delta.abs()
    huber = torch.where(abs_delta <= kappa, 0.5 * delta.pow(2), kappa * (abs_delta - 0.5 * kappa))
    weight = (taus.unsqueeze(2) - (delta.detach() < 0).float()).abs()  # |tau_i - 1{delta_ij < 0}|
    return (weight * huber / kappa).sum(dim=1).mean(dim=1)


def check_spaces(observation_space: gym.Space, action_space: gym.Space, config: RainbowIQNConfig):
    """Validate the spaces before anything is built; returns (obs_shape, storage dtype)."""
    if not isinstance(action_space, gym.spaces.Discrete):
        raise UsageError(f"rainbow_iqn needs a Discrete action space, got {action_space}")
    shape = tuple(getattr(observation_space, "shape", None) or ())
    dtype = getattr(observation_space, "dtype", None)
    if isinstance(observation_space, gym.spaces.Box) and len(shape) == 3 and dtype == np.uint8:
        if shape[-1] < shape[0] and shape[-1] in (1, 2, 3, 4):
            raise UsageError(f"rainbow_iqn needs channel-first (C, H, W) images, got shape {shape} (channel-last?)")
        if shape[0] % config.frame_stack:
            raise UsageError(
                f"observations have {shape[0]} channels, not a multiple of frame_stack={config.frame_stack}; "
                "set frame_stack to the environment's stack size (1 if it does not stack frames)"
            )
        if min(shape[1:]) < 36:
            raise UsageError(f"the Nature-DQN torso needs images of at least 36x36 pixels, got {shape[1]}x{shape[2]}")
        return shape, np.uint8
    if isinstance(observation_space, gym.spaces.Box) and len(shape) == 1 and np.issubdtype(dtype, np.floating):
        return shape, np.float32
    raise UsageError(
        f"rainbow_iqn needs uint8 (C, H, W) image or flat float vector observations, got {observation_space}"
    )


class IQNCore:
    """What the learner and Ape-X actors share: taus, autocast, the targets and the loss.

    Needs ``config``, ``device``, ``online``, ``target`` and ``generator`` attributes."""

    def _autocast(self):
        """bfloat16 matrix products when ``precision="bfloat16"``, else a no-op context."""
        return torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.config.precision == "bfloat16")

    def _taus(self, batch: int, count: int) -> torch.Tensor:
        """tau ~ U(0, 1), one set per sample (IQN section 3)."""
        return torch.rand(batch, count, generator=self.generator, device=self.device)

    def _tensor(self, array: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(np.ascontiguousarray(array)).to(self.device, non_blocking=True)

    @torch.no_grad()
    def target_quantiles(self, next_obs: torch.Tensor, returns: torch.Tensor, discounts: torch.Tensor) -> torch.Tensor:
        """n-step distributional targets r + gamma^m Z_{tau'_j}(x', a*), shape (B, N')."""
        cfg = self.config
        B, N_, K = len(next_obs), cfg.num_tau_prime_samples, cfg.num_quantile_samples
        # Bootstrap action a* = argmax_a (1/K) sum_k Z_{tau_k}(x', a): from the online net
        # (double Q, van Hasselt et al. 2016; Rainbow) or from the target net (plain IQN).
        selector = self.online if cfg.double_q else self.target
        selector.reset_noise(self.generator)
        with self._autocast():
            next_action = selector(next_obs, self._taus(B, K)).mean(dim=1).argmax(dim=1)
        # Target quantiles from the target network at N' fresh fractions tau'_j.
        self.target.reset_noise(self.generator)
        with self._autocast():
            next_z = self.target(next_obs, self._taus(B, N_))  # (B, N', A)
        next_z = next_z.gather(2, next_action.view(B, 1, 1).expand(B, N_, 1)).squeeze(2)
        # Rainbow eq. 2 with IQN's samples: T Z_j = sum_{k<m} gamma^k r_{t+k} + gamma^m Z_{tau'_j}(x_{t+m}, a*),
        # the discount being 0 after a terminal step (the replay computes returns and discounts).
        return returns.unsqueeze(1) + discounts.unsqueeze(1) * next_z

    def sample_losses(self, batch: dict[str, np.ndarray]) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-sample quantile Huber losses (B,) of a replay batch, and the online quantiles of
        the taken actions (B, N); differentiable unless called under ``torch.no_grad``."""
        cfg = self.config
        obs, next_obs = self._tensor(batch["obs"]), self._tensor(batch["next_obs"])
        actions = self._tensor(batch["actions"])
        returns, discounts = self._tensor(batch["returns"]), self._tensor(batch["discounts"])
        B, N = len(actions), cfg.num_tau_samples

        targets = self.target_quantiles(next_obs, returns, discounts)  # (B, N')

        # Online quantiles Z_{tau_i}(x, a) at N fresh fractions, with fresh noise.
        self.online.reset_noise(self.generator)
        taus = self._taus(B, N)
        with self._autocast():
            z = self.online(obs, taus)
        z = z.gather(2, actions.view(B, 1, 1).expand(B, N, 1)).squeeze(2)  # (B, N)
        return quantile_huber_loss(z, taus, targets, cfg.kappa), z

    @torch.inference_mode()
    def _argmax_actions(self, obs: np.ndarray) -> np.ndarray:
        """argmax_a (1/K) sum_k Z_{tau_k}(x, a), with the online net's current noise setting."""
        taus = self._taus(len(obs), self.config.num_quantile_samples)
        with self._autocast():
            q = self.online(self._tensor(obs), taus).mean(dim=1)
        return q.argmax(dim=1).cpu().numpy()


class RainbowIQNAgent(IQNCore, Agent):
    """Single-learner Rainbow-IQN; see the module docstring. With ``actors > 0`` its ``learn``
    runs the Ape-X learner of ``apex.py`` instead of its own interaction loop."""

    def __init__(self, config: RainbowIQNConfig, environment: AgentEnvironment):
        super().__init__(config, environment)
        self.obs_shape, self.obs_dtype = check_spaces(self.observation_space, self.action_space, config)
        self.num_actions = int(self.action_space.n)
        needed = PrioritizedReplay.estimate_bytes(
            config.replay_capacity, self.obs_shape, self.obs_dtype, config.frame_stack
        )
        check_replay_fits(needed, config.replay_capacity, f"observations of shape {self.obs_shape}")
        self.device = pick_device(config.device)
        if self.device.type == "cpu":
            # 0 = the machine's cores, or the share the runner gives a unit (OMP_NUM_THREADS, --jobs)
            torch.set_num_threads(
                config.torch_threads or int(os.environ.get("OMP_NUM_THREADS", 0)) or len(os.sched_getaffinity(0))
            )
        self.replay: PrioritizedReplay | None = None
        self.counters = {
            "agent_steps": 0,  # transitions taken, all sub-environments together
            "updates": 0,  # learner updates done
            "update_credit": 0,  # agent steps not yet paid for by an update
            "target_syncs": 0,  # target copies done (one per target_update_steps agent steps)
            "noise_epoch": -1,  # agent_steps // update_period_steps at the last acting-noise draw
            "seeded": False,  # networks and RNGs drawn from the unit's seed
        }
        self._pending: list[np.ndarray] = []  # actor_priorities: completed transitions awaiting theirs
        self._build(seed=0)

    def _build(self, seed: int) -> None:
        """Networks, optimizer and RNGs, all seeded from ``seed`` (the unit's seed on a fresh start)."""
        cfg = self.config
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self.online = IQNNetwork(self.obs_shape, self.num_actions, cfg).to(self.device)
        self.target = copy.deepcopy(self.online).requires_grad_(False)
        # fused Adam: one kernel for all parameters (same arithmetic as the loop implementation)
        self.optimizer = torch.optim.Adam(self.online.parameters(), lr=cfg.learning_rate, eps=cfg.adam_eps, fused=True)
        self.generator = torch.Generator(device=self.device)
        self.generator.manual_seed(seed)
        self.np_rng = np.random.default_rng(seed)
        self.online.reset_noise(self.generator)
        self.target.reset_noise(self.generator)

    # -- the learner update ------------------------------------------------------------------
    def update(self, beta: float) -> tuple[float, float]:
        """One gradient step on a prioritized batch; returns (mean loss, mean Q of taken actions)."""
        cfg = self.config
        batch = self.replay.sample(cfg.batch_size, beta, self.np_rng)
        weights = self._tensor(batch["weights"])
        per_sample, z = self.sample_losses(batch)
        loss = (weights * per_sample).mean()  # PER: importance weights correct the sampling bias

        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if cfg.max_grad_norm > 0:
            torch.nn.utils.clip_grad_norm_(self.online.parameters(), cfg.max_grad_norm)
        self.optimizer.step()

        stats = torch.cat([per_sample.detach(), z.detach().mean().view(1)]).cpu().numpy()
        self.replay.update_priorities(batch["indices"], stats[:-1])  # priorities from the per-sample loss
        self.counters["updates"] += 1
        return float(stats[:-1].mean()), float(stats[-1])

    @torch.no_grad()
    def insert_pending_priorities(self) -> None:
        """``actor_priorities``: give the transitions completed since the last call their initial
        priorities from their losses (as an Ape-X actor computes them), in batches of at most
        ``4 * batch_size``. Its forward passes draw noise: the caller redraws the acting noise."""
        indices = np.concatenate(self._pending) if self._pending else np.zeros(0, np.int64)
        self._pending = []
        chunk = 4 * self.config.batch_size
        for start in range(0, len(indices), chunk):
            part = indices[start : start + chunk]
            losses, _ = self.sample_losses(self.replay.transitions(part))
            self.replay.insert_priorities(part, losses.float().cpu().numpy())

    # -- acting -------------------------------------------------------------------------------
    def warmup_steps(self) -> int:
        """The unit's agent steps (``ctx.steps_done``) before which actions are uniformly random,
        as in SABER's code and Dopamine: ``learning_starts_steps`` for an agent that has not
        learned yet, 0 for one that has (resumed after learning started, or fine-tuning from a
        trained checkpoint). Counted in the unit's steps, so a unit resumed during its warm-up
        finishes it rather than starting it again, and one resumed past it never repeats it."""
        return 0 if self.counters["updates"] > 0 else self.config.learning_starts_steps

    def random_actions(self, count: int) -> np.ndarray:
        """``count`` actions uniform over the whole action space, from the agent's numpy generator
        (seeded from the unit's seed, saved in checkpoints)."""
        return self.np_rng.integers(self.num_actions, size=count)

    def act(self, observations: np.ndarray, greedy: bool = True) -> np.ndarray:
        """Actions for a batch of observations. Greedy: noise off (evaluation); else the current
        noisy policy (NoisyNet exploration)."""
        obs = np.asarray(observations)
        single = obs.shape == self.obs_shape
        batch = obs[None] if single else obs
        self.online.set_noise(not greedy)
        try:
            actions = self._argmax_actions(batch)
        finally:
            self.online.set_noise(True)
        return actions[0] if single else actions

    # -- the interaction loop -----------------------------------------------------------------
    def learn(self, env: gym.vector.VectorEnv, ctx: TrainingContext) -> None:
        cfg, c = self.config, self.counters
        num_envs = self._check_env(env)
        if not c["seeded"]:  # a fresh agent: everything from the unit's seed
            self._build(ctx.seed)
            c["seeded"] = True
        if cfg.actors > 0:  # Ape-X: remote actors step their own envs; this process learns
            from benchgen_agents.rainbow_iqn.apex import ApexLearner

            ApexLearner(self, env, ctx).train()
            return
        if self.replay is None or self.replay.num_envs != num_envs:  # streams are per sub-environment:
            self.replay = self.new_replay(num_envs)  # another env count starts an empty memory
            self._pending = []
        budget = max(1, ctx.budget_steps)
        obs, _ = env.reset(seed=ctx.reset_seed)
        for e in range(num_envs):
            self.replay.start_episode(e, obs[e])
        period, noise_stale = cfg.update_period_steps, True
        random_until = self.warmup_steps()
        log = {"loss": 0.0, "q": 0.0, "n": 0, "t": time.perf_counter()}

        while not ctx.finished:
            # NoisyNet exploration (no epsilon): a fresh noise sample every `period` agent steps
            # (Rainbow) and after every update (whose forward passes drew their own noise), the
            # pending initial priorities computed just before (their forward passes draw noise too).
            if noise_stale or c["agent_steps"] // period != c["noise_epoch"]:
                self.insert_pending_priorities()
                self.online.reset_noise(self.generator)
                c["noise_epoch"], noise_stale = c["agent_steps"] // period, False
            if ctx.steps_done < random_until:  # until learning starts: uniform over all actions
                actions = self.random_actions(num_envs)
            else:
                actions = self._argmax_actions(obs)
            next_obs, rewards, terminated, truncated, infos = env.step(actions)
            if (terminated | truncated).any() and "final_obs" not in infos:
                raise UsageError(
                    "rainbow_iqn needs SAME_STEP autoreset with info['final_obs'] (the suite env contract)"
                )
            completed = self.replay.add(obs, actions, rewards, terminated, truncated, next_obs, infos.get("final_obs"))
            if cfg.actor_priorities:
                self._pending.append(completed)
            obs = next_obs
            c["agent_steps"] += num_envs

            # One update per `period` agent steps once the memory holds learning_starts transitions.
            if self.replay.num_added >= cfg.learning_starts_steps and self.replay.num_valid > 0:
                c["update_credit"] += num_envs
                if c["update_credit"] >= period:
                    self.insert_pending_priorities()  # none is sampled before it has its own
                while c["update_credit"] >= period:
                    c["update_credit"] -= period
                    # beta annealed linearly from its start value to its end over the unit's budget
                    progress = min(1.0, ctx.steps_done / budget)
                    beta = cfg.priority_weight_start + (cfg.priority_weight_end - cfg.priority_weight_start) * progress
                    loss, q = self.update(beta)
                    noise_stale = True
                    log["loss"] += loss
                    log["q"] += q
                    log["n"] += 1
                    if log["n"] == cfg.log_every_updates:
                        self.log_updates(ctx, log, beta)

            # Target network: a copy of the online net every target_update_steps agent steps.
            if c["agent_steps"] // cfg.target_update_steps > c["target_syncs"]:
                self.target.load_state_dict(self.online.state_dict())
                c["target_syncs"] = c["agent_steps"] // cfg.target_update_steps
            ctx.maybe_checkpoint()
        self.insert_pending_priorities()

    def log_updates(self, ctx: TrainingContext, log: dict, beta: float) -> None:
        """Log the mean loss and Q of the updates summed in ``log`` (``loss``, ``q``, their count
        ``n`` and the time ``t`` the count began), beta and the memory's size; then zero ``log``.
        The single agent and the Ape-X learner log the same way."""
        now = time.perf_counter()
        ctx.log_scalar("rainbow_iqn/loss", log["loss"] / log["n"])
        ctx.log_scalar("rainbow_iqn/q_taken", log["q"] / log["n"])
        ctx.log_scalar("rainbow_iqn/beta", beta)
        ctx.log_scalar("rainbow_iqn/replay_transitions", self.replay.num_valid)
        ctx.log_scalar("rainbow_iqn/updates_per_second", log["n"] / max(now - log["t"], 1e-9))
        log.update(loss=0.0, q=0.0, n=0, t=now)

    def _check_env(self, env: gym.vector.VectorEnv) -> int:
        """The env must match the spaces the agent was built for and the frame unit of the config."""
        if tuple(env.single_observation_space.shape) != self.obs_shape or env.single_action_space != self.action_space:
            raise UsageError(
                f"the environment's spaces ({env.single_observation_space}, {env.single_action_space}) "
                f"differ from the agent's ({self.observation_space}, {self.action_space})"
            )
        mode = (getattr(env, "metadata", None) or {}).get("autoreset_mode")
        if mode is not None and mode != gym.vector.AutoresetMode.SAME_STEP:
            raise UsageError(f"rainbow_iqn needs a SAME_STEP autoreset vector env, got {mode}")
        layer = env
        for _ in range(64):  # the suite env's frames_per_step, under any wrappers
            fps = getattr(layer, "frames_per_step", None)
            if isinstance(fps, int):
                if fps != self.config.frames_per_step:
                    raise UsageError(
                        f"the environment has {fps} frames per step but the config was resolved for "
                        f"frames_per_step={self.config.frames_per_step}; build the config for its suite "
                        f"(frames_per_step={fps})"
                    )
                break
            layer = getattr(layer, "env", None)
            if layer is None:
                break
        return int(env.num_envs)

    def new_replay(self, num_envs: int) -> PrioritizedReplay:
        """An empty prioritized memory for this agent's config and spaces, with ``num_envs``
        streams: one per sub-environment of ``learn``'s env, or per (actor, sub-environment) of
        the Ape-X learner."""
        cfg = self.config
        return PrioritizedReplay(
            cfg.replay_capacity,
            num_envs,
            self.obs_shape,
            self.obs_dtype,
            cfg.frame_stack,
            cfg.n_step,
            cfg.gamma,
            cfg.priority_exponent,
            cfg.reward_clip,
            self.num_actions,
        )

    # -- checkpoints --------------------------------------------------------------------------
    def save(self, directory: Path) -> None:
        """Networks, optimizer, counters, every RNG, the config, and (``save_replay``) the memory."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        save_tensors(
            {
                "online": self.online.state_dict(),
                "target": self.target.state_dict(),
                "optimizer": self.optimizer.state_dict(),
                "generator": self.generator.get_state(),
                "torch_global": torch.get_rng_state(),
                "cuda_global": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
            },
            directory / CHECKPOINT,
        )
        np_global = np.random.get_state()
        state = {
            "config": {f.name: getattr(self.config, f.name) for f in dataclasses.fields(self.config)},
            "counters": self.counters,
            "numpy_rng": self.np_rng.bit_generator.state,
            "numpy_global": [np_global[0], np_global[1].tolist(), *np_global[2:]],
            "python_random": random.getstate(),
            "replay_saved": bool(self.config.save_replay and self.replay is not None),
        }
        if state["replay_saved"]:  # actor_priorities: transitions still awaiting their priorities
            state["pending_priorities"] = [int(i) for part in self._pending for i in part]
        save_json(state, directory / STATE_JSON)
        if state["replay_saved"]:
            self.replay.save(directory / REPLAY_DIR)

    def load(self, directory: Path) -> None:
        """Restore what :meth:`save` wrote; training then continues exactly where it stopped.

        Tensors and JSON only (``checkpoint_io``): a file holding pickled objects, or one that does
        not fit this agent, is refused with one line and nothing of it is run.
        """
        directory = Path(directory)
        if not (directory / CHECKPOINT).is_file():
            raise UsageError(f"{directory} holds no Rainbow-IQN checkpoint ({CHECKPOINT} is missing)")
        ckpt = load_tensors(
            directory / CHECKPOINT,
            "Rainbow-IQN checkpoint",
            keys=("online", "target", "optimizer", "generator", "torch_global", "cuda_global"),
        )
        state = load_json(directory / STATE_JSON, "Rainbow-IQN checkpoint state")
        with refusing_bad_state(
            "Rainbow-IQN checkpoint",
            directory,
            "start from a checkpoint written by rainbow_iqn on the same observations and actions",
        ):
            self._restore(ckpt, state)
        # numpy arrays (allow_pickle=False) and JSON; a damaged memory stops the resume in one line
        with refusing_bad_state(
            "Rainbow-IQN replay",
            directory / REPLAY_DIR,
            f"remove that {REPLAY_DIR} folder to resume with an empty memory",
        ):
            saved_envs = PrioritizedReplay.saved_num_envs(directory / REPLAY_DIR) if state.get("replay_saved") else None
            if saved_envs is not None:
                self.replay = self.new_replay(saved_envs)
                self.replay.load(directory / REPLAY_DIR)
                pending = np.asarray(state.get("pending_priorities", []), np.int64).reshape(-1)
                if pending.size and (pending.min() < 0 or pending.max() >= self.replay.slots):
                    raise ValueError("pending_priorities names slots outside the memory")
                self._pending = [pending]
            else:
                self.replay = None  # a fresh memory refills before learning resumes
                self._pending = []

    def _restore(self, ckpt: dict, state: dict) -> None:
        """Networks, optimizer, counters and RNGs from a loaded checkpoint (raises on one that does not fit)."""
        self.online.load_state_dict(ckpt["online"])
        self.target.load_state_dict(ckpt["target"])
        self.optimizer.load_state_dict(ckpt["optimizer"])
        self.generator.set_state(ckpt["generator"])
        torch.set_rng_state(ckpt["torch_global"])
        if ckpt["cuda_global"] and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(ckpt["cuda_global"])
        self.counters = dict(state["counters"])
        self.np_rng.bit_generator.state = state["numpy_rng"]
        kind, keys, *rest = state["numpy_global"]
        np.random.set_state((kind, np.asarray(keys, np.uint32), *rest))
        version, internal, gauss = state["python_random"]
        random.setstate((version, tuple(internal), gauss))
