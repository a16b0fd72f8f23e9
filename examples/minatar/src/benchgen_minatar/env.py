"""The environment: one ``minatar.Environment`` per sub-environment, stepped in one loop.

Each sub-environment is the package's own ``minatar.Environment(game, sticky_action_prob=0.1,
difficulty_ramping=True)`` (its defaults, the MinAtar paper's settings): ``act`` applies the
sticky action rule and one game frame, ``state()`` is the ``(10, 10, n)`` boolean grid of the
game's ``n`` object channels. :class:`MinAtarVectorEnv` turns that into benchgen's contract:

* observations ``uint8`` ``(10, 10, 10)``, channels first: the game's ``n`` channels (in the
  package's order) followed by ``10 - n`` channels of zeros, so that every game has the same
  observation space (joint agents train on several games; Seaquest has the most channels, 10).
  A cell is 1 where the game's object is, else 0;
* the full action set of 6 actions (no-op, left, up, right, down, fire), the same for every game;
* SAME_STEP autoreset: the package's ``reset()`` starts the next episode at once and
  ``info["final_obs"]`` holds the finished episode's last observation;
* one :class:`~benchgen.suite.EpisodeEnd` per finished episode: the raw score (sum of the game's
  rewards), the length in frames (one agent step is one game frame) and why it ended.

Seeding: ``reset(seed=s)`` gives sub-environment ``i`` a ``numpy.random.RandomState`` seeded from
``SeedSequence([s, i])`` (the package draws sticky actions and the game's randomness from one
such generator) and sets the sticky "last action" to no-op, as a freshly built
``minatar.Environment`` has; the seed given to ``make_env`` seeds the first ``reset()`` when the
agent passes none. Between episodes the package's rule holds unchanged: ``reset()`` keeps the
generator and the last action.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from benchgen.episodes import EpisodeBook
from benchgen.suite import EpisodeEnd, SuiteVectorEnv

#: the five games of minatar 1.0.15 (``minatar/environments/*.py``), the suite's tasks
GAMES = ("asterix", "breakout", "freeway", "seaquest", "space_invaders")
#: object channels of each game's state (``Env.state_shape()[2]`` in minatar 1.0.15)
GAME_CHANNELS = {"asterix": 4, "breakout": 4, "freeway": 7, "seaquest": 10, "space_invaders": 6}
#: channels of every observation: the most any game has (Seaquest); fewer are zero-padded
OBSERVATION_CHANNELS = max(GAME_CHANNELS.values())
#: side of the square grid the games play on
GRID = 10
#: actions: minatar's full action set, ``Environment.num_actions()`` (n, l, u, r, d, f)
NUM_ACTIONS = 6
ACTION_NAMES = ("noop", "left", "up", "right", "down", "fire")
#: probability that the previous action is repeated instead of the chosen one, per frame
#: (the MinAtar paper, after Machado et al. 2018; ``minatar.Environment``'s default)
STICKY_ACTION_PROBABILITY = 0.1
#: Asterix, Seaquest and Space Invaders speed up as an episode goes on (the package's default)
DIFFICULTY_RAMPING = True
#: one agent step is one game frame: MinAtar has no frame skip
FRAMES_PER_STEP = 1
#: games whose only episode end is a timer (Freeway: 2500 frames), recorded as ``time_limit``
TIMED_GAMES = ("freeway",)


def make_game(game: str) -> Any:
    """The package's ``minatar.Environment`` for ``game`` with the protocol's settings.

    minatar is imported here, not at module level: it imports matplotlib and seaborn (about a
    second and a half), and benchgen imports every plugin at start-up."""
    from minatar import Environment

    return Environment(game, sticky_action_prob=STICKY_ACTION_PROBABILITY, difficulty_ramping=DIFFICULTY_RAMPING)


def game_seed(seed: int, index: int) -> int:
    """The ``RandomState`` seed of sub-environment ``index`` for ``reset(seed=seed)``: distinct
    streams for every (seed, index), so units with neighbouring seeds do not share games."""
    return int(np.random.SeedSequence([int(seed) % 2**63, int(index)]).generate_state(1)[0])


class MinAtarVectorEnv(SuiteVectorEnv):
    """Sub-environment ``i`` plays ``tasks[i]``; see the module docstring."""

    frames_per_step = FRAMES_PER_STEP

    def __init__(self, tasks: Sequence[str], seed: int):
        self.tasks = list(tasks)
        self.num_envs = len(self.tasks)
        self._games = [make_game(t) for t in self.tasks]
        self._channels = [GAME_CHANNELS[t] for t in self.tasks]
        self.single_observation_space = gym.spaces.Box(0, 1, (OBSERVATION_CHANNELS, GRID, GRID), np.uint8)
        self.single_action_space = gym.spaces.Discrete(NUM_ACTIONS)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, self.num_envs)
        self.metadata = {"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}
        self._first_seed: int | None = seed
        self.episodes = EpisodeBook(self.tasks, FRAMES_PER_STEP)

    def _state(self, i: int, out: np.ndarray) -> None:
        """Write sub-environment ``i``'s state into ``out`` (``(10, 10, 10)`` uint8, zeroed)."""
        out[: self._channels[i]] = np.moveaxis(self._games[i].state(), -1, 0)

    def _observations(self) -> np.ndarray:
        obs = np.zeros((self.num_envs, *self.single_observation_space.shape), np.uint8)
        for i in range(self.num_envs):
            self._state(i, obs[i])
        return obs

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        if seed is None:
            seed = self._first_seed
        self._first_seed = None
        for i, game in enumerate(self._games):
            if seed is not None:
                game.seed(game_seed(seed, i))
                game.last_action = 0  # a fresh Environment's: the same seed replays the same episode
            game.reset()
        self.episodes.reset()
        return self._observations(), {}

    def step(self, actions):
        actions = np.asarray(actions)
        rewards = np.zeros(self.num_envs)
        terminated = np.zeros(self.num_envs, dtype=bool)
        obs = np.zeros((self.num_envs, *self.single_observation_space.shape), np.uint8)
        final_obs = None
        extras: dict[int, dict[str, Any]] = {}
        for i, game in enumerate(self._games):
            reward, done = game.act(int(actions[i]))
            rewards[i] = reward
            if done:
                if final_obs is None:
                    final_obs = np.zeros_like(obs)
                self._state(i, final_obs[i])
                terminated[i] = True
                extras[i] = self._extras(game)  # read before the game restarts
                game.reset()
            self._state(i, obs[i])
        self.episodes.add(rewards)
        for i, facts in extras.items():
            self.episodes.end(i, "time_limit" if self.tasks[i] in TIMED_GAMES else "game_over", extras=facts)
        info: dict[str, Any] = {}
        if final_obs is not None:
            final_obs[~terminated] = obs[~terminated]
            info = {"final_obs": final_obs, "_final_obs": terminated.copy()}
        return obs, rewards, terminated, np.zeros(self.num_envs, dtype=bool), info

    @staticmethod
    def _extras(game: Any) -> dict[str, Any]:
        """A finished episode's ``EpisodeEnd.extras``: the difficulty its game had ramped to."""
        ramp = game.env.difficulty_ramp()
        return {"ramp_level": None if ramp is None else int(ramp)}

    def pop_episode_ends(self) -> list[EpisodeEnd]:
        return self.episodes.pop()
