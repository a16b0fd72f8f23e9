"""Joint Rainbow as Algorithm 2 of Nichol et al. 2018: data-parallel workers, each with its own
replay and environments, all-reduce their gradients at every update, so they hold the same
weights, and an update equals the single-process update on their batches put together. Checked
with 2 and 4 workers on a scripted suite and the Sonic code path (Airstriker), plus a killed
worker and a `benchgen run rainbow_joint --set workers=2` end to end."""

from __future__ import annotations

import os
import signal
import sqlite3

import pytest
import torch

from benchgen.agent import AgentEnvironment
from benchgen.remote import EpisodeInbox
from benchgen_agents.data_parallel.engine import DataParallelGroup, RoundPlan
from benchgen_agents.rainbow.config import RainbowConfig
from benchgen_agents.rainbow.data_parallel import adopt, learner_state
from tests.conftest import run_cli
from tests.fixture_plugins.suite_factory import QuietRainbowProgram, SuiteFactory

ray = pytest.importorskip("ray")


def _setup(suite: str, workers: int):
    if suite == "chain":
        tasks, extra = ["chain-8", "chain-12"], {"frame_stack": 1, "mlp_hidden_size": 32}
    else:
        from tests.sonic.airstriker_plugin import LEVELS

        tasks, extra = [LEVELS[0].task, LEVELS[1].task], {}
    inbox = EpisodeInbox()
    factory = SuiteFactory(inbox.key, suite, tasks)
    env, _ = factory(1, seed=0)
    environment = AgentEnvironment(env.single_observation_space, env.single_action_space, 4)
    env.close()
    config = RainbowConfig(
        hidden_size=32,
        num_atoms=11,
        replay_capacity=2_000,
        learning_starts_frames=64,
        target_update_frames=10**6,
        batch_size=16,
        max_grad_norm=10.0,
        learning_rate=1e-3,
        device="cpu",
        torch_threads=1,
        workers=workers,
        envs_per_worker=2,
        worker_cpus=0.25,
        **extra,
    )
    return inbox, factory, environment, config


def _weights(state):
    """The online network's weights (its noise buffers, eps_*, are each worker's own samples)."""
    return [(k, v) for k, v in state["online"].items() if ".eps_" not in k]


def _fresh(config, environment):
    from benchgen_agents.rainbow.agent import RainbowAgent

    agent = RainbowAgent(config, environment)
    agent._build(seed=0)
    agent.online.set_noise(False)  # as QuietRainbowProgram's workers
    agent.target.set_noise(False)
    return agent


# One code path for any number of workers (as for PPO): more workers than the CI machine's 2 cores
# on the cheapest suite, the image suite with 2.
@pytest.mark.parametrize(("suite", "workers"), [("chain", 4), ("airstriker", 2)])
def test_algorithm_2_workers_average_gradients_like_one_process(local_ray, suite, workers):
    inbox, factory, environment, config = _setup(suite, workers)
    reference = _fresh(config, environment)
    group = DataParallelGroup(
        local_ray,
        factory,
        QuietRainbowProgram(config, environment),
        workers=workers,
        envs_per_worker=2,
        unit_seed=0,
        worker_cpus=config.worker_cpus,
    )
    group.start(learner_state(reference), steps_done=0)
    try:
        warm = group.play_round(RoundPlan(20, False, 0, 10**6))  # fill the replays, no update
        assert warm.state["counters"]["updates"] == 0
        for report in warm.reports:
            inbox.open(report)
        steps = 20 * 2 * workers
        for _ in range(2):  # single updates: the second starts from the first's averaged Adam state
            adopt(reference, warm.state)
            result = group.play_round(RoundPlan(1, True, steps, 10**6))
            steps += 2 * workers
            states = ray.get([a.state.remote() for a in group.actors])
            for other in states[1:]:
                for key, value in _weights(states[0]):
                    assert torch.equal(value, other["online"][key]), key
            batches = ray.get([a.last_batch.remote() for a in group.actors])
            assert len({b["indices"].tobytes() + b["obs"].tobytes() for b in batches}) == workers  # own replays
            # one process, the workers' batches joined: mean over all of weights x per-sample loss
            losses = [reference.sample_losses(b)[0] * torch.as_tensor(b["weights"]) for b in batches]
            reference.optimizer.zero_grad(set_to_none=True)
            torch.cat(losses).mean().backward()
            torch.nn.utils.clip_grad_norm_(reference.online.parameters(), config.max_grad_norm)
            reference.optimizer.step()
            for key, value in _weights({"online": reference.online.state_dict()}):
                torch.testing.assert_close(result.state["online"][key], value, atol=1e-5, rtol=1e-4, msg=key)
            assert result.state["counters"]["updates"] == 1 + warm.state["counters"]["updates"]
            for report in result.reports:
                inbox.open(report)  # genuine, in order
            warm = result
    finally:
        group.stop()


