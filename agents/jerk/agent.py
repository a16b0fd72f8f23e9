"""JERK, "Just Enough Retained Knowledge" (Nichol et al. 2018, "Gotta Learn Fast", Algorithm 1).

A scripted explorer that learns nothing from pixels: it reads only rewards and the suite's
action semantics (which action index means right, left, jump, right+jump, left+jump, no-op).

Algorithm 1, with the paper's parameters (beta = 0.25, Rn = 100, Ln = 70, Jn = 4, Jp = 0.1)::

    S <- {}, T <- 0
    repeat (one episode per iteration)
        if |S| > 0 and U(0, 1) < beta + T / Tmax:
            replay the best sequence tau in S, padding the episode with no-ops;
            update the mean reward of tau with this episode's total reward
        else:
            repeat until the episode ends:
                go right for Rn steps, jumping for Jn steps at random moments (probability Jp);
                if the cumulative reward did not increase over those Rn steps:
                    go left for Ln steps, jumping the same way
            t <- the step of highest cumulative reward r in the episode
            insert (actions[0..t], r) into S
        T <- T + the episode's steps
    until T >= Tmax

Details follow OpenAI's reference implementation (retro-baselines ``agents/jerk_agent.py``):
"best" is the highest mean reward (ties: the most recent); a new sequence's rewards start as
``[r]``; a replay appends the episode's total reward; every move restarts its jump counter; a
move of Rn steps "did not increase" the reward when its summed reward is <= 0.

Vector envs: JERK is single-threaded. With N sub-environments the agent runs N independent
instances (own S, own random stream), each with its share ``Tmax / N`` of the budget, so the
exploitation probability ``beta + T_i / Tmax_i`` equals ``beta + steps_done / budget_steps``.
Sub-environments of one unit play the same task, so a shared S would also be legal; independent
instances are the paper's algorithm unchanged. The default is one sub-environment, as in the
paper. Episode boundaries come from the vector env's ``SAME_STEP`` autoreset: a finished
episode's next observation already belongs to the new episode, where the next decision is made.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from benchgen.agent import Agent, AgentEnvironment, TrainingContext
from benchgen.errors import UsageError
from benchgen_agents.common.checkpoint_io import as_json, as_npz, save_files
from benchgen_agents.jerk.config import REQUIRED_ACTIONS, JerkConfig

STATE_FILE = "jerk.json"
SOLUTIONS_FILE = "jerk_solutions.npz"


@dataclass
class Solution:
    """An action prefix and the rewards it earned: its first is the exploring episode's best
    cumulative reward, the others are the total rewards of its replays."""

    actions: np.ndarray
    rewards: list[float] = field(default_factory=list)

    @property
    def mean(self) -> float:
        return float(np.mean(self.rewards))


class JerkInstance:
    """Algorithm 1 for one sub-environment, driven one timestep at a time."""

    def __init__(self, config: JerkConfig, semantics: dict[str, int], rng: np.random.Generator):
        self.config = config
        self.sem = semantics
        self.rng = rng
        self.solutions: list[Solution] = []
        self.in_episode = False

    # -- episode start: exploit or explore ------------------------------------------------
    def start_episode(self, progress: float) -> None:
        """Decide this episode's mode; ``progress`` is T / Tmax."""
        self.in_episode = True
        self.episode_reward = 0.0
        self.step_index = 0
        if self.solutions and self.rng.random() < self.config.exploit_bias + progress:
            self.mode = "exploit"
            self.replayed = self.best()
        else:
            self.mode = "explore"
            self.actions: list[int] = []
            self.cumulative: list[float] = []
            self._start_move("right")

    def best(self) -> Solution:
        """The solution with the highest mean reward (ties: the most recently found)."""
        best = 0
        for i, s in enumerate(self.solutions):
            if s.mean >= self.solutions[best].mean:
                best = i
        return self.solutions[best]

    def _start_move(self, direction: str) -> None:
        self.direction = direction
        self.move_left = self.config.right_steps if direction == "right" else self.config.left_steps
        self.move_reward = 0.0
        self.jump_left = 0  # each move starts not jumping (reference implementation)

    # -- one timestep ---------------------------------------------------------------------
    def action(self) -> int:
        if self.mode == "exploit":
            seq = self.replayed.actions
            # Replay the prefix, then pad the episode with no-ops.
            return int(seq[self.step_index]) if self.step_index < len(seq) else self.sem["noop"]
        jump = False
        if self.jump_left > 0:
            jump, self.jump_left = True, self.jump_left - 1
        elif self.rng.random() < self.config.jump_prob:
            jump, self.jump_left = True, self.config.jump_repeat - 1
        return self.sem[f"{self.direction}_jump" if jump else self.direction]

    def observe(self, action: int, reward: float, done: bool) -> None:
        """Account for the step just taken with ``action``."""
        self.step_index += 1
        self.episode_reward += reward
        if self.mode == "exploit":
            if done:
                self.replayed.rewards.append(self.episode_reward)  # running mean of tau
                self.in_episode = False
            return
        self.actions.append(action)
        self.cumulative.append(self.episode_reward)
        if done:
            # Store the prefix up to the (first) step of highest cumulative reward, with it.
            t = int(np.argmax(self.cumulative))
            self.solutions.append(Solution(np.asarray(self.actions[: t + 1], dtype=np.int16), [self.cumulative[t]]))
            self.in_episode = False
            return
        self.move_reward += reward
        self.move_left -= 1
        if self.move_left <= 0:
            if self.direction == "right" and self.move_reward <= 0 and self.config.left_steps > 0:
                self._start_move("left")  # no progress over Rn steps: back off Ln steps
            else:
                self._start_move("right")

    # -- persistence ----------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        return {"rng": self.rng.bit_generator.state, "rewards": [s.rewards for s in self.solutions]}


