"""PPO (Schulman et al. 2017) as a benchgen agent: stable-baselines3's PPO, trained by benchgen's update.

The agent owns one ``stable_baselines3.PPO`` model (:class:`~benchgen_agents.ppo.chunked.ChunkedPPO`:
SB3's rollouts, GAE and callbacks, with ``train`` the one PPO update of
:mod:`benchgen_agents.ppo.update`, SB3's ``PPO.train`` bit for bit in one pass per minibatch,
which data-parallel and virtual-worker training take too) and drives it through benchgen's
protocol, through SB3's public interface only:

* ``learn(env, ctx)`` wraps the unit's vector env in :class:`~benchgen_agents.ppo.vec_env.BenchgenVecEnv`
  and calls ``model.learn`` for the unit's remaining agent steps. A callback calls
  ``ctx.maybe_checkpoint()`` after every vector step and stops SB3 the moment ``ctx.finished``
  (SB3 would otherwise finish its rollout past the budget). SB3's step counter is set to the
  unit's, so the linear learning-rate and clip schedules run over the unit's budget and continue
  where they were after a resume.
* SB3's training statistics go to the unit's TensorBoard through ``ctx.log_scalar`` (x-axis:
  frames), by an SB3 logger output format.
* ``save``/``load``: data only, never SB3's own zip. ``PPO.load`` unpickles (cloudpickle) the
  ``:serialized:`` entries of the zip, so a crafted checkpoint ran code when loaded; here a
  checkpoint is ``ppo.pt``, the policy's and its Adam optimizer's state dicts (tensors, numbers,
  lists: read with ``torch.load(weights_only=True)`` through
  :func:`~benchgen_agents.common.checkpoint_io.load_tensors`), and ``ppo_agent.json`` (policy kind,
  CNN width, observation and action spaces, SB3's update counter, the unit's step counter, the
  SB3 version). Anything else, an old ``ppo.zip`` included, is refused with one line. The
  architecture and spaces must be this agent's (a mismatch is refused with what to set); the
  training settings are always this unit's config (a fine-tuning config).
* ``load`` rebuilds the policy from the spaces and config and loads the state dicts into it,
  which checks every tensor's name and shape; ``act`` can then play without an env (a zero-shot
  unit). ``learn`` binds it to the unit's env by building a fresh ``PPO(...)`` for that env and
  copying the state dicts into ``model.policy`` and ``model.policy.optimizer``; a model is rebuilt
  the same way for an env with a different number of sub-environments (a joint policy fine-tuned
  on one test task), since SB3's rollout buffer is sized by it. A resumed unit keeps its Adam
  state; a unit starting from another unit's checkpoint (fine-tuning from the joint policy,
  ``--from``) keeps the weights and starts a fresh Adam state.
* ``normalize`` (the RL Zoo's ``normalize: true``): the unit's env is wrapped in SB3's
  ``VecNormalize`` while the agent learns; the running statistics are the agent's
  (:mod:`~benchgen_agents.ppo.normalization`), saved in ``ppo.pt`` and used, frozen, by ``act``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import stable_baselines3
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import KVWriter, Logger
from stable_baselines3.common.policies import ActorCriticPolicy
from stable_baselines3.common.preprocessing import is_image_space
from stable_baselines3.common.utils import ConstantSchedule, LinearSchedule, get_device, set_random_seed
from stable_baselines3.common.vec_env import VecEnv, VecTransposeImage

from benchgen.agent import Agent, AgentEnvironment, TrainingContext
from benchgen.errors import UsageError
from benchgen_agents.common.checkpoint_io import load_json, load_tensors, refusing_bad_state, save_json, save_tensors
from benchgen_agents.common.torch_device import cpu_threads
from benchgen_agents.ppo.chunked import ChunkedPPO
from benchgen_agents.ppo.config import PPOConfig
from benchgen_agents.ppo.impala_cnn import ImpalaCNN, ImpalaCnnActorCriticPolicy
from benchgen_agents.ppo.normalization import RunningStats
from benchgen_agents.ppo.update import update_chunk
from benchgen_agents.ppo.vec_env import BenchgenVecEnv, channels_last

MODEL_FILE = "ppo.pt"
STATE_FILE = "ppo_agent.json"
#: SB3's zip, what benchgen wrote before: it is refused, never opened (PPO.load unpickles it)
LEGACY_MODEL_FILE = "ppo.zip"
#: ``format`` in STATE_FILE: 2 is ``ppo.pt`` + JSON (1 was SB3's zip, whose JSON had no such key)
FORMAT = 2
#: the Nature CNN's three convolutions need at least 36x36 pixels
MIN_CNN_SIZE = 36
#: PPOConfig fields passed to SB3's PPO under the same name and unchanged
SB3_SETTINGS = (
    "n_steps",
    "batch_size",
    "n_epochs",
    "gamma",
    "gae_lambda",
    "ent_coef",
    "vf_coef",
    "max_grad_norm",
    "normalize_advantage",
    "target_kl",
)


def choose_policy(requested: str, observation_space: gym.Space) -> str:
    """Resolve ``policy='auto'`` and refuse a CNN on observations it cannot take."""
    image = is_image_space(observation_space, check_channels=False)
    big = image and min(sorted(observation_space.shape)[1:]) >= MIN_CNN_SIZE
    if requested == "auto":
        return "CnnPolicy" if big else "MlpPolicy"
    if requested in ("CnnPolicy", "ImpalaCnnPolicy") and not big:
        raise UsageError(
            f"policy={requested} needs uint8 image observations of at least {MIN_CNN_SIZE}x{MIN_CNN_SIZE}, "
            f"got {observation_space}; use policy=MlpPolicy or policy=auto"
        )
    return requested


def _schedule(value: float, kind: str):
    # RL Zoo's "lin_<v>": v * progress_remaining, i.e. from v at the start to 0 at the budget.
    return LinearSchedule(value, 0.0, 1.0) if kind == "linear" else ConstantSchedule(value)


class _BudgetCallback(BaseCallback):
    """Checkpoint when a boundary is crossed; stop SB3 exactly at the unit's budget."""

    def __init__(self, ctx: TrainingContext):
        super().__init__()
        self.ctx = ctx

    def _on_step(self) -> bool:
        self.ctx.maybe_checkpoint()
        return not self.ctx.finished


