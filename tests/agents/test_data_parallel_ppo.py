"""Data-parallel joint PPO (Nichol et al. 2018, section 4.5): workers average their gradients at
every step, so after every update all of them hold the same weights, and the update is the one a
single process takes on the workers' batches put together, at the same learning rate. Checked
on a scripted suite, on the Sonic suite's code with the bundled Airstriker ROM and on Atari
games, with 2 and 4 workers (Ray actors on this machine, torch.distributed over gloo); and a
worker killed mid-run is replaced from the last synchronized state."""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest
import torch

from benchgen.agent import AgentEnvironment
from benchgen.remote import EpisodeInbox
from benchgen_agents.data_parallel.engine import DataParallelGroup, RoundPlan
from benchgen_agents.ppo.agent import PPOAgent
from benchgen_agents.ppo.config import PPOConfig
from benchgen_agents.ppo.data_parallel import PPOWorkerProgram
from benchgen_agents.ppo.vec_env import BenchgenVecEnv
from tests.agents.agent_harness import fresh_ppo_state
from tests.fixture_plugins.suite_factory import SuiteFactory

ray = pytest.importorskip("ray")


CASES = {
    "chain": (["chain-8", "chain-12"], "MlpPolicy", 16),
    "airstriker": (None, "CnnPolicy", 8),
    "atari_saber": (["pong", "breakout"], "CnnPolicy", 8),
}


def _setup(suite: str, workers: int, envs: int = 2):
    tasks, policy, n_steps = CASES[suite]
    inbox = EpisodeInbox()
    if tasks is None:
        from tests.sonic.airstriker_plugin import LEVELS

        tasks = [LEVELS[0].task, LEVELS[1].task]
    factory = SuiteFactory(inbox.key, suite, tasks)
    env, _ = factory(1, seed=0)
    environment = AgentEnvironment(env.single_observation_space, env.single_action_space, 4)
    env.close()
    config = PPOConfig(
        policy=policy,
        n_steps=n_steps,
        batch_size=n_steps * envs,  # one minibatch per epoch: a worker's whole rollout
        n_epochs=2,
        learning_rate=3e-3,
        lr_schedule="constant",
        clip_schedule="constant",
        normalize_advantage=False,  # per-worker statistics would differ from the batch's (see module)
        features_dim=64,
        device="cpu",
        workers=workers,
        worker_cpus=0.25,
    )
    return inbox, factory, environment, config


def _single_process_update(config, environment, start_state, batches: list[dict], env_for_spaces):
    """The update one process takes from ``start_state`` on the workers' rollouts concatenated."""
    from stable_baselines3 import PPO
    from stable_baselines3.common.logger import Logger

    agent = PPOAgent(config, environment)
    total = sum(b["actions"].shape[0] * b["actions"].shape[1] for b in batches)
    model = PPO(
        agent.policy,
        env_for_spaces,
        n_steps=total,
        batch_size=total,
        policy_kwargs=agent._policy_kwargs(),
        device="cpu",
        **{k: v for k, v in agent._hyperparameters().items() if k not in ("n_steps", "batch_size")},
    )
    model.policy.load_state_dict(start_state["policy"])
    model.policy.optimizer.load_state_dict(start_state["optimizer"])
    buffer = model.rollout_buffer
    for name in ("observations", "actions", "values", "log_probs", "advantages", "returns"):
        joined = np.concatenate([b[name].reshape(-1, 1, *b[name].shape[2:]) for b in batches])
        getattr(buffer, name)[...] = joined.reshape(getattr(buffer, name).shape)
    buffer.full, buffer.generator_ready = True, False
    model._current_progress_remaining = 1.0
    model.set_logger(Logger(folder=None, output_formats=[]))
    model.train()
    return model.policy.state_dict()


def _assert_same(a: dict, b: dict, atol: float = 0.0):
    assert a.keys() == b.keys()
    for key in a:
        if atol:
            torch.testing.assert_close(a[key], b[key], atol=atol, rtol=1e-4, msg=key)
        else:
            assert torch.equal(a[key], b[key]), key


# The averaging is one code path for any number of workers: more workers than the CI machine's 2
# cores on the cheapest suite, and each image suite (stable-retro's, ale-py's) with 2 workers.
@pytest.mark.parametrize(("suite", "workers"), [("chain", 4), ("airstriker", 2), ("atari_saber", 2)])
def test_workers_average_gradients_like_one_process_on_the_joined_batch(local_ray, suite, workers):
    inbox, factory, environment, config = _setup(suite, workers, envs=1 if suite != "chain" else 2)
    envs = 1 if suite != "chain" else 2
    start = fresh_ppo_state(config, environment)
    group = DataParallelGroup(
        local_ray,
        factory,
        PPOWorkerProgram(config, environment, PPOAgent),
        workers=workers,
        envs_per_worker=envs,
        unit_seed=0,
        worker_cpus=config.worker_cpus,
    )
    group.start(start, steps_done=0)
    try:
        state = start
        for _ in range(2):  # two updates: the second starts from the first's (averaged) Adam state
            plan = RoundPlan(config.n_steps, True, 0, 10**9)
            result = group.play_round(plan)
            states = ray.get([a.state.remote() for a in group.actors])
            for other in states[1:]:  # every worker took the same step
                _assert_same(states[0]["policy"], other["policy"])
            _assert_same(states[0]["policy"], result.state["policy"])
            batches = ray.get([a.last_batch.remote() for a in group.actors])
            assert len({b["observations"].tobytes() for b in batches}) == workers  # each its own data
            env, _ = factory(1, seed=0)
            try:
                expected = _single_process_update(config, environment, state, batches, BenchgenVecEnv(env))
            finally:
                env.close()
            _assert_same(expected, result.state["policy"], atol=2e-5)
            assert result.state["n_updates"] == state["n_updates"] + config.n_epochs
            for report in result.reports:
                inbox.open(report)  # genuine, in order
            assert sum(r.frames for r in result.reports) == workers * envs * config.n_steps * 4
            state = result.state
    finally:
        group.stop()


def test_a_killed_worker_is_replaced_from_the_last_synchronized_state(local_ray):
    inbox, factory, environment, config = _setup("chain", workers=2)
    group = DataParallelGroup(
        local_ray,
        factory,
        PPOWorkerProgram(config, environment, PPOAgent),
        workers=2,
        envs_per_worker=2,
        unit_seed=0,
        worker_cpus=config.worker_cpus,
    )
    group.start(fresh_ppo_state(config, environment), steps_done=0)
    try:
        first = group.play_round(RoundPlan(config.n_steps, True, 0, 10**9))
        os.kill(group.pids[1], signal.SIGKILL)
        second = group.play_round(RoundPlan(config.n_steps, True, 64, 10**9))
        assert group.restarts == 1
        # the round was played again by a new group, from the first round's state: one update more
        assert second.state["n_updates"] == first.state["n_updates"] + config.n_epochs
        states = ray.get([a.state.remote() for a in group.actors])
        _assert_same(states[0]["policy"], states[1]["policy"])
        frames = 0
        for report in first.reports + second.reports:  # the new workers' reports open in order too
            ends, used = inbox.open(report)
            frames += used
        assert frames == 2 * 2 * 2 * config.n_steps * 4  # two rounds, nothing of the failed one
    finally:
        group.stop()
