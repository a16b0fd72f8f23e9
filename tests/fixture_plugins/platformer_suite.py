"""A scripted side-scroller suite for agent tests: Sonic-shaped, without an emulator.

Task "walls-G": the player starts at x = 0 and must reach x = 200 within 300 timesteps. Moving
right adds 2 to x, left subtracts 2; a wall stands every G pixels and blocks a move unless the
jump button is held. The reward is the progress x_t - x_{t-1} (so going left is negative, as in
Sonic), plus a completion bonus of 100 * (1 - t / 300) on reaching the end. Task "sprint-G" is
the same with x = 40 to reach within 40 timesteps (cheap episodes for slow agents' tests). With probability 0.25
an action is "sticky": the previous action is applied instead (Sonic's sticky frame skip, in
spirit). Observations are 84x84 images stacked 4 deep, oldest first (each shows the player's
column and the walls), so the Nature CNN applies. ``action_semantics()`` names right/left/jump, so
JERK runs here; ``agent_wrappers`` is the identity.
"""

from __future__ import annotations

from collections.abc import Sequence

import gymnasium as gym
import numpy as np

import benchgen
from benchgen.episodes import EpisodeBook
from benchgen.suite import Split, Suite, SuiteVectorEnv

TASKS = ["walls-30", "walls-40", "walls-50", "sprint-10", "sprint-15", "sprint-20"]
#: task kind -> (end x, time limit in timesteps)
KINDS = {"walls": (200, 300), "sprint": (40, 40)}
SIZE = 84
#: action index -> (dx, jump)
ACTIONS = [(0, False), (-2, False), (2, False), (0, True), (-2, True), (2, True)]
SEMANTICS = {"noop": 0, "left": 1, "right": 2, "jump": 3, "left_jump": 4, "right_jump": 5}


class PlatformerVectorEnv(SuiteVectorEnv):
    frames_per_step = 4

    def __init__(self, tasks: Sequence[str], seed: int):
        self.tasks = list(tasks)
        self.num_envs = len(tasks)
        self.single_observation_space = gym.spaces.Box(0, 255, (4, SIZE, SIZE), np.uint8)
        self.single_action_space = gym.spaces.Discrete(len(ACTIONS))
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, self.num_envs)
        self.metadata = {"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}
        self.gaps = np.array([int(t.split("-")[1]) for t in self.tasks])
        self.end_x = np.array([KINDS[t.split("-")[0]][0] for t in self.tasks])
        self.max_steps = np.array([KINDS[t.split("-")[0]][1] for t in self.tasks])
        self.rng = np.random.default_rng(seed)
        self.x = np.zeros(self.num_envs, int)
        self.episodes = EpisodeBook(self.tasks, self.frames_per_step)
        self.prev = np.zeros(self.num_envs, int)
        self.frames = np.zeros((self.num_envs, 4, SIZE, SIZE), np.uint8)

    def _draw(self, which) -> None:
        for i in which:
            self.frames[i, :-1] = self.frames[i, 1:].copy()  # a sliding stack, newest frame last
            self.frames[i, -1] = 0
            end = self.end_x[i]
            walls = np.arange(self.gaps[i], end, self.gaps[i]) * (SIZE - 1) // end
            self.frames[i, -1, SIZE - 8 :, walls] = 128
            self.frames[i, -1, :, min(SIZE - 1, self.x[i] * (SIZE - 1) // end)] = 255

    def _restart(self, which) -> None:
        self.x[which] = self.t[which] = self.prev[which] = 0
        self.score[which] = 0
        for i in which:
            self.frames[i] = 0
        self._draw(which)

    def reset(self, *, seed=None, options=None):
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self._restart(range(self.num_envs))
        self.episodes.reset()
        return self.frames.copy(), {}

    def step(self, actions):
        actions = np.asarray(actions)
        sticky = (self.rng.random(self.num_envs) < 0.25) & (self.t > 0)
        applied = np.where(sticky, self.prev, actions)
        self.prev = actions.copy()
        reward = np.zeros(self.num_envs)
        for i, a in enumerate(applied):
            dx, jump = ACTIONS[int(a)]
            new_x = int(np.clip(self.x[i] + dx, 0, self.end_x[i]))
            crossing = [
                w
                for w in range(self.gaps[i], self.end_x[i], self.gaps[i])
                if min(self.x[i], new_x) < w <= max(self.x[i], new_x)
            ]
            if crossing and not jump:
                new_x = self.x[i]  # a wall: only a jump gets over it
            reward[i] = new_x - self.x[i]
            self.x[i] = new_x
        completed = self.x >= self.end_x
        reward = reward + np.where(completed, 100.0 * (1 - (self.t + 1) / self.max_steps), 0.0)
        self.episodes.add(reward)
        truncated = (self.t >= self.max_steps) & ~completed
        done = completed | truncated
        self._draw(range(self.num_envs))
        info = {}
        if done.any():
            info["final_obs"] = self.frames.copy()
            for i in np.flatnonzero(done):
                self.episodes.end(i, "completed" if completed[i] else "time_limit", extras={"x": int(self.x[i])})
            self._restart(np.flatnonzero(done))
        return self.frames.copy(), reward, completed, truncated, info

    @property
    def t(self) -> np.ndarray:
        """Each sub-environment's steps into its episode."""
        return self.episodes.steps

    @property
    def score(self) -> np.ndarray:
        """Each sub-environment's raw score so far in its episode."""
        return self.episodes.returns

    def pop_episode_ends(self):
        return self.episodes.pop()


class PlatformerSuite(Suite):
    name = "platformer"
    description = "scripted side-scroller (agent tests)"
    budget_unit = "timesteps"
    frames_per_step = 4
    default_budget = 3000
    default_checkpoints = (1500, 3000)
    default_num_envs = 1
    episode_fields = ("x",)
    end_reasons = ("completed", "time_limit")
    default_split = "all"

    def tasks(self):
        return list(TASKS)

    def protocol(self):
        return {"version": "1", "frames_per_step": 4, "kinds": {k: list(v) for k, v in KINDS.items()}}

    def make_env(self, tasks, seed, *, mode="train"):
        return PlatformerVectorEnv(tasks, seed)

    def action_semantics(self):
        return dict(SEMANTICS)


SUITE = PlatformerSuite()


@benchgen.hookimpl
def benchgen_suites():
    return [SUITE]


@benchgen.hookimpl
def benchgen_splits(suite):
    if suite.name != "platformer":
        return []
    return [
        Split("platformer", "all", ("walls-30", "walls-40"), ("walls-50",), description="2 train, 1 test"),
        Split("platformer", "sprint", ("sprint-10", "sprint-15"), ("sprint-20",), description="short episodes"),
    ]
