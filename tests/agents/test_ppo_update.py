"""benchgen's one PPO update (``benchgen_agents.ppo.update``, through ``ChunkedPPO.train``) against
stable-baselines3's ``PPO.train``: the same rollout buffer, the same first weights and Adam state,
the same minibatch order, one update each. In one pass per minibatch the weights come out equal
bit for bit; in chunks equal up to the order of float sums. With SB3's value clipping and its
target_kl early stop too, and the statistics SB3 logs. And where the chunk size comes from."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.logger import Logger

from benchgen_agents.ppo.chunked import ChunkedPPO

N_ENVS, N_STEPS, BATCH = 4, 32, 64  # 2 minibatches an epoch
LOGGED = ("policy_gradient_loss", "value_loss", "entropy_loss", "approx_kl", "clip_fraction", "loss", "n_updates")


class _Frames(gym.Env):
    """36x36 grey frames, the smallest the Nature CNN takes."""

    observation_space = gym.spaces.Box(0, 255, (36, 36, 1), np.uint8)
    action_space = gym.spaces.Discrete(3)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return self.observation_space.sample(), {}

    def step(self, action):
        return self.observation_space.sample(), float(action == 1), False, False, {}


def _fill(model, seed: int) -> None:
    """A rollout in ``model``'s buffer through SB3's public buffer interface (GAE included): random
    observations and rewards, actions and values from the policy."""
    rng = np.random.default_rng(seed)
    buffer, space = model.rollout_buffer, model.observation_space
    buffer.reset()
    starts = np.ones(N_ENVS, dtype=np.float32)
    with torch.no_grad():
        for _ in range(N_STEPS):
            obs = rng.integers(0, 256, (N_ENVS, *space.shape)).astype(space.dtype)
            actions, values, log_probs = model.policy(torch.as_tensor(obs))
            buffer.add(obs, actions.numpy(), rng.normal(size=N_ENVS).astype(np.float32), starts, values, log_probs)
            starts = (rng.random(N_ENVS) < 0.1).astype(np.float32)
        buffer.compute_returns_and_advantage(values, starts)


def _models(policy: str, chunk: int, **settings):
    env = make_vec_env(_Frames if policy == "CnnPolicy" else "CartPole-v1", n_envs=N_ENVS, seed=0)
    kwargs = dict(
        n_steps=N_STEPS,
        batch_size=BATCH,
        n_epochs=3,
        learning_rate=3e-3,
        ent_coef=0.01,
        device="cpu",
        seed=0,
        **settings,
    )
    if policy == "CnnPolicy":
        kwargs["policy_kwargs"] = {"features_extractor_kwargs": {"features_dim": 32}}
    reference, ours = PPO(policy, env, **kwargs), ChunkedPPO(policy, env, update_chunk=chunk, **kwargs)
    ours.policy.load_state_dict(reference.policy.state_dict())
    ours.policy.optimizer.load_state_dict(reference.policy.optimizer.state_dict())
    _fill(reference, seed=1)
    ours.rollout_buffer = reference.rollout_buffer  # the very same rollout
    for model in (reference, ours):
        model.set_logger(Logger(folder=None, output_formats=[]))
    return reference, ours


def _train(model) -> dict:
    np.random.seed(5)  # SB3's buffer shuffles with numpy's global generator: the same minibatches
    model.train()
    return {key: model.logger.name_to_value[f"train/{key}"] for key in LOGGED}


@pytest.mark.parametrize("policy", ["MlpPolicy", "CnnPolicy"])
@pytest.mark.parametrize("settings", [{}, {"clip_range_vf": 0.1}, {"target_kl": 1e-5}])
@pytest.mark.parametrize("chunk", [0, BATCH, 16])
def test_one_update_matches_sb3s_train(policy, settings, chunk):
    torch.set_num_threads(1)
    reference, ours = _models(policy, chunk, **settings)
    before = {k: v.clone() for k, v in reference.policy.state_dict().items()}
    expected, got = _train(reference), _train(ours)
    after = (reference.policy.state_dict(), ours.policy.state_dict())
    assert any(not torch.equal(before[k], after[0][k]) for k in before)  # the update moved the weights
    moments = (reference.policy.optimizer.state_dict()["state"], ours.policy.optimizer.state_dict()["state"])
    assert moments[0].keys() == moments[1].keys()
    if chunk in (0, BATCH):  # one pass per minibatch: SB3's expressions, bit for bit
        for key in after[0]:
            assert torch.equal(after[0][key], after[1][key]), key
        for k in moments[0]:
            for name in ("exp_avg", "exp_avg_sq"):
                assert torch.equal(moments[0][k][name], moments[1][k][name]), (k, name)
    else:
        for key in after[0]:
            # Adam divides each gradient by its own running size, so a weight whose gradient is near
            # zero moves by an amount that the order of float sums can change by ~1e-6 (one element of
            # the CNN's first layer, on some CPUs); 1e-5 is still 1/300 of one step at this lr (3e-3)
            torch.testing.assert_close(after[1][key], after[0][key], rtol=1e-4, atol=1e-5, msg=key)
    assert got["n_updates"] == expected["n_updates"]
    if "target_kl" in settings:  # the early stop bound: fewer than the 3 epochs
        assert expected["n_updates"] < 3
    for key in LOGGED:
        assert got[key] == pytest.approx(float(expected[key]), rel=1e-4, abs=1e-6), key


def test_the_schedules_are_read_at_sb3s_progress():
    """Linear learning-rate and clip schedules, 60% of the budget played: the same update."""
    from stable_baselines3.common.utils import LinearSchedule

    torch.set_num_threads(1)
    reference, ours = _models("MlpPolicy", 0, clip_range=LinearSchedule(0.2, 0.0, 1.0))
    for model in (reference, ours):
        model.learning_rate = model.lr_schedule = LinearSchedule(3e-3, 0.0, 1.0)
    reference._current_progress_remaining = 0.4  # noqa: SLF001 - where SB3's learn loop would have it
    ours.num_timesteps, ours.budget_steps = 600, 1000
    expected, got = _train(reference), _train(ours)
    for key, value in reference.policy.state_dict().items():
        assert torch.equal(value, ours.policy.state_dict()[key]), key
    assert got["n_updates"] == expected["n_updates"]
    for model in (reference, ours):
        assert model.logger.name_to_value["train/learning_rate"] == pytest.approx(1.2e-3)
        assert model.logger.name_to_value["train/clip_range"] == pytest.approx(0.08)


def test_the_chunk_is_256_samples_on_the_cpu_unless_the_config_says_otherwise():
    from benchgen.agent import AgentEnvironment
    from benchgen_agents.ppo import PPOConfig, make_agent
    from benchgen_agents.ppo.update import update_chunk

    environment = AgentEnvironment(gym.spaces.Box(-1, 1, (4,), np.float32), gym.spaces.Discrete(2))
    assert make_agent(PPOConfig(device="cpu"), environment)._update_chunk() == 256
    assert make_agent(PPOConfig(device="cpu", update_chunk=0), environment)._update_chunk() == 0
    # the data-parallel and virtual workers' update takes the same rule, on their policy's device
    assert update_chunk(PPOConfig(), torch.device("cpu")) == 256
    assert update_chunk(PPOConfig(), torch.device("cuda")) == 0
    assert update_chunk(PPOConfig(update_chunk=512), torch.device("cuda")) == 512
    with pytest.raises(ValueError, match="update_chunk"):
        PPOConfig(update_chunk=-1)