class _ContextWriter(KVWriter):
    """SB3 logger output: scalar statistics to benchgen's TensorBoard writer (x = frames)."""

    def __init__(self, ctx: TrainingContext):
        self.ctx = ctx

    def write(self, key_values: dict[str, Any], key_excluded: dict[str, tuple[str, ...]], step: int = 0) -> None:
        for key, value in key_values.items():
            if "tensorboard" in (key_excluded.get(key) or ()):
                continue
            if isinstance(value, (int, float, np.number)) and not isinstance(value, bool):
                self.ctx.log_scalar(key, float(value))

    def close(self) -> None:
        pass


def _space_info(space: gym.Space) -> dict[str, Any]:
    """What a checkpoint records of a space: enough to tell that a policy does not fit another task."""
    info: dict[str, Any] = {"type": type(space).__name__, "shape": list(space.shape or ()), "dtype": str(space.dtype)}
    if isinstance(space, gym.spaces.Discrete):
        info["n"] = int(space.n)
    return info


def _architecture(policy: Any, features_dim: Any) -> str:
    """The config settings that shape the network, as a user sets them ("policy=CnnPolicy and features_dim=512")."""
    return f"policy={policy}" + (f" and features_dim={features_dim}" if features_dim is not None else "")


def _sb3_observation_space(space: gym.Space) -> gym.Space:
    """The observation space SB3's policy sees: channel-last images transposed, as ``PPO`` wraps the env
    in ``VecTransposeImage``."""
    return VecTransposeImage.transpose_space(space) if channels_last(space) else space


