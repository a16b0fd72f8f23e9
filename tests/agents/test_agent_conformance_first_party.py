"""Every first-party agent passes the agent conformance kit (``benchgen.testing.AgentConformance``).

The settings shrink what would make a run of a few hundred agent steps slow or empty (replay
sizes, learning starts, network widths, rollout lengths), never what a check measures.
JERK needs named actions (right, left, jumps): it runs on ``kit_pixels``, which names them, and
must refuse ``kit_vector``, which does not.
"""

from __future__ import annotations

import benchgen_agents
from benchgen.testing import AgentConformance
from benchgen.testing.agent_suites import PIXELS

#: the value-based agents' settings: learning starts after 64 steps on kit_pixels (4 frames per
#: step) and 128 on kit_vector (2), then about 60 updates of small networks
VALUE_BASED = {
    "learning_starts_frames": 256,
    "replay_capacity": 2_000,
    "target_update_frames": 400,
    "hidden_size": 64,
    "mlp_hidden_size": 32,
    "batch_size": 16,
    "log_every_updates": 10,
    "torch_threads": 1,  # small networks: one thread is faster than two fighting other processes for cores
}
RAINBOW = {**VALUE_BASED, "num_atoms": 11}
RAINBOW_IQN = {
    **VALUE_BASED,
    "num_tau_samples": 8,
    "num_tau_prime_samples": 8,
    "num_quantile_samples": 8,
    "cosine_embedding_dim": 16,
}
#: PPO: a rollout of 32 steps per sub-environment, so a unit of 301 steps makes 4 updates
PPO = {"n_steps": 32, "batch_size": 32, "n_epochs": 1, "features_dim": 64, "torch_threads": 1}


class FirstParty(AgentConformance):
    plugin = benchgen_agents


class TestRandom(FirstParty):
    agent_name = "random"


class TestConst(FirstParty):
    agent_name = "const"
    stochastic = False  # one fixed action: no seed to vary
    settings = {"action": 2}


class TestPerturb(FirstParty):
    agent_name = "perturb"


class TestDQN(FirstParty):
    agent_name = "dqn"
    settings = {**VALUE_BASED, "epsilon_decay_frames": 800}


class TestRainbow(FirstParty):
    agent_name = "rainbow"
    settings = RAINBOW


class TestRainbowIQN(FirstParty):
    agent_name = "rainbow_iqn"
    settings = RAINBOW_IQN


class TestPPO(FirstParty):
    agent_name = "ppo"
    settings = PPO


class TestJerk(FirstParty):
    agent_name = "jerk"
    runs_on = (PIXELS,)  # kit_vector names no actions: JERK must refuse it
    settings = {"right_steps": 12, "left_steps": 6}


class TestPPOJoint(FirstParty):
    agent_name = "ppo_joint"
    settings = PPO


class TestRainbowJoint(FirstParty):
    agent_name = "rainbow_joint"
    settings = RAINBOW


class TestRainbowIQNJoint(FirstParty):
    agent_name = "rainbow_iqn_joint"
    settings = RAINBOW_IQN


class TestFrameRandom(FirstParty):
    agent_name = "frame_random"
    runs_on = (PIXELS,)  # per-frame actions: kit_vector offers no emulator capability


#: the planners on a budget of a few hundred simulated frames per action
PLANNER = {"max_frames_per_action": 96}


class TestUCT(FirstParty):
    agent_name = "uct"
    runs_on = (PIXELS,)  # it plans with clone_state: kit_vector must refuse it
    settings = {**PLANNER, "simulations_per_action": 8, "max_depth_frames": 32}


class TestBrFS(FirstParty):
    agent_name = "brfs"
    runs_on = (PIXELS,)
    settings = PLANNER


class TestBrute(FirstParty):
    agent_name = "brute"
    settings = {"epsilon": 0.05}  # explores within a few hundred steps


class TestSarsa(FirstParty):
    agent_name = "sarsa"
    runs_on = (PIXELS,)  # it reads the palette screen: kit_vector must refuse it
    num_envs = 1  # Sarsa(lambda) learns on one stream of experience
    settings = {"features": "basic", "background_samples": 16}  # the background first, then learning


def test_every_first_party_agent_has_a_kit_test():
    tested = {cls.agent_name for cls in FirstParty.__subclasses__() if cls.agent_name}
    assert tested == {spec.name for spec in benchgen_agents.benchgen_agents()}
