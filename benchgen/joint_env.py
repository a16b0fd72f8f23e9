"""Joint environments: sub-environments that draw a new task at the start of every episode.

Nichol et al. 2018 ("Gotta Learn Fast", section 4.6) train joint Rainbow on "joint
environments", which "sample a new training level at the beginning of every episode". Any suite
gets them from :class:`JointTaskVectorEnv`: each of its slots plays one sub-environment of the
suite (``Suite.make_env([task], ...)``) and, whenever the suite reports that slot's episode over
(its own :class:`~benchgen.suite.EpisodeEnd`, not the agent-facing ``terminated`` flag, which a
protocol may raise at a lost life while the recorded episode goes on), draws the next task
uniformly from the task set. A slot whose task changes closes its env and builds one for the
new task, so at most one env per slot is open (some emulators allow one instance per process,
and a suite may keep its envs in worker processes). Every episode is recorded under the task it played.

Hand-written because gymnasium's vector envs fix each sub-environment's env for their lifetime;
none switches the env of a sub-environment between episodes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import gymnasium as gym
import numpy as np

from benchgen.errors import UsageError
from benchgen.suite import EpisodeEnd, SuiteVectorEnv


def _child_seed(*parts: int) -> int:
    return int(np.random.SeedSequence([int(p) for p in parts]).generate_state(1)[0])


class JointTaskVectorEnv(SuiteVectorEnv):
    """``num_envs`` slots over a task set; each slot draws a new task for every episode.

    ``make_one(task, seed)`` builds one sub-environment of ``task`` (a suite env with
    ``num_envs == 1``). Draws come from a numpy generator seeded with ``seed`` (and again by
    ``reset(seed=...)``), so a seed gives the same sequence of tasks."""

    def __init__(self, make_one: Callable[[str, int], SuiteVectorEnv], tasks: Sequence[str], num_envs: int, seed: int):
        self.task_set = list(dict.fromkeys(tasks))
        if not self.task_set or num_envs < 1:
            raise ValueError("joint environments need at least one task and one slot")
        self._make_one = make_one
        self.num_envs = int(num_envs)
        self._seed = int(seed)
        self._rng = np.random.default_rng(_child_seed(seed, 0))
        self._episodes = [0] * self.num_envs
        self._ends: list[EpisodeEnd] = []
        #: the task each slot is playing now
        self.tasks = [self._draw() for _ in range(self.num_envs)]
        self._slots: list[SuiteVectorEnv] = []
        try:
            for i in range(self.num_envs):
                self._slots.append(self._build(i))
        except BaseException:
            self.close()
            raise
        first = self._slots[0]
        self.frames_per_step = first.frames_per_step
        self.single_observation_space = first.single_observation_space
        self.single_action_space = first.single_action_space
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, self.num_envs)
        self.metadata = {"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}
        for i, env in enumerate(self._slots):
            self._check_spaces(env, self.tasks[i])

    def _draw(self) -> str:
        return self.task_set[int(self._rng.integers(len(self.task_set)))]

    def _build(self, slot: int) -> SuiteVectorEnv:
        return self._make_one(self.tasks[slot], _child_seed(self._seed, 1, slot, self._episodes[slot]))

    def _check_spaces(self, env: SuiteVectorEnv, task: str) -> None:
        if env.single_observation_space != self.single_observation_space or (
            env.single_action_space != self.single_action_space
        ):
            raise UsageError(
                f"joint environments need the same observations and actions on every task: {task} has "
                f"{env.single_observation_space} / {env.single_action_space}, {self.tasks[0]} "
                f"{self.single_observation_space} / {self.single_action_space}; choose tasks that share "
                "them, or --task-sampling fixed"
            )

    def reset(self, *, seed=None, options=None):
        if seed is not None:
            self._rng = np.random.default_rng(_child_seed(seed, 0))
        observations = []
        for i, env in enumerate(self._slots):
            slot_seed = None if seed is None else _child_seed(seed, 2, i)
            obs, _info = env.reset(seed=slot_seed)
            observations.append(np.array(obs[0], copy=True))
        return np.stack(observations), {}

    def step(self, actions):
        actions = np.asarray(actions)
        observations, rewards, terminated, truncated = [], [], [], []
        final_obs, final_mask = None, np.zeros(self.num_envs, dtype=bool)
        for i in range(self.num_envs):
            obs, reward, term, trunc, info = self._slots[i].step(actions[i : i + 1])
            rewards.append(float(np.asarray(reward)[0]))
            terminated.append(bool(np.asarray(term)[0]))
            truncated.append(bool(np.asarray(trunc)[0]))
            ended = "final_obs" in info and bool(np.asarray(info.get("_final_obs", [True]))[0])
            if ended:
                if final_obs is None:
                    final_obs = np.zeros((self.num_envs, *self.single_observation_space.shape), obs.dtype)
                final_obs[i] = info["final_obs"][0]
                final_mask[i] = True
            obs = np.array(obs[0], copy=True)
            ends = self._slots[i].pop_episode_ends()
            for end in ends:
                end.env_index = i
                self._ends.append(end)
            if ends:  # the suite's episode is over: the slot's next episode plays a new draw
                self._episodes[i] += 1
                task = self._draw()
                if task != self.tasks[i]:
                    self._slots[i].close()
                    self.tasks[i] = task
                    self._slots[i] = self._build(i)
                    self._check_spaces(self._slots[i], task)
                    first, _info = self._slots[i].reset(seed=_child_seed(self._seed, 3, i, self._episodes[i]))
                    obs = np.array(first[0], copy=True)
            observations.append(obs)
        info = {} if final_obs is None else {"final_obs": final_obs, "_final_obs": final_mask}
        return (
            np.stack(observations),
            np.asarray(rewards, dtype=np.float64),
            np.asarray(terminated),
            np.asarray(truncated),
            info,
        )

    def pop_episode_ends(self) -> list[EpisodeEnd]:
        ends, self._ends = self._ends, []
        return ends

    def close(self, **kwargs) -> None:
        for env in getattr(self, "_slots", []):
            env.close()
        self._slots = []