class PPOAgent(Agent):
    """stable-baselines3 PPO with a Nature-CNN (or MLP) actor-critic; see the module docstring."""

    def __init__(self, config: PPOConfig, environment: AgentEnvironment):
        super().__init__(config, environment)
        if not isinstance(self.action_space, gym.spaces.Discrete):
            raise UsageError(f"the ppo agent needs a discrete action space, got {self.action_space}")
        self.policy = choose_policy(config.policy, self.observation_space)
        if config.normalize and self.policy != "MlpPolicy":
            raise UsageError(
                "normalize scales vector observations (the RL Zoo uses it with MlpPolicy), not the CNN's "
                "frames; set normalize=false, or policy=MlpPolicy"
            )
        #: running statistics of observations and returns (``config.normalize``), else None
        self.normalization = (
            RunningStats(self.observation_space) if config.normalize or config.normalize_reward else None
        )
        #: the model bound to an env (built by ``learn``)
        self.model: PPO | None = None
        #: a policy (with its optimizer) loaded from a checkpoint, not yet bound to an env: ``act`` uses it
        self._loaded: ActorCriticPolicy | None = None
        #: SB3's update counter of the loaded checkpoint (its ``train/n_updates`` continues from there)
        self._loaded_updates = 0
        #: the unit that wrote the loaded checkpoint ("unit" in its checkpoint.json)
        self._checkpoint_unit: str | None = None
        #: data-parallel training (``config.workers``): the workers' last synchronized state
        self.data_parallel_state: dict[str, Any] | None = None
        # torch's threads as the value-based agents take them (``cpu_threads``: one core left to
        # the environments that SB3 steps between updates). torch's default (every core) made
        # CartPole-size PPO 4.5x slower beside other work on the 2-core development machine
        # (264 against 1,196 steps/s with one thread), its OpenMP threads spinning on the core the
        # environment needs.
        torch.set_num_threads(cpu_threads(config.torch_threads))

    # -- SB3 plumbing ----------------------------------------------------------------------
    def _hyperparameters(self) -> dict[str, Any]:
        c = self.config
        return {
            "learning_rate": _schedule(c.learning_rate, c.lr_schedule),
            "clip_range": _schedule(c.clip_range, c.clip_schedule),
            "clip_range_vf": c.clip_range_vf,
            **{name: getattr(c, name) for name in SB3_SETTINGS},
        }

    def _update_chunk(self) -> int:
        """Samples per forward/backward pass of a minibatch (``PPOConfig.update_chunk``; 0: all of it)."""
        return update_chunk(self.config, get_device(self.config.device))

    def _features_dim(self) -> int | None:
        return self.config.features_dim if self.policy != "MlpPolicy" else None

    @property
    def _sb3_policy(self) -> type[ActorCriticPolicy]:
        """SB3's policy class: the IMPALA CNN is SB3's CNN policy with another extractor (and its
        own choice of the extractor's initialization)."""
        if self.policy == "ImpalaCnnPolicy":
            return ImpalaCnnActorCriticPolicy
        return PPO.policy_aliases[self.policy]

    def _policy_kwargs(self) -> dict[str, Any]:
        if self.policy == "CnnPolicy":
            # SB3's NatureCNN: conv 32x8x8/4, 64x4x4/2, 64x3x3/1, linear 512; frames / 255.
            return {"features_extractor_kwargs": {"features_dim": self.config.features_dim}}
        if self.policy == "ImpalaCnnPolicy":
            # no hidden layers between the extractor's 256 units and the heads, as baselines' PPO2 on it
            return {
                "features_extractor_class": ImpalaCNN,
                "features_extractor_kwargs": {
                    "features_dim": self.config.features_dim,
                    "precision": self.config.precision,
                },
                "net_arch": [],
                "extractor_init": self.config.extractor_init,
            }
        return {}

    def _new_policy(self) -> ActorCriticPolicy:
        """The policy ``PPO(...)`` would build for this agent, without an env (to load and act)."""
        # The schedule only sets the optimizer's initial lr; a bound model's SB3 updates it every rollout.
        policy = self._sb3_policy(
            _sb3_observation_space(self.observation_space),
            self.action_space,
            ConstantSchedule(self.config.learning_rate),
            **self._policy_kwargs(),
        )
        return policy.to(get_device(self.config.device))

    def _bind(self, vec: VecEnv, seed: int) -> PPO:
        """The model, attached to ``vec``: new, or built from the loaded/previous policy."""
        if self.model is not None and self.model.n_envs == vec.num_envs:
            self.model.set_env(vec, force_reset=True)
            return self.model
        if self._loaded is not None:
            source, updates = self._loaded, self._loaded_updates
        elif self.model is not None:  # bound before, to another number of sub-environments
            source, updates = self.model.policy, self.model.n_updates
        else:
            source, updates = None, 0
        if source is None:
            # Seed torch/numpy/random before the weights are drawn; the env keeps the runner's seed.
            set_random_seed(seed)
        else:
            # SB3 samples actions from torch's global generator, which a checkpoint does not hold:
            # seed it from the unit's seed and the checkpoint's update count, so that two resumes
            # of one checkpoint (in fresh processes) play the same actions
            set_random_seed(seed * 1_000_003 + updates)
        # A new model for vec: SB3 sizes the rollout buffer by vec's number of sub-environments.
        # Its settings are *this* unit's config (a fine-tuning config); the weights and Adam
        # state come from the loaded (or previous) policy.
        model = ChunkedPPO(
            self._sb3_policy,
            vec,
            policy_kwargs=self._policy_kwargs(),
            device=self.config.device,
            seed=None,
            verbose=0,
            update_chunk=self._update_chunk(),
            value_loss=self.config.value_loss,
            **self._hyperparameters(),
        )
        if source is not None:
            model.policy.load_state_dict(source.state_dict())
            model.policy.optimizer.load_state_dict(source.optimizer.state_dict())
            model.n_updates = updates
        self.model, self._loaded = model, None
        return model

    # -- the agent protocol ----------------------------------------------------------------
    def learn(self, env: gym.vector.VectorEnv, ctx: TrainingContext) -> None:
        if ctx.finished:
            return
        if (self.config.workers or self.config.virtual_workers) and not ctx.fine_tuning:
            self._learn_data_parallel(ctx)
            return
        vec: VecEnv = BenchgenVecEnv(env, clip_reward=self.config.clip_reward, reward_scale=self.config.reward_scale)
        if self.normalization is not None:
            vec = self.normalization.wrap(
                vec, self.config.normalize_gamma or self.config.gamma, observations=self.config.normalize
            )
        foreign = self._loaded is not None and self._checkpoint_unit not in (None, Path(ctx.unit_dir).name)
        model = self._bind(vec, ctx.seed)
        if foreign:
            # Fine-tuning (or --from): start from another unit's weights with a fresh Adam state;
            # the joint run's moment estimates belong to other tasks' data. A resume of the same
            # unit keeps its optimizer state.
            policy = model.policy
            policy.optimizer = policy.optimizer_class(
                policy.parameters(), lr=model.lr_schedule(1.0), **policy.optimizer_kwargs
            )
        model.set_logger(Logger(folder=None, output_formats=[_ContextWriter(ctx)]))
        # The unit's step counter drives SB3's progress (schedules) and survives resumes.
        # (_bind gave a new model or set_env(force_reset=True): SB3 resets the env when it starts.)
        model.num_timesteps = ctx.steps_done
        model.learn(
            total_timesteps=ctx.budget_steps - ctx.steps_done,
            callback=_BudgetCallback(ctx),
            log_interval=self.config.log_interval,
            reset_num_timesteps=False,
        )

    def _learn_data_parallel(self, ctx: TrainingContext) -> None:
        """Data-parallel virtual workers (:mod:`benchgen_agents.ppo.data_parallel`),
        started from the loaded or previous policy, else a fresh one drawn from the unit's seed;
        the env ``learn`` was given is not stepped (each worker builds its own)."""
        from benchgen_agents.ppo.data_parallel import cpu_copy, learn_data_parallel

        foreign = self._loaded is not None and self._checkpoint_unit not in (None, Path(ctx.unit_dir).name)
        if self._loaded is not None:
            source, updates = self._loaded, self._loaded_updates
        elif self.model is not None:
            source, updates = self.model.policy, self.model.n_updates
        else:
            set_random_seed(ctx.seed)  # the same first weights as a single-process unit of this seed
            source, updates = self._new_policy(), 0
        if foreign:  # another unit's weights with a fresh Adam state, as in learn()
            source.optimizer = source.optimizer_class(
                source.parameters(), lr=self.config.learning_rate, **source.optimizer_kwargs
            )
        state = {
            "policy": cpu_copy(source.state_dict()),
            "optimizer": cpu_copy(source.optimizer.state_dict()),
            "n_updates": int(updates),
        }
        self._adopt(learn_data_parallel(self, ctx, state))

    def _adopt(self, state: dict[str, Any]) -> None:
        """Make a data-parallel state this agent's policy (to act and to save)."""
        policy = self._new_policy()
        policy.load_state_dict(state["policy"])
        policy.optimizer.load_state_dict(state["optimizer"])
        self._loaded, self._loaded_updates, self.model = policy, int(state["n_updates"]), None
        self.data_parallel_state = None

    def act(self, observations: np.ndarray, greedy: bool = True) -> np.ndarray:
        policy = self.model.policy if self.model is not None else self._loaded
        if policy is None:
            raise RuntimeError("the ppo agent has no policy yet: learn or load a checkpoint first")
        # PPO's policy is stochastic: "greedy" is the argmax only if the config says so.
        # (PPO.predict is this call: SB3's policy does the observation preprocessing.)
        if self.config.normalize:
            observations = self.normalization.observations(observations)
        actions, _state = policy.predict(observations, deterministic=greedy and self.config.deterministic_eval)
        return np.asarray(actions)

    def save(self, directory: Path) -> None:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)  # as SB3's model.save did
        if self.data_parallel_state is not None:  # mid data-parallel training: the workers' state
            self._adopt(self.data_parallel_state)
        if self.model is not None:
            policy, steps = self.model.policy, int(self.model.num_timesteps)
            updates = int(self.model.n_updates)
        else:
            # Loaded and only evaluated (a zero-shot unit): the weights are the loaded ones.
            policy, steps, updates = self._loaded, None, self._loaded_updates
        if policy is not None:
            tensors = {"policy": policy.state_dict(), "optimizer": policy.optimizer.state_dict()}
            if self.normalization is not None:
                tensors["normalize"] = self.normalization.state()
            save_tensors(tensors, directory / MODEL_FILE)
        # else: never trained (no env step taken): nothing but the state file
        state = {
            "format": FORMAT,
            "policy": self.policy,
            "features_dim": self._features_dim(),
            "normalize": self.config.normalize,
            "normalize_reward": self.config.normalize_reward,
            "observation_space": _space_info(self.observation_space),
            "action_space": _space_info(self.action_space),
            "weights": policy is not None,
            "num_timesteps": steps,
            "n_updates": updates if policy is not None else 0,
            "stable_baselines3": stable_baselines3.__version__,
        }
        save_json(state, directory / STATE_FILE, indent=2)

    def load(self, directory: Path) -> None:
        directory = Path(directory)
        if not (directory / MODEL_FILE).is_file():
            if (directory / LEGACY_MODEL_FILE).exists():
                raise UsageError(
                    f"checkpoint {directory} holds a PPO model in a format benchgen no longer loads "
                    f"({LEGACY_MODEL_FILE}: stable-baselines3's zip, which unpickles code); retrain it "
                    f"with this version of benchgen, which writes {MODEL_FILE} (tensors only)"
                )
            if (directory / STATE_FILE).is_file():
                if self._check_state(directory)["weights"]:
                    raise UsageError(
                        f"checkpoint {directory} lost its PPO model ({MODEL_FILE} is missing); restore "
                        f"it, or start from another checkpoint"
                    )
                return  # saved before any step was taken: the fresh model is the same thing
            written_by = _checkpoint_info(directory).get("agent", "?")
            raise UsageError(
                f"checkpoint {directory} holds no PPO model ({MODEL_FILE}); it was written by "
                f"agent '{written_by}': start from a checkpoint of a ppo agent"
            )
        state = self._check_state(directory)
        keys = ("policy", "optimizer", "normalize") if self.normalization is not None else ("policy", "optimizer")
        tensors = load_tensors(directory / MODEL_FILE, "PPO checkpoint", keys=keys)
        policy = self._new_policy()
        with refusing_bad_state(
            "PPO checkpoint",
            directory / MODEL_FILE,
            "start from a checkpoint written by a ppo agent on the same observations and actions",
        ):
            policy.load_state_dict(tensors["policy"])
            policy.optimizer.load_state_dict(tensors["optimizer"])
            if self.normalization is not None:
                self.normalization.load_state(tensors["normalize"])
        self._loaded, self._loaded_updates = policy, state["n_updates"]
        self._checkpoint_unit = _checkpoint_info(directory).get("unit")
        self.model = None

    def _check_state(self, directory: Path) -> dict[str, Any]:
        """``STATE_FILE`` read and checked against this agent: format, architecture and spaces."""
        path = directory / STATE_FILE
        state = load_json(path, "PPO checkpoint state")
        if state.get("format") != FORMAT:
            raise UsageError(
                f"PPO checkpoint state {path} is not in benchgen's format {FORMAT} (format "
                f"{state.get('format')!r}); retrain with this version of benchgen"
            )
        saved, mine = (state.get("policy"), state.get("features_dim")), (self.policy, self._features_dim())
        if saved != mine:
            raise UsageError(
                f"checkpoint {directory} holds a policy with {_architecture(*saved)}, this unit's config "
                f"builds one with {_architecture(*mine)}: set {_architecture(*saved)} to start from it"
            )
        for option in ("normalize", "normalize_reward"):
            normalized = state.get(option, False)  # checkpoints from before the option: never
            if normalized is not getattr(self.config, option):
                raise UsageError(
                    f"checkpoint {directory} holds a policy trained with {option}={str(normalized).lower()}, "
                    f"this unit's config has {option}={str(getattr(self.config, option)).lower()}: set "
                    f"{option}={str(normalized).lower()} to start from it"
                )
        spaces = (_space_info(self.observation_space), _space_info(self.action_space))
        if (state.get("observation_space"), state.get("action_space")) != spaces:
            raise UsageError(
                f"checkpoint {directory} was written for observations {state.get('observation_space')} "
                f"and actions {state.get('action_space')}, this task has {spaces[0]} and {spaces[1]}: "
                f"start from a checkpoint of tasks with the same observations and actions"
            )
        updates = state.get("n_updates")
        if not isinstance(updates, int) or isinstance(updates, bool) or not isinstance(state.get("weights"), bool):
            raise UsageError(
                f"PPO checkpoint state {path} is damaged (no integer n_updates or boolean weights); "
                f"start from another checkpoint, or retrain"
            )
        return state


def _checkpoint_info(directory: Path) -> dict[str, Any]:
    """The runner's ``checkpoint.json`` next to an agent's files ({} if absent or not a JSON object)."""
    try:
        info = json.loads((directory / "checkpoint.json").read_text())
    except (OSError, ValueError):
        return {}
    return info if isinstance(info, dict) else {}
