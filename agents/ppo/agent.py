"""PPO (Schulman et al. 2017) as a benchgen agent: stable-baselines3's PPO, not a fork.

The agent owns one ``stable_baselines3.PPO`` model and drives it through benchgen's protocol:

* ``learn(env, ctx)`` wraps the unit's vector env in :class:`~benchgen_agents.ppo.vec_env.BenchgenVecEnv`
  and calls ``model.learn`` for the unit's remaining agent steps. A callback calls
  ``ctx.maybe_checkpoint()`` after every vector step and stops SB3 the moment ``ctx.finished``
  (SB3 would otherwise finish its rollout past the budget). SB3's step counter is set to the
  unit's, so the linear learning-rate and clip schedules run over the unit's budget and continue
  where they were after a resume.
* SB3's training statistics go to the unit's TensorBoard through ``ctx.log_scalar`` (x-axis:
  frames), by an SB3 logger output format.
* ``save``/``load``: SB3's own zip (weights, Adam state, step counter). A model loaded from a
  checkpoint is re-bound to the next unit's env with ``PPO.load(env=...)``, which also handles a
  different number of sub-environments (a joint policy fine-tuned on one test task). A resumed
  unit keeps its Adam state; a unit starting from another unit's checkpoint (fine-tuning from the
  joint policy, ``--from``) keeps the weights and starts a fresh Adam state.
"""

from __future__ import annotations

import io
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
from stable_baselines3.common.preprocessing import is_image_space
from stable_baselines3.common.utils import ConstantSchedule, LinearSchedule, set_random_seed

from benchgen.agent import Agent, TrainingContext
from benchgen.errors import UsageError
from benchgen_agents.ppo.config import PPOConfig
from benchgen_agents.ppo.vec_env import BenchgenVecEnv

MODEL_FILE = "ppo.zip"
STATE_FILE = "ppo_agent.json"
#: the Nature CNN's three convolutions need at least 36x36 pixels
MIN_CNN_SIZE = 36


