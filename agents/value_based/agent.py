"""The value-based agents' shared learner: the interaction loop, the update, checkpoints.

:class:`ValueBasedAgent` is DQN's training procedure (Mnih et al. 2015, Algorithm 1) in the
form Rainbow (Hessel et al. 2018) and SABER's Rainbow-IQN use it, top to bottom:

1. ``learn``: uniformly random actions until learning starts (``warmup_steps``: DQN's replay
   start, and what SABER's code and Dopamine do for Rainbow), then the agent's exploration
   (``explore_actions``: noisy-net greedy for Rainbow and Rainbow-IQN, epsilon-greedy for DQN);
   every transition into the frame-once n-step prioritized replay (``replay.py``); one
   ``update`` every ``update_period_steps`` agent steps (summed over sub-environments); a
   target copy every ``target_update_steps`` agent steps.
2. ``update``: one gradient step on a (prioritized) batch: the head's per-sample losses
   (``Head.sample_losses``), importance-weighted, and the losses as new priorities. The step
   itself is ``learner_step`` (DrQ's augmentation, losses, backward, optimizer step), which on a
   GPU is replayed as a CUDA graph (``cuda_graph.py``).
3. ``act`` (greedy: noise off), ``save`` / ``load`` (tensors and JSON only, ``checkpoint_io``).

An agent is ``class XAgent(SomeHead, ValueBasedAgent)`` (DQN adds its own ``make_optimizer`` and
``explore_actions``): the head module brings the network, the targets and the loss.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import random
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch

from benchgen.agent import Agent, AgentEnvironment, TrainingContext
from benchgen.errors import UsageError
from benchgen_agents.common.checkpoint_io import load_json, load_tensors, refusing_bad_state, save_json, save_tensors
from benchgen_agents.common.optimizers import adam
from benchgen_agents.common.torch_device import cpu_threads, pick_device
from benchgen_agents.value_based.augmentation import augment, draw_augmentation
from benchgen_agents.value_based.config import ValueBasedConfig, check_replay_fits
from benchgen_agents.value_based.cuda_graph import GraphedLearnerStep, graphs_supported
from benchgen_agents.value_based.layers import initialize
from benchgen_agents.value_based.replay import PrioritizedReplay

REPLAY_DIR = "replay"


def check_spaces(agent: str, observation_space: gym.Space, action_space: gym.Space, frame_stack: int):
    """Validate the spaces before anything is built; returns (obs_shape, storage dtype)."""
    if not isinstance(action_space, gym.spaces.Discrete):
        raise UsageError(f"{agent} needs a Discrete action space, got {action_space}")
    shape = tuple(getattr(observation_space, "shape", None) or ())
    dtype = getattr(observation_space, "dtype", None)
    if isinstance(observation_space, gym.spaces.Box) and len(shape) == 3 and dtype == np.uint8:
        if shape[-1] < shape[0] and shape[-1] in (1, 2, 3, 4):
            raise UsageError(f"{agent} needs channel-first (C, H, W) images, got shape {shape} (channel-last?)")
        if shape[0] % frame_stack:
            raise UsageError(
                f"observations have {shape[0]} channels, not a multiple of frame_stack={frame_stack}; "
                "set frame_stack to the environment's stack size (1 if it does not stack frames)"
            )
        if min(shape[1:]) < 36:
            raise UsageError(f"the Nature-DQN torso needs images of at least 36x36 pixels, got {shape[1]}x{shape[2]}")
        return shape, np.uint8
    if isinstance(observation_space, gym.spaces.Box) and len(shape) == 1 and np.issubdtype(dtype, np.floating):
        return shape, np.float32
    raise UsageError(f"{agent} needs uint8 (C, H, W) image or flat float vector observations, got {observation_space}")


#: bytes of a CUDA generator's saved state (Philox: its seed and offset, 8 bytes each)
CUDA_GENERATOR_STATE_BYTES = 16


def generator_from_state(device: torch.device, state: torch.Tensor) -> torch.Generator:
    """The agent's generator on ``device`` from a checkpoint's saved state. A state saved on the
    other kind of device (a GPU run loaded on the CPU, or the reverse) has the other generator's
    layout and cannot be set here: the generator is then seeded from that state's bytes, so
    loading stays deterministic, though its draws are not the ones the other device would have
    made. Any other state is set as it is (and refused by torch if it does not fit)."""
    generator = torch.Generator(device=device)
    other_size = CUDA_GENERATOR_STATE_BYTES if device.type == "cpu" else torch.Generator().get_state().numel()
    if state.numel() == other_size and state.numel() != generator.get_state().numel():
        digest = hashlib.sha256(state.numpy().tobytes()).digest()
        generator.manual_seed(int.from_bytes(digest[:8], "little") >> 1)
    else:
        generator.set_state(state)
    return generator


class ValueBasedAgent(Agent):
    """The shared learner; see the module docstring. Subclasses mix in a head (``Head``) and
    set :attr:`name`."""

    name: str = ""
    """The agent's name: log tags (``NAME/loss``), checkpoint files (``NAME.pt``), messages."""

    @property
    def checkpoint_file(self) -> str:
        return f"{self.name}.pt"

    @property
    def state_file(self) -> str:
        return f"{self.name}.json"

    def make_optimizer(self, parameters) -> torch.optim.Optimizer:
        """The agent's optimizer over the online network's parameters: Adam with the config's
        learning rate and epsilon (Rainbow's, IQN's, DER's); an agent whose paper names another
        optimizer overrides this."""
        return adam(parameters, self.config)

    def __init__(self, config: ValueBasedConfig, environment: AgentEnvironment):
        super().__init__(config, environment)
        self.obs_shape, self.obs_dtype = check_spaces(
            self.name, self.observation_space, self.action_space, config.frame_stack
        )
        self.num_actions = int(self.action_space.n)
        needed = PrioritizedReplay.estimate_bytes(
            config.replay_capacity, self.obs_shape, self.obs_dtype, config.frame_stack
        )
        check_replay_fits(needed, config.replay_capacity, f"observations of shape {self.obs_shape}")
        self.device = pick_device(config.device)
        if self.device.type == "cpu":
            # 0 = the runner's share (OMP_NUM_THREADS, --jobs), else all cores but the emulator's
            torch.set_num_threads(cpu_threads(config.torch_threads))
            torch.set_flush_denormal(config.flush_denormals)  # Adam's decayed moments (the config says why)
        else:
            # On a GPU the host's torch work is a few small copies and index ops: one thread, and no
            # idle pool spinning on the cores the emulator threads step on (docs/measurements/performance.md, "On a GPU").
            torch.set_num_threads(config.torch_threads or 1)
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
        self._graphed = None  # the CUDA-graph learner step, made at the first update on a GPU
        self._build(seed=0)

    def _build(self, seed: int) -> None:
        """Networks, optimizer and RNGs, all seeded from ``seed`` (the unit's seed on a fresh start)."""
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self.online = self.build_network(self.obs_shape, self.num_actions)
            initialize(self.online, self.config.network_style)
            self.online.to(self.device)
        self.target = copy.deepcopy(self.online).requires_grad_(False)
        self.target_is_online = False  # (a copy, but the one-pass path waits for the learner's first copy)
        self.optimizer = self.make_optimizer(self.online.parameters())
        self.generator = torch.Generator(device=self.device)
        self.generator.manual_seed(seed)
        self.np_rng = np.random.default_rng(seed)
        self.online.reset_noise(self.generator)
        self.target.reset_noise(self.generator)

    def copy_target(self) -> None:
        """The target network becomes a copy of the online one (DQN's periodic copy). Until the next
        update changes the online weights the two are equal, which lets a head take one pass for both
        (``target_is_online``: DrQ(epsilon), whose target is copied after every update)."""
        self.target.load_state_dict(self.online.state_dict())
        self.target_is_online = True

    # -- the learner update ------------------------------------------------------------------
    def update(self, beta: float) -> tuple[float, float]:
        """One gradient step on a prioritized batch; returns (mean loss, mean Q of taken actions)."""
        cfg = self.config
        batch = self.replay.sample(cfg.batch_size, beta, self.np_rng)
        batch = draw_augmentation(batch, cfg.augmentation, self.np_rng)  # DrQ: the shifts and scales
        graphed = self._graphed_step()
        stats = (graphed(batch) if graphed is not None else self.learner_step(batch)).cpu().numpy()
        self.target_is_online = False
        self.replay.update_priorities(batch["indices"], stats[:-1])  # priorities from the per-sample loss
        self.counters["updates"] += 1
        return float(stats[:-1].mean()), float(stats[-1])

    def learner_step(self, batch: dict) -> torch.Tensor:
        """The gradient step of :meth:`update` on ``batch`` (numpy arrays, or tensors already on
        the device): the importance-weighted loss, its backward pass, the optimizer step. Returns,
        on the device, the per-sample losses followed by the mean Q of the taken actions. Nothing
        in it waits for the device, so on a GPU it can be captured as a CUDA graph (``cuda_graph.py``)."""
        cfg = self.config
        batch = augment(batch, self._tensor)  # DrQ: shifted, scaled states and next states
        weights = self._tensor(batch["weights"])
        per_sample, q_taken = self.sample_losses(batch)
        loss = (weights * per_sample).mean()  # PER: importance weights correct the sampling bias

        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.reduce_gradients()
        if cfg.max_grad_norm > 0:
            torch.nn.utils.clip_grad_norm_(self.online.parameters(), cfg.max_grad_norm)
        self.optimizer.step()
        return torch.cat([per_sample.detach(), q_taken.detach().mean().view(1)])

    def _graphed_step(self):
        """The CUDA-graph learner step (``cuda_graphs``) where it applies: a CUDA device, a torch
        that can capture the agent's generator, and a learner whose gradients stay in this process
        (a data-parallel worker's all-reduce between backward and step is not captured); else None."""
        if self._graphed is None and self.config.cuda_graphs and self.device.type == "cuda":
            if graphs_supported() and type(self).reduce_gradients is ValueBasedAgent.reduce_gradients:
                self._graphed = GraphedLearnerStep(self)
        return self._graphed

    def reduce_gradients(self) -> None:
        """Between the backward pass and the norm clip and optimizer step: nothing in one process;
        a data-parallel worker averages the gradients over the workers here (Algorithm 2 of
        Nichol et al. 2018, ``G_agg <- AllReduce(G)``)."""

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
            actions = self.greedy_actions(batch)
        finally:
            self.online.set_noise(True)
        return actions[0] if single else actions

    # -- the interaction loop -----------------------------------------------------------------
    def explore_actions(self, obs: np.ndarray) -> np.ndarray:
        """Actions while learning, after the warm-up: greedy with the online net's current noise
        (NoisyNet exploration, no epsilon: Rainbow). DQN overrides it with epsilon-greedy."""
        return self.greedy_actions(obs)

    def seed_once(self, ctx: TrainingContext) -> None:
        """A fresh agent draws its networks and RNGs from the unit's seed (once; a resumed or
        fine-tuned agent keeps what it loaded)."""
        if not self.counters["seeded"]:
            self._build(ctx.seed)
            self.counters["seeded"] = True

    def learn(self, env: gym.vector.VectorEnv, ctx: TrainingContext) -> None:
        cfg, c = self.config, self.counters
        num_envs = self._check_env(env)
        self.seed_once(ctx)
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
                actions = self.explore_actions(obs)
            next_obs, rewards, terminated, truncated, infos = env.step(actions)
            if (terminated | truncated).any() and "final_obs" not in infos:
                raise UsageError(
                    f"{self.name} needs SAME_STEP autoreset with info['final_obs'] (the suite env contract)"
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
                    for _ in range(cfg.updates_per_period):  # SB3's gradient_steps per train_freq
                        loss, q = self.update(beta)
                        noise_stale = True
                        log["loss"] += loss
                        log["q"] += q
                        log["n"] += 1
                        if log["n"] == cfg.log_every_updates:
                            self.log_updates(ctx, log, beta)

            # Target network: a copy of the online net every target_update_steps agent steps.
            if c["agent_steps"] // cfg.target_update_steps > c["target_syncs"]:
                self.copy_target()
                c["target_syncs"] = c["agent_steps"] // cfg.target_update_steps
            ctx.maybe_checkpoint()
        self.insert_pending_priorities()

    def log_updates(self, ctx: TrainingContext, log: dict, beta: float) -> None:
        """Log the mean loss and Q of the updates summed in ``log`` (``loss``, ``q``, their count
        ``n`` and the time ``t`` the count began), beta and the memory's size; then zero ``log``.
        The single agent and the Ape-X learner log the same way."""
        now = time.perf_counter()
        ctx.log_scalar(f"{self.name}/loss", log["loss"] / log["n"])
        ctx.log_scalar(f"{self.name}/q_taken", log["q"] / log["n"])
        ctx.log_scalar(f"{self.name}/beta", beta)
        ctx.log_scalar(f"{self.name}/replay_transitions", self.replay.num_valid)
        ctx.log_scalar(f"{self.name}/updates_per_second", log["n"] / max(now - log["t"], 1e-9))
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
            raise UsageError(f"{self.name} needs a SAME_STEP autoreset vector env, got {mode}")
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
            directory / self.checkpoint_file,
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
        save_json(state, directory / self.state_file)
        if state["replay_saved"]:
            self.replay.save(directory / REPLAY_DIR)

    def load(self, directory: Path) -> None:
        """Restore what :meth:`save` wrote; training then continues exactly where it stopped.

        Tensors and JSON only (``checkpoint_io``): a file holding pickled objects, or one that does
        not fit this agent, is refused with one line and nothing of it is run.
        """
        directory = Path(directory)
        if not (directory / self.checkpoint_file).is_file():
            raise UsageError(f"{directory} holds no {self.name} checkpoint ({self.checkpoint_file} is missing)")
        ckpt = load_tensors(
            directory / self.checkpoint_file,
            f"{self.name} checkpoint",
            keys=("online", "target", "optimizer", "generator", "torch_global", "cuda_global"),
        )
        state = load_json(directory / self.state_file, f"{self.name} checkpoint state")
        with refusing_bad_state(
            f"{self.name} checkpoint",
            directory,
            f"start from a checkpoint written by {self.name} on the same observations and actions",
        ):
            self._restore(ckpt, state)
        # numpy arrays (allow_pickle=False) and JSON; a damaged memory stops the resume in one line
        with refusing_bad_state(
            f"{self.name} replay",
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
        """Networks, optimizer, counters and RNGs from a loaded checkpoint (raises on one that does
        not fit). Networks, optimizer and generator are loaded into new objects first and swapped
        in only when all of them fit, so a refused checkpoint leaves the agent as it was."""
        online, target = copy.deepcopy(self.online), copy.deepcopy(self.target)
        online.load_state_dict(ckpt["online"])
        target.load_state_dict(ckpt["target"])
        optimizer = self.make_optimizer(online.parameters())
        capturable = [group.get("capturable") for group in optimizer.param_groups]
        optimizer.load_state_dict(ckpt["optimizer"])
        for group, flag in zip(optimizer.param_groups, capturable, strict=True):
            if flag is not None:  # a GPU run's CUDA-graph setting (cuda_graph.py) is this device's to choose
                group["capturable"] = flag
        generator = generator_from_state(self.device, ckpt["generator"])
        self.online, self.target, self.optimizer, self.generator = online, target, optimizer, generator
        self.target_is_online = False  # new weights: equal again only after the next target copy
        torch.set_rng_state(ckpt["torch_global"])
        if ckpt["cuda_global"] and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(ckpt["cuda_global"])
        self.counters = dict(state["counters"])
        self.np_rng.bit_generator.state = state["numpy_rng"]
        kind, keys, *rest = state["numpy_global"]
        np.random.set_state((kind, np.asarray(keys, np.uint32), *rest))
        version, internal, gauss = state["python_random"]
        random.setstate((version, tuple(internal), gauss))
