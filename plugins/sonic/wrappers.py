"""Agent-side wrappers of the Sonic suite (the preprocessing of Nichol et al. 2018's agents).

They sit above benchgen's episode recorder, so they change what an agent sees and learns from,
never a recorded score. All work on the whole batch of sub-environments (SAME_STEP autoreset:
an ended sub-environment already returns its next episode's first observation, and
``info["final_obs"]`` holds the last one, which the wrappers transform too).

* :class:`ButtonCombos`: a small ``Discrete`` action space of button combinations instead of the
  suite's 4096 button masks. The paper's seven for Rainbow and PPO: {LEFT}, {RIGHT},
  {LEFT, DOWN}, {RIGHT, DOWN}, {DOWN}, {DOWN, B}, {B}.
* :class:`AllowBacktracking`: reward only increases of the episode's best cumulative reward
  (the maximum x progress), so going back to find another way is not punished (paper, 4.1).
* :class:`WarpFrameStack`: 84x84 grayscale frames, the last 4 stacked (``(4, 84, 84)`` uint8,
  channels first like gymnasium's Atari preprocessing).
* :class:`OwnObservations`: the screens as they are, copied out of the env's shared buffers.

:func:`agent_wrappers` picks them from what an agent declares it needs
(:class:`benchgen.agent.AgentNeeds`). Per-agent hyperparameters such as PPO's reward scale are
the agent's own settings, not wrappers.
"""

from __future__ import annotations

import cv2
import gymnasium as gym
import numpy as np

from benchgen.agent import AgentNeeds
from benchgen.capabilities import emulators_of
from benchgen_sonic.env import button_mask

#: the action set the paper gave Rainbow and PPO (its agent settings), and any agent that does not
#: need named actions
PAPER_COMBOS: tuple[tuple[str, ...], ...] = (
    ("LEFT",),
    ("RIGHT",),
    ("LEFT", "DOWN"),
    ("RIGHT", "DOWN"),
    ("DOWN",),
    ("DOWN", "B"),
    ("B",),
)

#: JERK's set, given to agents that need named actions: the paper's seven, then the combinations
#: JERK presses (run while jumping, and the no-op it pads replays with); indices 0-6 mean the same
#: in both sets
JERK_COMBOS: tuple[tuple[str, ...], ...] = PAPER_COMBOS + (("RIGHT", "B"), ("LEFT", "B"), ())

#: what ``Suite.action_semantics`` reports: indices into JERK_COMBOS (and, for the first three,
#: into PAPER_COMBOS)
ACTION_SEMANTICS: dict[str, int] = {
    "left": 0,
    "right": 1,
    "jump": 6,
    "right_jump": 7,
    "left_jump": 8,
    "noop": 9,
}


def combo_masks(combos: tuple[tuple[str, ...], ...]) -> np.ndarray:
    """The suite-level action (button mask) of every combination."""
    return np.array([button_mask(*combo) for combo in combos], dtype=np.int64)


class ButtonCombos(gym.vector.VectorActionWrapper):
    """Combination indices -> the suite's button masks, one table lookup for the whole batch."""

    def __init__(self, env: gym.vector.VectorEnv, combos: tuple[tuple[str, ...], ...] = PAPER_COMBOS):
        super().__init__(env)
        self.combos = combos
        self._masks = combo_masks(combos)
        self.single_action_space = gym.spaces.Discrete(len(combos))
        self.action_space = gym.spaces.MultiDiscrete([len(combos)] * env.num_envs)

    def actions(self, actions):
        return self._masks[np.asarray(actions, dtype=np.int64)]

    def emulators(self):
        """The emulators below (``benchgen_sonic.emulators``), simulating this wrapper's actions:
        an agent plans with the combination indices it acts with."""
        if getattr(self, "_emulators", None) is None:
            inner = emulators_of(self.env)
            self._emulators = None if inner is None else inner.for_actions(self._masks)
        return self._emulators


