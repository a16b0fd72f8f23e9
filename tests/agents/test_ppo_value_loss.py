"""The value term's two forms (``PPOConfig.value_loss``): stable-baselines3's mean squared error of the
clipped prediction, and openai baselines' PPO2 form (half the mean of the larger of the clipped and
unclipped squared errors), which keeps pulling back a prediction that moved past the clip range away
from its return. And that the setting reaches the update the agent runs."""

from __future__ import annotations

from types import SimpleNamespace

import gymnasium as gym
import numpy as np
import pytest
import torch

from benchgen_agents.ppo.update import Minibatch, backward_in_chunks

OLD, RETURN = 0.0, 1.0
#: predictions after some steps: moved past the clip toward the return, past it away, within it
MOVED = [0.5, -0.5, 0.1]


class _ValuesOnly(torch.nn.Module):
    """A policy whose value for sample i is the parameter ``v[i]`` (observation i), whose log-probs
    never move (ratio 1) and whose entropy is constant: only the value term has a gradient."""

    def __init__(self):
        super().__init__()
        self.v = torch.nn.Parameter(torch.tensor(MOVED))

    def evaluate_actions(self, observations, actions):
        index = observations.long().flatten()
        zeros = torch.zeros(len(index))
        return self.v[index].unsqueeze(1), zeros, zeros


def _loss_and_gradient(form: str, chunk: int) -> tuple[float, list[float]]:
    policy = _ValuesOnly()
    n = len(MOVED)
    tensors = {
        "observations": torch.arange(n, dtype=torch.float32).unsqueeze(1),
        "actions": torch.zeros(n, dtype=torch.long),
        "old_values": torch.full((n,), OLD),
        "old_log_probs": torch.zeros(n),
        "advantages": torch.zeros(n),
        "returns": torch.full((n,), RETURN),
    }
    batch = Minibatch(n, lambda part: {k: v[part] for k, v in tensors.items()}, tensors["advantages"])
    settings = SimpleNamespace(ent_coef=0.0, vf_coef=1.0, normalize_advantage=False, value_loss=form)
    stats = backward_in_chunks(policy, batch, chunk, settings, clip_range=0.2, clip_range_vf=0.2)
    return stats["value_loss"], policy.v.grad.tolist()


@pytest.mark.parametrize("chunk", [0, 1, 2])
def test_sb3s_form_drops_every_prediction_past_the_clip(chunk):
    loss, gradient = _loss_and_gradient("sb3", chunk)
    clipped = [0.2, -0.2, 0.1]
    assert loss == pytest.approx(np.mean([(RETURN - c) ** 2 for c in clipped]))
    assert gradient == pytest.approx([0.0, 0.0, 2 * (0.1 - RETURN) / 3])


@pytest.mark.parametrize("chunk", [0, 1, 2])
def test_ppo2s_form_pulls_back_a_prediction_that_moved_away(chunk):
    loss, gradient = _loss_and_gradient("ppo2", chunk)
    # the larger errors: the clipped one where the prediction overshot toward the return (0.8^2),
    # the unclipped one where it moved away (1.5^2), the same one within the clip (0.9^2)
    assert loss == pytest.approx(0.5 * np.mean([0.8**2, 1.5**2, 0.9**2]))
    assert gradient == pytest.approx([0.0, 0.5 * 2 * (-0.5 - RETURN) / 3, 0.5 * 2 * (0.1 - RETURN) / 3])


def test_ppo2s_form_without_clipping_is_half_the_squared_error():
    policy = _ValuesOnly()
    n = len(MOVED)
    tensors = {
        "observations": torch.arange(n, dtype=torch.float32).unsqueeze(1),
        "actions": torch.zeros(n, dtype=torch.long),
        "old_values": torch.zeros(n),
        "old_log_probs": torch.zeros(n),
        "advantages": torch.zeros(n),
        "returns": torch.ones(n),
    }
    batch = Minibatch(n, lambda part: {k: v[part] for k, v in tensors.items()}, tensors["advantages"])
    settings = SimpleNamespace(ent_coef=0.0, vf_coef=1.0, normalize_advantage=False, value_loss="ppo2")
    stats = backward_in_chunks(policy, batch, 0, settings, clip_range=0.2, clip_range_vf=None)
    assert stats["value_loss"] == pytest.approx(0.5 * np.mean([(v - 1) ** 2 for v in MOVED]))


def test_the_agent_trains_with_the_configured_form():
    from benchgen.agent import AgentEnvironment
    from benchgen_agents.ppo import PPOConfig, make_agent
    from benchgen_agents.ppo.vec_env import BenchgenVecEnv

    environment = AgentEnvironment(gym.spaces.Box(-1, 1, (4,), np.float32), gym.spaces.Discrete(2))
    for form in ("sb3", "ppo2"):
        agent = make_agent(PPOConfig(device="cpu", n_steps=8, batch_size=8, value_loss=form), environment)
        env = gym.vector.SyncVectorEnv(
            [lambda: gym.make("CartPole-v1")], autoreset_mode=gym.vector.AutoresetMode.SAME_STEP
        )
        model = agent._bind(BenchgenVecEnv(env), seed=0)  # noqa: SLF001 - the model learn would train
        assert model.value_loss == form
        env.close()
    with pytest.raises(ValueError, match="value_loss"):
        PPOConfig(value_loss="max")
