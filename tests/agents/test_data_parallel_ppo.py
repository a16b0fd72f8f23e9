"""Data-parallel joint PPO (Nichol et al. 2018, section 4.5): workers average their gradients at
every step, so after every update all of them hold the same weights, and the update is the one a
single process takes on the workers' batches put together, at the same learning rate. Checked
on a scripted suite, on the Sonic suite's code with the bundled Airstriker ROM and on Atari
games, with 2 and 4 workers (Ray actors on this machine, torch.distributed over gloo); and a
worker killed mid-run is replaced from the last synchronized state."""

from __future__ import annotations

import copy
import os
import signal
from types import SimpleNamespace

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


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False, _node_ip_address="127.0.0.1")
    yield ray
    ray.shutdown()


def _setup(suite: str, workers: int, envs: int = 2):
    tasks, policy, n_steps = CASES[suite]
    inbox = EpisodeInbox()
    if tasks is None:
        from tests.sonic.airstriker_plugin import LEVELS

        tasks = [LEVELS[0].task, LEVELS[1].task]
    factory = SuiteFactory(inbox.key, suite, tasks)
    env, _ = factory(1, seed=0)
    environment = AgentEnvironment(env.single_observation_space, env.single_action_space, 4)
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
    return inbox, factory, environment, config, env  # env: one process's, open (the caller closes it)


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


#: the run whose group, after its two checked updates, loses a worker (the killed-worker test reads
#: it): a group of 2 restarts faster than one of 4, and a fresh group is what the test pays for
KILLED = ("airstriker", 2)


def play(ray, suite: str, workers: int) -> SimpleNamespace:
    """A group of ``workers`` on ``suite`` takes two updates; records each one's start state,
    result, every worker's state and last batch. The :data:`KILLED` run's group then loses rank 1
    (SIGKILL) and plays a third round; records that round, the group's restarts and the new
    workers' states (or the error, raised by the test that reads it). The run's episode reports
    are left unopened (``inbox``): each test opens them with its own copy, once and in order."""
    envs = 1 if suite != "chain" else 2
    inbox, factory, environment, config, env = _setup(suite, workers, envs=envs)
    run = SimpleNamespace(
        inbox=inbox, factory=factory, environment=environment, config=config, env=env, envs=envs, rounds=[]
    )
    try:
        _play_rounds(ray, run, suite, workers)
    except BaseException:
        env.close()
        raise
    return run


def _play_rounds(ray, run: SimpleNamespace, suite: str, workers: int) -> None:
    config, environment, envs = run.config, run.environment, run.envs
    start = fresh_ppo_state(config, environment)
    group = DataParallelGroup(
        ray,
        run.factory,
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
            result = group.play_round(RoundPlan(config.n_steps, True, 0, 10**9))
            states = ray.get([a.state.remote() for a in group.actors])
            batches = ray.get([a.last_batch.remote() for a in group.actors])
            run.rounds.append(SimpleNamespace(start=state, result=result, states=states, batches=batches))
            state = result.state
        if (suite, workers) == KILLED:
            try:
                os.kill(group.pids[1], signal.SIGKILL)
                steps_done = 2 * workers * envs * config.n_steps
                run.after_kill = group.play_round(RoundPlan(config.n_steps, True, steps_done, 10**9))
                run.restarts = group.restarts
                run.states_after_kill = ray.get([a.state.remote() for a in group.actors])
            except Exception as exc:  # the killed-worker test's failure, not the averaging test's
                run.kill_error = exc
    finally:
        group.stop()


@pytest.fixture(scope="module")
def played(local_ray):
    """``played(suite, workers)``: :func:`play`, run once per case for the tests that read it (a
    group's start, its workers' processes importing torch, is most of these tests' time)."""
    runs: dict[tuple[str, int], SimpleNamespace] = {}

    def get(suite: str, workers: int) -> SimpleNamespace:
        if (suite, workers) not in runs:
            runs[suite, workers] = play(local_ray, suite, workers)
        return runs[suite, workers]

    yield get
    for run in runs.values():
        run.env.close()


# The averaging is one code path for any number of workers: more workers than the CI machine's 2
# cores on the cheapest suite, and each image suite (stable-retro's, ale-py's) with 2 workers.
@pytest.mark.parametrize(("suite", "workers"), [("chain", 4), ("airstriker", 2), ("atari_saber", 2)])
def test_workers_average_gradients_like_one_process_on_the_joined_batch(played, suite, workers):
    run = played(suite, workers)
    config, environment, envs = run.config, run.environment, run.envs
    inbox = copy.deepcopy(run.inbox)  # unopened
    assert len(run.rounds) == 2
    for r in run.rounds:  # two updates: the second starts from the first's (averaged) Adam state
        for other in r.states[1:]:  # every worker took the same step
            _assert_same(r.states[0]["policy"], other["policy"])
        _assert_same(r.states[0]["policy"], r.result.state["policy"])
        assert len({b["observations"].tobytes() for b in r.batches}) == workers  # each its own data
        expected = _single_process_update(config, environment, r.start, r.batches, BenchgenVecEnv(run.env))
        _assert_same(expected, r.result.state["policy"], atol=2e-5)
        assert r.result.state["n_updates"] == r.start["n_updates"] + config.n_epochs
        for report in r.result.reports:
            inbox.open(report)  # genuine, in order
        assert sum(rep.frames for rep in r.result.reports) == workers * envs * config.n_steps * 4


def test_a_killed_worker_is_replaced_from_the_last_synchronized_state(played):
    run = played(*KILLED)
    if hasattr(run, "kill_error"):
        raise run.kill_error
    config, (_suite, workers), envs = run.config, KILLED, run.envs
    first, second = run.rounds[-1].result, run.after_kill
    assert run.restarts == 1
    # the round was played again by a new group, from the last round's state: one update more
    assert second.state["n_updates"] == first.state["n_updates"] + config.n_epochs
    for other in run.states_after_kill[1:]:
        _assert_same(run.states_after_kill[0]["policy"], other["policy"])
    inbox = copy.deepcopy(run.inbox)  # unopened
    frames = 0
    for report in [rep for r in run.rounds for rep in r.result.reports] + second.reports:
        ends, used = inbox.open(report)  # the new workers' reports open in order too
        frames += used
    assert frames == 3 * workers * envs * config.n_steps * 4  # three rounds, nothing of the failed one
