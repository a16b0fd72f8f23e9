"""The ``gymnasium`` suite: registered Gymnasium environments with discrete actions, as benchgen tasks.

Tasks are registry ids (``CartPole-v1``, ``Acrobot-v1``, ``FrozenLake-v1``...): those of
gymnasium's own environments that this machine can make, with a ``Discrete`` action space
(:mod:`benchgen_gymnasium.catalog`; Atari ids are ``atari_saber``'s). Each plays as
``gymnasium.make(id)`` builds it, its own time limit included (:mod:`benchgen_gymnasium.env`).

Budgets count agent steps (``timesteps``, one frame each). The default, 100,000 per task with
reporting points at 10K, 25K, 50K and 100K, is the scale of the RL Baselines3 Zoo's tuned
classic-control runs (``hyperparams/dqn.yml``: CartPole 50K, Acrobot 100K, MountainCar 120K
steps; ``ppo.yml``: CartPole 100K, while its PPO takes 1M on Acrobot and MountainCar): enough
for a tuned agent to solve CartPole, with early points that show how fast. The suite ships the
RL Zoo's tuned settings of the shared agents for its tasks (``tuned/dqn.yaml``, ``tuned/ppo.yaml``:
network, replay, learning start, exploration and the task's budget, ``n_timesteps``, used when a
run gives no ``--frames``/``--timesteps``), and no frame stack or reward clipping on any task
(vector observations); ``benchgen run gymnasium AGENT --tasks TASK --plan`` shows every value
and its source, and ``--config``/``--set`` override them. The scores the RL Zoo published for
those settings are the suite's ``data/rl_zoo_benchmark.csv`` (:mod:`benchgen_gymnasium.published`).

Scoring is raw: a task's score is the mean return of its last 100 episodes. Gymnasium publishes
no random scores, and a table shipped here would name tasks missing where an optional extra is
not installed and go stale with gymnasium's releases, so the suite ships none and its scorer is None (``benchgen report`` and
``benchgen compare`` show raw returns). What it ships is the registry's own yardstick, the
``reward_threshold`` reference table: the return at which gymnasium counts an environment as
solved (CartPole-v1 475, Acrobot-v1 -100, ...). To normalize, measure random play with
``benchgen run gymnasium random --tasks ...``, write its per-task scores (``report/report.json``:
``phases.train.final.score``) as a ``task,score`` CSV, and compare with Bellemare et al.'s
baseline-set normalization over it and the thresholds::

    benchgen compare RUN --reference random_here=random.csv \\
        --normalization baseline-set --baseline-set random_here,reward_threshold

(0 = random play, 1 = solved; tasks without a threshold stay raw). ``--baseline FILE.csv`` alone
cannot work here: it replaces the reference, and the random score it is measured from would
still be missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym

from benchgen.agent import AgentNeeds
from benchgen.errors import UsageError, did_you_mean
from benchgen.scoring import ReferenceScores, Scorer
from benchgen.suite import Split, Suite

from . import catalog
from .env import FRAMES_PER_STEP, TERMINATED, TRUNCATED, GymnasiumVectorEnv

#: version of the suite's protocol (bump it when anything in ``protocol()`` changes meaning)
VERSION = "1"
#: the reference table of the registry's solved thresholds
REWARD_THRESHOLD = "reward_threshold"


def _describe(space: gym.Space) -> str:
    """A space in a few characters: a Box by its shape and dtype (its bounds can be long)."""
    return f"Box{space.shape} {space.dtype}" if isinstance(space, gym.spaces.Box) else str(space)


class GymnasiumSuite(Suite):
    """Registered Gymnasium environments with discrete actions; see the module docstring."""

    name = "gymnasium"
    description = (
        "registered Gymnasium environments with discrete actions (classic control, toy text, ...), raw returns"
    )
    version = VERSION
    budget_unit = "timesteps"
    frames_per_step = FRAMES_PER_STEP
    #: the RL Zoo's classic-control scale (module docstring)
    default_budget = 100_000
    default_checkpoints = (10_000, 25_000, 50_000, 100_000)
    default_num_envs = 1
    end_reasons = (TERMINATED, TRUNCATED)
    task_score_rule = "mean raw return of the last 100 episodes"
    default_split = "classic_control"

    def tasks(self) -> list[str]:
        return list(catalog.runnable())

    def protocol(self) -> dict[str, Any]:
        """gymnasium's version and, per task, what its registration says: entry point, the id's
        version, ``max_episode_steps`` (its time limit, None: none), kwargs and the observation
        encoding. Tasks this machine cannot make are not recorded, so runs from machines with
        different optional extras (Box2D, MuJoCo) differ in ``envs`` and need ``--force`` to be
        compared."""
        return {
            "version": VERSION,
            "gymnasium_version": gym.__version__,
            "frames_per_step": FRAMES_PER_STEP,
            "score": "undiscounted_return",
            "envs": {task_id: catalog.spec_facts(task) for task_id, task in catalog.runnable().items()},
        }

    #: whether runs on this suite need ``clone_state`` (``with_capabilities``): tasks whose state
    #: cannot be copied are then refused when the run is planned
    needs_clone_state = False

    def check_task_available(self, task: str) -> None:
        if task not in catalog.runnable():
            raise did_you_mean(
                f"task of suite '{self.name}'", task, self.tasks(), listed_by=f"benchgen list {self.name}"
            )
        if self.needs_clone_state:
            from .emulators import check_copyable

            env = gym.make(task)
            try:
                check_copyable(task, env)
            finally:
                env.close()

    def capabilities(self) -> frozenset[str]:
        """``clone_state`` for tasks whose state can be copied (:mod:`benchgen_gymnasium.emulators`)."""
        from .emulators import GYMNASIUM_CAPABILITIES

        return GYMNASIUM_CAPABILITIES

    def with_capabilities(self, names: Sequence[str]) -> GymnasiumSuite:
        """This suite, refusing (when the run is planned) tasks whose state cannot be cloned."""
        suite = type(self)()
        suite.needs_clone_state = "clone_state" in names
        return suite

    def make_env(self, tasks: Sequence[str], seed: int, *, mode: str = "train") -> GymnasiumVectorEnv:
        """The same env in both modes: Gymnasium's environments have no training-only rules."""
        for task in tasks:
            self.check_task_available(task)
        found = [catalog.runnable()[t] for t in tasks]
        first = found[0]
        for task in found[1:]:
            if (task.codec.suite_space, task.codec.agent_space, task.action_space) != (
                first.codec.suite_space,
                first.codec.agent_space,
                first.action_space,
            ):
                raise UsageError(
                    f"tasks {first.spec.id} and {task.spec.id} have different spaces (observations "
                    f"{_describe(first.codec.env_space)} vs {_describe(task.codec.env_space)}, actions "
                    f"{first.action_space} vs {task.action_space}); one env, such as a joint agent's, plays "
                    "only tasks with the same spaces"
                )
        return GymnasiumVectorEnv(tasks, seed, first.codec)

    def agent_wrappers(self, env: gym.vector.VectorEnv, needs: AgentNeeds) -> gym.vector.VectorEnv:
        """The environment's own observations, decoded; the reward unchanged
        (:mod:`benchgen_gymnasium.wrappers`)."""
        from .wrappers import agent_wrappers

        return agent_wrappers(env, needs)

    def splits(self) -> list[Split]:
        """One split per gymnasium package with runnable tasks (``classic_control``,
        ``toy_text``, ``box2d``...): the newest version of each of its environments, all train."""
        return [
            Split(
                suite=self.name,
                name=group,
                train=tuple(ids),
                description=f"gymnasium's {group} environments with discrete actions, newest versions",
            )
            for group, ids in catalog.newest_by_group().items()
        ]

    def random_scores(self) -> dict[str, float]:
        """None shipped: measure them (module docstring)."""
        return {}

    def reference_scores(self) -> list[ReferenceScores]:
        """``reward_threshold``: each task's ``EnvSpec.reward_threshold``, where it has one."""
        scores = {
            task_id: float(task.spec.reward_threshold)
            for task_id, task in catalog.runnable().items()
            if task.spec.reward_threshold is not None
        }
        if not scores:
            return []
        return [
            ReferenceScores(
                name=REWARD_THRESHOLD,
                scores=scores,
                description="the return at which gymnasium counts the environment as solved",
                source=f"gymnasium {gym.__version__} registry: EnvSpec.reward_threshold",
            )
        ]

    def scorer(self) -> Scorer | None:
        """None: runs are scored raw (module docstring)."""
        return None