class AllowBacktracking(gym.vector.VectorWrapper):
    """Reward = increase of the episode's best cumulative reward, never negative.

    The paper's implementation (retro-baselines ``AllowBacktracking``) tracks the cumulative
    benchmark reward, i.e. 9000 x progress (plus the completion bonus at the end), so "best
    cumulative reward" is "maximum x progress" without reading RAM.
    """

    def __init__(self, env: gym.vector.VectorEnv):
        super().__init__(env)
        self._total = np.zeros(env.num_envs)
        self._best = np.zeros(env.num_envs)

    def reset(self, *, seed=None, options=None):
        self._total[:] = 0.0
        self._best[:] = 0.0
        return self.env.reset(seed=seed, options=options)

    def step(self, actions):
        obs, rewards, terminated, truncated, infos = self.env.step(actions)
        self._total += rewards
        shaped = np.maximum(0.0, self._total - self._best)
        self._best = np.maximum(self._best, self._total)
        ended = np.logical_or(terminated, truncated)
        self._total[ended] = 0.0  # SAME_STEP: the next step belongs to a new episode
        self._best[ended] = 0.0
        return obs, shaped, terminated, truncated, infos


class WarpFrameStack(gym.vector.VectorWrapper):
    """224x320 RGB -> 84x84 grayscale (area interpolation), last ``stack`` frames stacked."""

    def __init__(self, env: gym.vector.VectorEnv, size: int = 84, stack: int = 4):
        super().__init__(env)
        self.size, self.stack = size, stack
        self.single_observation_space = gym.spaces.Box(0, 255, (stack, size, size), np.uint8)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, env.num_envs)
        self._frames = np.zeros((env.num_envs, stack, size, size), dtype=np.uint8)

    def _warp(self, frame: np.ndarray) -> np.ndarray:
        gray = cv2.cvtColor(np.ascontiguousarray(frame), cv2.COLOR_RGB2GRAY)
        return cv2.resize(gray, (self.size, self.size), interpolation=cv2.INTER_AREA)

    def reset(self, *, seed=None, options=None):
        obs, infos = self.env.reset(seed=seed, options=options)
        for i, frame in enumerate(obs):
            self._frames[i] = self._warp(frame)  # the stack starts as copies of the first frame
        return self._frames.copy(), infos

    def step(self, actions):
        obs, rewards, terminated, truncated, infos = self.env.step(actions)
        ended = np.logical_or(terminated, truncated)
        self._frames[:, :-1] = self._frames[:, 1:]
        for i, frame in enumerate(obs):
            if ended[i]:
                infos["final_obs"][i] = self._final_stack(i, infos["final_obs"][i])
                self._frames[i] = self._warp(frame)
            else:
                self._frames[i, -1] = self._warp(frame)
        return self._frames.copy(), rewards, terminated, truncated, infos

    def _final_stack(self, i: int, last_frame: np.ndarray) -> np.ndarray:
        final = self._frames[i].copy()  # already shifted: slots 0..stack-2 hold the last frames
        final[-1] = self._warp(last_frame)
        return final


class OwnObservations(gym.vector.VectorWrapper):
    """The suite env's observations unchanged, as arrays of the agent's own: the env hands out
    its workers' shared screens, valid until the next step (``info["final_obs"]`` are copies)."""

    def reset(self, *, seed=None, options=None):
        obs, infos = self.env.reset(seed=seed, options=options)
        return np.array(obs, copy=True), infos

    def step(self, actions):
        obs, rewards, terminated, truncated, infos = self.env.step(actions)
        return np.array(obs, copy=True), rewards, terminated, truncated, infos


def agent_wrappers(env: gym.vector.VectorEnv, needs: AgentNeeds) -> gym.vector.VectorEnv:
    """The paper's preprocessing for an agent with ``needs`` (see the module docstring).

    ========================== ================================================
    need                       answer
    ========================== ================================================
    no named actions           the paper's 7 button combinations
    named actions (JERK)       JERK's 10: the paper's 7 + 3 (ACTION_SEMANTICS)
    reward "learning"          allow-backtracking (paper, 4.1)
    reward "benchmark"         the benchmark reward (JERK, random)
    observations "frames"      84x84 gray, 4 stacked (the paper's agents)
    observations "native"      the 224x320 RGB screens, copied
    ========================== ================================================

    Rainbow used the raw reward scale (its distributional support was sized for it, Vmax = 200);
    PPO scales rewards by 0.005 itself (its Sonic defaults).
    """
    env = ButtonCombos(env, JERK_COMBOS if needs.actions else PAPER_COMBOS)
    if needs.reward == "learning":
        env = AllowBacktracking(env)
    return WarpFrameStack(env) if needs.observations == "frames" else OwnObservations(env)