def test_a_killed_worker_is_replaced_and_the_group_goes_on(local_ray):
    inbox, factory, environment, config = _setup("chain", 2)
    group = DataParallelGroup(
        local_ray,
        factory,
        QuietRainbowProgram(config, environment),
        workers=2,
        envs_per_worker=2,
        unit_seed=0,
        worker_cpus=config.worker_cpus,
    )
    group.start(learner_state(_fresh(config, environment)), steps_done=0)
    try:
        first = group.play_round(RoundPlan(30, True, 0, 10**6))
        assert first.state["counters"]["updates"] > 0
        os.kill(group.pids[0], signal.SIGKILL)
        second = group.play_round(RoundPlan(30, True, 120, 10**6))
        assert group.restarts == 1
        # the new group started from the first round's state, its replays empty: they refill first
        updates = second.state["counters"]["updates"] - first.state["counters"]["updates"]
        assert 0 <= updates < 30
        states = ray.get([a.state.remote() for a in group.actors])
        for key, value in _weights(states[0]):
            assert torch.equal(value, states[1]["online"][key]), key
    finally:
        group.stop()


def test_rainbow_joint_with_two_workers_end_to_end(tmp_path, local_ray):
    out = tmp_path / "run"
    proc = run_cli(  # in this process: the unit's workers join the shared Ray instance
        "run", "chain", "rainbow_joint", "--split", "all", "--frames", "4000",
        "--set", "workers=2", "--set", "worker_cpus=0.5", "--set", "envs_per_worker=2",
        "--set", "round_steps=50", "--set", "frame_stack=1", "--set", "hidden_size=32",
        "--set", "num_atoms=11", "--set", "replay_capacity=2000", "--set", "learning_starts_frames=128",
        "--set", "batch_size=16", "--set", "zeroshot_episodes=1", "--no-progress", "--out", str(out),
        plugins="tests.fixture_plugins.vector_suite",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "2 data-parallel workers" in proc.stderr and "draws a new task at every episode" in proc.stderr
    conn = sqlite3.connect(out / "results.sqlite")
    units = {
        r[0]: r[1:] for r in conn.execute("SELECT unit_id, phase, status, frames_done, last_checkpoint FROM units")
    }
    rows = conn.execute("SELECT task, episode, env_index FROM episodes WHERE phase = 'joint' ORDER BY id").fetchall()
    conn.close()
    joint = units["joint-all-s0"]
    assert joint[1:3] == ("done", 4000)
    assert {r[0] for r in rows} == {"chain-8", "chain-12", "chain-20"}  # joint environments, every task
    assert {r[2] for r in rows} == {0, 1, 2, 3}  # 2 workers x 2 environments
    for task in {r[0] for r in rows}:
        numbers = [r[1] for r in rows if r[0] == task]
        assert numbers == list(range(len(numbers)))
    assert (out / joint[3] / "rainbow.pt").is_file()
    assert all(u[1] == "done" for u in units.values())  # zero-shot units loaded its checkpoint