def choose_policy(requested: str, observation_space: gym.Space) -> str:
    """Resolve ``policy='auto'`` and refuse a CNN on observations it cannot take."""
    image = is_image_space(observation_space, check_channels=False)
    big = image and min(sorted(observation_space.shape)[1:]) >= MIN_CNN_SIZE
    if requested == "auto":
        return "CnnPolicy" if big else "MlpPolicy"
    if requested == "CnnPolicy" and not big:
        raise UsageError(
            f"policy=CnnPolicy needs uint8 image observations of at least {MIN_CNN_SIZE}x{MIN_CNN_SIZE}, "
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


class PPOAgent(Agent):
    """stable-baselines3 PPO with a Nature-CNN (or MLP) actor-critic; see the module docstring."""

    def __init__(self, config: PPOConfig, observation_space: gym.Space, action_space: gym.Space):
        super().__init__(config, observation_space, action_space)
        if not isinstance(action_space, gym.spaces.Discrete):
            raise UsageError(f"the ppo agent needs a discrete action space, got {action_space}")
        self.policy = choose_policy(config.policy, observation_space)
        self.model: PPO | None = None
        #: a loaded SB3 zip not yet bound to an env (bound in ``learn``, or for prediction in ``act``)
        self._checkpoint: bytes | None = None
        #: the unit that wrote the loaded checkpoint ("unit" in its checkpoint.json)
        self._checkpoint_unit: str | None = None
        self._predict_only = False
        if config.torch_threads:
            torch.set_num_threads(config.torch_threads)

    # -- SB3 plumbing ----------------------------------------------------------------------
    def _hyperparameters(self) -> dict[str, Any]:
        c = self.config
        return dict(
            learning_rate=_schedule(c.learning_rate, c.lr_schedule),
            n_steps=c.n_steps,
            batch_size=c.batch_size,
            n_epochs=c.n_epochs,
            gamma=c.gamma,
            gae_lambda=c.gae_lambda,
            clip_range=_schedule(c.clip_range, c.clip_schedule),
            ent_coef=c.ent_coef,
            vf_coef=c.vf_coef,
            max_grad_norm=c.max_grad_norm,
            normalize_advantage=c.normalize_advantage,
            target_kl=c.target_kl,
        )

    def _policy_kwargs(self) -> dict[str, Any]:
        if self.policy == "CnnPolicy":
            # SB3's NatureCNN: conv 32x8x8/4, 64x4x4/2, 64x3x3/1, linear 512; frames / 255.
            return {"features_extractor_kwargs": {"features_dim": self.config.features_dim}}
        return {}

    def _bind(self, vec: BenchgenVecEnv, seed: int) -> PPO:
        """The model, attached to ``vec``: new, or the loaded/previous one re-bound."""
        if self.model is not None and not self._predict_only and self.model.n_envs == vec.num_envs:
            self.model.set_env(vec, force_reset=True)
            return self.model
        data = self._checkpoint if self._checkpoint is not None else (self._to_bytes() if self.model else None)
        if data is None:
            # Seed torch/numpy/random before the weights are drawn; the env keeps the runner's seed.
            set_random_seed(seed)
            self.model = PPO(self.policy, vec, policy_kwargs=self._policy_kwargs(), device=self.config.device,
                             seed=None, verbose=0, **self._hyperparameters())
        else:
            # PPO.load rebuilds the rollout buffer for vec's number of sub-environments; the
            # settings of *this* unit's config win over the saved ones (a fine-tuning config).
            self.model = PPO.load(io.BytesIO(data), env=vec, device=self.config.device, **self._hyperparameters())
        self._checkpoint, self._predict_only = None, False
        return self.model

    def _to_bytes(self) -> bytes:
        buffer = io.BytesIO()
        self.model.save(buffer)
        return buffer.getvalue()

    # -- the agent protocol ----------------------------------------------------------------
    def learn(self, env: gym.vector.VectorEnv, ctx: TrainingContext) -> None:
        if ctx.finished:
            return
        vec = BenchgenVecEnv(env, clip_reward=self.config.clip_reward)
        foreign = self._checkpoint is not None and self._checkpoint_unit not in (None, Path(ctx.unit_dir).name)
        model = self._bind(vec, ctx.seed)
        if foreign:
            # Fine-tuning (or --from): start from another unit's weights with a fresh Adam state;
            # the joint run's moment estimates belong to other tasks' data. A resume of the same
            # unit keeps its optimizer state.
            policy = model.policy
            policy.optimizer = policy.optimizer_class(policy.parameters(), lr=model.lr_schedule(1.0),
                                                      **policy.optimizer_kwargs)
        model.set_logger(Logger(folder=None, output_formats=[_ContextWriter(ctx)]))
        # The unit's step counter drives SB3's progress (schedules) and survives resumes.
        model.num_timesteps = ctx.steps_done
        model._last_obs = None  # noqa: SLF001 - force SB3 to reset the (fresh) env
        model.learn(
            total_timesteps=ctx.budget_steps - ctx.steps_done,
            callback=_BudgetCallback(ctx),
            log_interval=self.config.log_interval,
            reset_num_timesteps=False,
        )

    def act(self, observations: np.ndarray, greedy: bool = True) -> np.ndarray:
        if self.model is None:
            if self._checkpoint is None:
                raise RuntimeError("the ppo agent has no policy yet: learn or load a checkpoint first")
            self.model = PPO.load(io.BytesIO(self._checkpoint), env=None, device=self.config.device)
            self._predict_only = True
        # PPO's policy is stochastic: "greedy" is the argmax only if the config says so.
        actions, _state = self.model.predict(observations, deterministic=greedy and self.config.deterministic_eval)
        return np.asarray(actions)

    def save(self, directory: Path) -> None:
        directory = Path(directory)
        if self.model is not None and not self._predict_only:
            self.model.save(directory / MODEL_FILE)
            steps = int(self.model.num_timesteps)
        elif self._checkpoint is not None or self.model is not None:
            # Loaded and only evaluated (a zero-shot unit): the weights are the loaded ones.
            (directory / MODEL_FILE).write_bytes(self._checkpoint if self._checkpoint is not None else self._to_bytes())
            steps = None
        else:
            steps = None  # never trained (no env step taken): nothing but the state file
        state = {"policy": self.policy, "num_timesteps": steps, "stable_baselines3": stable_baselines3.__version__}
        (directory / STATE_FILE).write_text(json.dumps(state, indent=2))

    def load(self, directory: Path) -> None:
        directory = Path(directory)
        path = directory / MODEL_FILE
        if not path.is_file():
            if (directory / STATE_FILE).is_file():
                return  # saved before any step was taken: the fresh model is the same thing
            written_by = _checkpoint_info(directory).get("agent", "?")
            raise UsageError(f"checkpoint {directory} holds no PPO model ({MODEL_FILE}); it was written by "
                             f"agent '{written_by}': start from a checkpoint of a ppo agent")
        self._checkpoint = path.read_bytes()
        self._checkpoint_unit = _checkpoint_info(directory).get("unit")
        self.model, self._predict_only = None, False


def _checkpoint_info(directory: Path) -> dict[str, Any]:
    """The runner's ``checkpoint.json`` next to an agent's files ({} if absent)."""
    try:
        return json.loads((directory / "checkpoint.json").read_text())
    except (OSError, ValueError):
        return {}
