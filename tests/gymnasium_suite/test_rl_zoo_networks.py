"""The network ``benchgen run gymnasium dqn`` builds from the suite's RL Zoo settings is the RL
Zoo's: stable-baselines3's QNetwork with ``net_arch=[256, 256]`` (two hidden ReLU layers of 256,
then a linear layer to one Q value per action), compared layer by layer with the one SB3 builds.
No learning here: ``test_rl_zoo_scores.py`` is the slow check that these settings learn."""

from __future__ import annotations

import gymnasium as gym
import pytest
from torch import nn

from benchgen.config import RunConfig
from benchgen.registry import get_registry
from benchgen.run.planning.plan import resolve
from benchgen_agents.dqn.network import QNetwork


def layer_shapes(network: nn.Module) -> list[tuple]:
    """The network's linear layers and activations in the order they are built: (in, out) for a
    Linear, the class name otherwise (containers skipped)."""
    return [
        (m.in_features, m.out_features) if isinstance(m, nn.Linear) else type(m).__name__
        for m in network.modules()
        if isinstance(m, (nn.Linear, nn.ReLU))
    ]


@pytest.mark.parametrize("task", ["CartPole-v1", "Acrobot-v1", "MountainCar-v0"])
def test_tuned_dqn_network_is_the_rl_zoo_net_arch(task):
    from stable_baselines3 import DQN

    config = resolve(get_registry(), RunConfig(suite="gymnasium", agent="dqn", tasks=[task]), {}).agent_config
    env = gym.make(task)
    obs_size, actions = env.observation_space.shape[0], int(env.action_space.n)
    ours = QNetwork((obs_size,), actions, config)
    # ours applies its head's ReLU functionally (ActionValueStreams.forward): the Linear layers
    # are compared, and the torso's ReLUs show how many layers it has
    zoo = DQN("MlpPolicy", env, policy_kwargs={"net_arch": [256, 256]}, device="cpu").q_net
    zoo_linear = [s for s in layer_shapes(zoo) if isinstance(s, tuple)]
    assert zoo_linear == [(obs_size, 256), (256, 256), (256, actions)]
    assert [s for s in layer_shapes(ours) if isinstance(s, tuple)] == zoo_linear
    assert layer_shapes(ours.torso) == [(obs_size, 256), "ReLU"]  # one torso layer, then the head's
    assert sum(p.numel() for p in ours.parameters()) == sum(p.numel() for p in zoo.parameters())