class JerkAgent(Agent):
    """N independent :class:`JerkInstance` over an N-sub-environment vector env."""

    def __init__(self, config: JerkConfig, environment: AgentEnvironment):
        super().__init__(config, environment)
        self.semantics = check_semantics(environment)
        self.instances: list[JerkInstance] = []
        self._loaded: list[JerkInstance] = []
        self._act_rng = np.random.default_rng(config.seed_offset)

    def _rng(self, seed: int, index: int) -> np.random.Generator:
        return np.random.default_rng(np.random.SeedSequence([seed + self.config.seed_offset, index]))

    def _instances_for(self, num_envs: int, seed: int) -> list[JerkInstance]:
        if len(self.instances) != num_envs:
            old = self.instances or self._loaded
            new = [JerkInstance(self.config, self.semantics, self._rng(seed, i)) for i in range(num_envs)]
            for i, inst in enumerate(new):  # restored instances keep their retained knowledge
                if old:
                    src = old[i % len(old)]
                    inst.solutions = [Solution(s.actions.copy(), list(s.rewards)) for s in src.solutions]
                    if i < len(old):
                        inst.rng = src.rng
            self.instances = new
        return self.instances

    def learn(self, env, ctx: TrainingContext) -> None:
        instances = self._instances_for(env.num_envs, ctx.seed)
        env.reset()
        for inst in instances:
            inst.in_episode = False  # a (re)started env begins new episodes
        while not ctx.finished:
            progress = ctx.steps_done / max(1, ctx.budget_steps)  # T / Tmax (module docstring)
            for inst in instances:
                if not inst.in_episode:
                    inst.start_episode(progress)
            actions = np.array([inst.action() for inst in instances], dtype=np.int64)
            _obs, rewards, terminated, truncated, _info = env.step(actions)
            done = np.asarray(terminated) | np.asarray(truncated)
            for i, inst in enumerate(instances):
                inst.observe(int(actions[i]), float(rewards[i]), bool(done[i]))
            ctx.maybe_checkpoint()

    def act(self, observations: np.ndarray, greedy: bool = True) -> np.ndarray:
        """Without rewards or episode boundaries JERK can neither replay nor judge a move: act
        as its exploration does, right with random jumps (the best sequences are for ``learn``)."""
        n = len(observations)
        jump = self._act_rng.random(n) < self.config.jump_prob
        return np.where(jump, self.semantics["right_jump"], self.semantics["right"]).astype(np.int64)

    def save(self, directory: Path) -> None:
        directory = Path(directory)
        arrays: dict[str, np.ndarray] = {}
        for i, inst in enumerate(self.instances):
            arrays[f"actions_{i}"] = (
                np.concatenate([s.actions for s in inst.solutions]) if inst.solutions else np.zeros(0, np.int16)
            )
            arrays[f"lengths_{i}"] = np.array([len(s.actions) for s in inst.solutions], dtype=np.int64)
        state = {"instances": [inst.state() for inst in self.instances], "config": vars(self.config)}
        save_files(
            {directory / SOLUTIONS_FILE: as_npz(arrays, compressed=True), directory / STATE_FILE: as_json(state)}
        )

    def load(self, directory: Path) -> None:
        directory = Path(directory)
        if not (directory / STATE_FILE).is_file():
            raise UsageError(f"checkpoint {directory} holds no JERK state ({STATE_FILE})")
        state = json.loads((directory / STATE_FILE).read_text())
        arrays = np.load(directory / SOLUTIONS_FILE)
        self._loaded = []
        for i, inst_state in enumerate(state["instances"]):
            inst = JerkInstance(self.config, self.semantics, np.random.default_rng())
            inst.rng.bit_generator.state = inst_state["rng"]
            bounds = np.cumsum([0, *arrays[f"lengths_{i}"]])
            seqs = arrays[f"actions_{i}"]
            inst.solutions = [
                Solution(seqs[a:b].copy(), list(r)) for a, b, r in zip(bounds[:-1], bounds[1:], inst_state["rewards"])
            ]
            self._loaded.append(inst)
        self.instances = []


def check_semantics(environment: AgentEnvironment) -> dict[str, int]:
    """The right/left/jump action indices the suite names in JERK's action space, or a
    UsageError saying JERK cannot run (the runner refuses such a suite before it creates a run
    directory, from ``AgentSpec.needs``)."""
    return environment.named_actions("jerk", REQUIRED_ACTIONS)
