"""Agent-side wrappers: what the suite gives an agent for each need (``benchgen.agent.AgentNeeds``).

They sit above benchgen's episode recorder, so they change what an agent sees, never a recorded
score.

====================== ======================================================================
need                   answer
====================== ======================================================================
observations (either)  the environment's own observations, decoded from the suite env's
                       ``uint8`` form (:class:`DecodedObservations`): classic control's float
                       vector as it is, toy text's states one-hot, images unchanged. "frames"
                       and "native" get the same: these are not screens to warp and stack,
                       and the observation the environment defines is what Gymnasium's
                       agents learn from
reward (either)        the environment's reward unchanged (no shaping to switch off)
named actions          none: Gymnasium's environments share no right/left/jump
                       (``Suite.action_semantics`` is None)
====================== ======================================================================
"""

from __future__ import annotations

import gymnasium as gym

from benchgen.agent import AgentNeeds

from .observations import UINT8, ObservationCodec


class DecodedObservations(gym.vector.VectorWrapper):
    """The suite env's ``uint8`` observations (and ``info["final_obs"]``) decoded by ``codec``."""

    def __init__(self, env: gym.vector.VectorEnv, codec: ObservationCodec):
        super().__init__(env)
        self.codec = codec
        self.single_observation_space = codec.agent_space
        self.observation_space = gym.vector.utils.batch_space(codec.agent_space, env.num_envs)

    def reset(self, *, seed=None, options=None):
        obs, infos = self.env.reset(seed=seed, options=options)
        return self.codec.decode(obs), infos

    def step(self, actions):
        obs, rewards, terminated, truncated, infos = self.env.step(actions)
        if "final_obs" in infos:
            infos = {**infos, "final_obs": self.codec.decode(infos["final_obs"])}
        return self.codec.decode(obs), rewards, terminated, truncated, infos


def agent_wrappers(env: gym.vector.VectorEnv, needs: AgentNeeds) -> gym.vector.VectorEnv:
    """The answer to ``needs`` (see the module docstring): the same for every need. ``env`` is
    the suite env, possibly under benchgen's recorder; the codec is the suite env's. The suite
    env returns fresh arrays at every step, so ``uint8`` images need no copy."""
    codec: ObservationCodec = env.unwrapped.codec
    return env if codec.kind == UINT8 else DecodedObservations(env, codec)
