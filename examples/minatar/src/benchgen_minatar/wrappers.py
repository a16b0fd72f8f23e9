"""Agent-side wrappers: what the suite gives an agent for each need (``benchgen.agent.AgentNeeds``).

They sit above benchgen's episode recorder, so they change what an agent sees, never a recorded
score.

========================== ==================================================================
need                       answer
========================== ==================================================================
observations "frames"      the state as a flat ``float32`` vector of 0/1, ``(1000,)``
                           (:class:`FlatStates`)
observations "native"      the suite env's ``uint8`` ``(10, 10, 10)`` grid, unchanged
reward (either)            the game's reward unchanged
named actions              none: MinAtar has no jump (``Suite.action_semantics`` is None)
========================== ==================================================================

Why a flat vector for "frames": MinAtar's observations are not screens to warp into 84x84
frames; the paper fed its agents the binary grid itself (a 3x3 convolution with 16 filters,
then 128 units: Young and Tian 2019, ``examples/dqn.py`` of the MinAtar repository). The shared
agents' image torso is the Nature-DQN CNN, which needs images of at least 36x36 (``ppo``'s
``choose_policy``, ``rainbow_iqn``'s ``check_spaces``), and they take flat float vectors
through their MLP torsos; the grid flattened (channel, row, column) is that vector, with no
information lost. An agent with a torso for small grids declares ``observations="native"``.
The reward needs no shaping: the paper's agents learned from the game's reward.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from benchgen.agent import AgentNeeds


class FlatStates(gym.vector.VectorWrapper):
    """The ``uint8`` grid as a flat ``float32`` vector of 0.0/1.0 (``info["final_obs"]`` too)."""

    def __init__(self, env: gym.vector.VectorEnv):
        super().__init__(env)
        size = int(np.prod(env.single_observation_space.shape))
        self.single_observation_space = gym.spaces.Box(0.0, 1.0, (size,), np.float32)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, env.num_envs)

    def _flat(self, obs: np.ndarray) -> np.ndarray:
        return np.asarray(obs, dtype=np.float32).reshape(len(obs), -1)

    def reset(self, *, seed=None, options=None):
        obs, infos = self.env.reset(seed=seed, options=options)
        return self._flat(obs), infos

    def step(self, actions):
        obs, rewards, terminated, truncated, infos = self.env.step(actions)
        if "final_obs" in infos:
            infos = {**infos, "final_obs": self._flat(infos["final_obs"])}
        return self._flat(obs), rewards, terminated, truncated, infos


def agent_wrappers(env: gym.vector.VectorEnv, needs: AgentNeeds) -> gym.vector.VectorEnv:
    """The answer to ``needs`` (see the module docstring). The suite env already returns fresh
    observation arrays at every step, so "native" needs no copy."""
    return FlatStates(env) if needs.observations == "frames" else env
