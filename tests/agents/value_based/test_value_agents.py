"""DQN and Rainbow as agents (Rainbow-IQN's are in tests/agents/rainbow_iqn/): uniformly random
actions and no update until learning starts, then the policy; DQN's epsilon schedule and
epsilon-greedy rate; save / load round trips; a checkpoint of the other agent is refused."""

from __future__ import annotations

import shutil

import gymnasium as gym
import numpy as np
import pytest
import torch

from benchgen.errors import UsageError
from benchgen_agents import dqn, rainbow
from tests.agents.agent_harness import Context, CountingEnv, environment_of
from tests.fixture_plugins.vector_suite import ChainVectorEnv

ACTIONS = 18  # Atari's full action set
POLICY_ACTION = 7  # what the (patched) greedy policy always picks
NUM_ENVS = 2
SAME_STEP = {"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}

AGENTS = {"dqn": (dqn.DQNConfig, dqn.make_agent), "rainbow": (rainbow.RainbowConfig, rainbow.make_agent)}


class RecordingEnv(CountingEnv):
    """Also keeps every batch of actions, and the agent steps done when each was taken."""

    def __init__(self, env, steps_done=0):
        super().__init__(env, steps_done)
        self.actions: list[list[int]] = []

    def step(self, actions):
        self.actions.append(np.asarray(actions).tolist())
        return super().step(actions)


def chain18(steps_done=0) -> RecordingEnv:
    """Two chain-8 sub-environments with 18 actions (the suite's 4 frames per step)."""
    return RecordingEnv(ChainVectorEnv(["chain-8"] * NUM_ENVS, 0, num_actions=ACTIONS), steps_done)


def cartpole(steps_done=0) -> RecordingEnv:
    return RecordingEnv(
        gym.make_vec("CartPole-v1", NUM_ENVS, vectorization_mode="sync", vector_kwargs=SAME_STEP), steps_done
    )


def tiny(name: str, **overrides):
    """Small nets, short schedules, one CPU thread."""
    base = dict(
        hidden_size=32,
        mlp_hidden_size=32,
        replay_capacity=4000,
        frames_per_step=4,
        target_update_frames=400,
        batch_size=16,
        device="cpu",
        torch_threads=1,
        log_every_updates=10,
    )
    if name == "rainbow":
        base.update(num_atoms=11)
    return AGENTS[name][0](**{**base, **overrides})


def build(name: str, cfg, env):
    return AGENTS[name][1](cfg, environment_of(env))


def patch_policy(agent) -> list[int]:
    """Replace the greedy policy with a constant action; returns the list of batch sizes asked."""
    calls: list[int] = []

    def policy(obs):
        calls.append(len(obs))
        return np.full(len(obs), POLICY_ACTION)

    agent.greedy_actions = policy
    return calls


def record_updates(agent) -> list[int]:
    """Agent steps taken when each update ran."""
    at: list[int] = []
    update = agent.update

    def recording(beta):
        at.append(agent.counters["agent_steps"])
        return update(beta)

    agent.update = recording
    return at


def assert_uniform(actions: np.ndarray) -> None:
    counts = np.bincount(actions, minlength=ACTIONS)
    expected = len(actions) / ACTIONS
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    # 17 degrees of freedom: P(chi2 > 45) < 1e-3; and every action well represented
    assert len(counts) == ACTIONS and chi2 < 45 and counts.min() >= 0.6 * expected, counts


# -- random warm-up -------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["dqn", "rainbow"])
def test_uniform_over_all_actions_and_no_update_until_learning_starts_then_the_policy(name):
    warmup = 1800  # agent steps: 100 per action expected
    budget = warmup + 200
    extra = dict(epsilon_start=0.0, epsilon_end=0.0) if name == "dqn" else {}  # DQN: greedy after warm-up
    env = chain18()
    agent = build(name, tiny(name, learning_starts_frames=4 * warmup, **extra), env)
    calls = patch_policy(agent)
    updates_at = record_updates(agent)
    agent.learn(env, Context(env, budget, seed=5))

    actions = np.array(env.actions)  # (vector steps, sub-environments)
    random_part, after = actions[: warmup // NUM_ENVS].ravel(), actions[warmup // NUM_ENVS :].ravel()
    assert_uniform(random_part)
    assert np.all(after == POLICY_ACTION)  # the policy acts from the first step after the warm-up
    assert sum(calls) == len(after) == budget - warmup  # and is never asked during it
    # No update before the memory holds learning_starts transitions: update credit accrues from the
    # vector step that fills it (agent steps 1800, the warm-up's last) at 2 per vector step, one update
    # per 4: the first at 1802, then every other vector step up to 2000: (2000 - 1800 + 2) // 4 = 50.
    assert updates_at[0] == warmup + NUM_ENVS
    assert len(updates_at) == agent.counters["updates"] == (budget - warmup + NUM_ENVS) // 4 == 50


# -- DQN's epsilon --------------------------------------------------------------------------------
def test_updates_come_in_bursts_of_updates_per_period():
    """stable-baselines3's train_freq / gradient_steps (the RL Zoo's tuned classic-control DQN):
    ``updates_per_period`` updates one after another every ``update_period_steps`` agent steps."""
    warmup, budget = 400, 600
    env = chain18()
    cfg = tiny("dqn", learning_starts_frames=4 * warmup, update_period_steps=8, updates_per_period=3)
    agent = build("dqn", cfg, env)
    updates_at = record_updates(agent)
    agent.learn(env, Context(env, budget, seed=5))
    bursts = (budget - warmup + NUM_ENVS) // 8  # credit from the vector step that fills the memory
    assert len(updates_at) == agent.counters["updates"] == 3 * bursts == 75
    assert all(updates_at.count(step) == 3 for step in set(updates_at))  # three at the same step
    assert sorted(set(updates_at))[:2] == [warmup + 6, warmup + 14]
    with pytest.raises(UsageError, match="updates_per_period is for the single-process agent"):
        rainbow.RainbowConfig(workers=2, updates_per_period=2)


def test_the_target_is_copied_every_target_interval_agent_steps_and_holds_through_a_burst():
    """stable-baselines3's DQN counts ``target_update_interval`` in environment steps (``_on_step``)
    and takes its ``gradient_steps`` after collecting, so every update of a burst bootstraps from
    the online net as it was before the burst; the RL Zoo's CartPole-v1 (a copy every 10 steps, 128
    updates every 256) relies on it. Here: a copy every 6 agent steps, bursts of 3 every 8."""
    warmup, budget = 400, 600
    env = chain18()
    cfg = tiny(
        "dqn", learning_starts_frames=4 * warmup, update_period_steps=8, updates_per_period=3, target_update_frames=24
    )
    agent = build("dqn", cfg, env)
    seen: list[tuple[int, torch.Tensor, torch.Tensor]] = []  # (agent steps, online, target) before each update
    update = agent.update

    def recording(beta):
        flat = [torch.nn.utils.parameters_to_vector(n.parameters()).clone() for n in (agent.online, agent.target)]
        seen.append((agent.counters["agent_steps"], *flat))
        return update(beta)

    agent.update = recording
    agent.learn(env, Context(env, budget, seed=5))

    assert agent.counters["target_syncs"] == budget // 6  # agent steps, not updates (75 of them)
    bursts = sorted({step for step, _, _ in seen})
    assert len(seen) == 3 * len(bursts) == 75
    for k, step in enumerate(bursts):
        burst = [(online, target) for at, online, target in seen if at == step]
        assert all(torch.equal(target, burst[0][1]) for _, target in burst)  # fixed through the burst
        assert not torch.equal(burst[-1][0], burst[0][0])  # while the online net learns
        if k:  # a copy came between bursts (8 steps apart): the target is the online net before this one
            assert torch.equal(burst[0][1], burst[0][0])


def test_dqn_epsilon_is_start_until_learning_starts_then_linear_to_end_then_constant():
    # 4 frames per step: learning starts at 400 / 4 = 100 agent steps, decays over 800 / 4 = 200
    agent = build(
        "dqn",
        tiny(
            "dqn",
            learning_starts_frames=400,
            epsilon_start=1.0,
            epsilon_end=0.1,
            epsilon_decay_frames=800,
        ),
        chain18(),
    )
    expected = {
        0: 1.0,
        99: 1.0,
        100: 1.0,  # learning starts: the decay begins
        150: 1.0 - 0.9 * 50 / 200,  # 0.775
        200: 1.0 - 0.9 * 100 / 200,  # 0.55
        250: 1.0 - 0.9 * 150 / 200,  # 0.325
        300: 0.1,  # 100 + 200: the end value
        301: 0.1,
        10_000: 0.1,
    }
    for steps, epsilon in expected.items():
        agent.counters["agent_steps"] = steps
        assert agent.epsilon() == pytest.approx(epsilon), steps


def test_dqn_epsilon_greedy_picks_uniformly_random_actions_at_rate_epsilon():
    agent = build("dqn", tiny("dqn", learning_starts_frames=400, epsilon_decay_frames=800), chain18())
    patch_policy(agent)
    agent.counters["agent_steps"] = 200  # epsilon = 0.55 (above)
    actions = np.concatenate([agent.explore_actions(np.zeros((2000, 5), np.float32)) for _ in range(10)])
    # epsilon of the actions are uniform over all 18 (the policy's among them): the policy's action
    # is replaced with probability 0.55 * 17 / 18 = 0.5194; over 20000 actions, sd 0.0035
    others = np.bincount(actions, minlength=ACTIONS)
    others[POLICY_ACTION] = 0
    assert abs(others.sum() / len(actions) - 0.55 * 17 / 18) < 0.015
    expected = others.sum() / 17  # the 17 other actions equally often: chi2 with 16 dof, P(> 40) < 1e-3
    assert float((np.delete(others - expected, POLICY_ACTION) ** 2 / expected).sum()) < 40, others


def test_dqn_explores_at_the_scheduled_rate_while_learning():
    # learning starts after 400 agent steps, epsilon 1 -> 0.1 over the next 800, then stays 0.1
    cfg = tiny("dqn", learning_starts_frames=4 * 400, epsilon_decay_frames=4 * 800, update_period_steps=8)
    env = chain18()
    agent = build("dqn", cfg, env)
    patch_policy(agent)
    agent.learn(env, Context(env, 2000, seed=1))
    actions = np.array(env.actions)  # vector step k is taken at 2k agent steps

    def rate(first, last):  # fraction of actions that are not the policy's, agent steps [first, last)
        part = actions[first // NUM_ENVS : last // NUM_ENVS].ravel()
        return float(np.mean(part != POLICY_ACTION))

    assert rate(0, 400) == pytest.approx(17 / 18, abs=0.04)  # warm-up: uniform
    # mean epsilon over [400, 800) = (1 + 0.55) / 2 = 0.775; over [800, 1200) = (0.55 + 0.1) / 2 = 0.325;
    # times 17 / 18 (a random action is the policy's 1 time in 18); sd about 0.023 over 400 actions
    assert rate(400, 800) == pytest.approx(0.775 * 17 / 18, abs=0.08)
    assert rate(800, 1200) == pytest.approx(0.325 * 17 / 18, abs=0.08)
    assert rate(1200, 2000) == pytest.approx(0.1 * 17 / 18, abs=0.035)  # sd 0.01 over 800
    assert agent.epsilon() == 0.1


@pytest.mark.parametrize("name", ["dqn", "rainbow"])
def test_an_agent_on_the_cpu_flushes_denormal_floats_unless_told_not_to(name):
    """Adam's moments of a dead unit decay into denormals, which Intel CPUs compute tens of times
    slower: an agent built on the CPU has torch flush them to zero (its default), or not."""
    denormal = torch.tensor([1e-39], dtype=torch.float32)  # below float32's smallest normal, 1.2e-38
    try:
        build(name, tiny(name, learning_starts_frames=400), chain18())
        assert (denormal * 1.0).item() == 0.0
        build(name, tiny(name, learning_starts_frames=400, flush_denormals=False), chain18())
        assert (denormal * 1.0).item() == pytest.approx(1e-39, rel=1e-3)
    finally:
        torch.set_flush_denormal(False)  # torch's own default, for the tests after this one


# -- save / load ----------------------------------------------------------------------------------
def cartpole_config(name: str, **overrides):
    return tiny(
        name,
        frames_per_step=1,
        learning_starts_frames=64,
        target_update_frames=50,
        update_period_steps=2,
        save_replay=True,
        **overrides,
    )


@torch.no_grad()
def greedy_outputs(agent, obs: np.ndarray) -> torch.Tensor:
    agent.online.set_noise(False)
    try:
        return agent.online(torch.from_numpy(obs))
    finally:
        agent.online.set_noise(True)


@pytest.mark.parametrize("name", ["dqn", "rainbow"])
def test_save_load_round_trip_acts_and_updates_identically(name, tmp_path):
    cfg = cartpole_config(name)
    env = cartpole()
    first = build(name, cfg, env)
    first.learn(env, Context(env, 300, seed=3))
    assert first.counters["updates"] > 100
    first.save(tmp_path)

    obs = np.random.default_rng(0).normal(size=(64, 4)).astype(np.float32)
    second = build(name, cfg, cartpole())
    assert not torch.equal(greedy_outputs(second, obs), greedy_outputs(first, obs))  # not yet loaded
    second.load(tmp_path)
    assert torch.equal(greedy_outputs(second, obs), greedy_outputs(first, obs))
    assert np.array_equal(second.act(obs), first.act(obs))
    assert second.counters == first.counters

    # the next update samples the same batch with the same noise: the same loss and new weights
    loss_a, loss_b = first.update(0.5), second.update(0.5)
    assert loss_a == loss_b and np.isfinite(loss_a[0])
    for a, b in zip(first.online.state_dict().values(), second.online.state_dict().values()):
        assert torch.equal(a, b)

    # and learning continues identically (DQN: epsilon-greedy from the same schedule and generator)
    runs = []
    for agent in (first, second):
        env = cartpole(steps_done=300)
        agent.learn(env, Context(env, 500, seed=3))
        runs.append((env.actions, dict(agent.counters), greedy_outputs(agent, obs)))
    assert runs[0][0] == runs[1][0] and runs[0][1] == runs[1][1]
    assert torch.equal(runs[0][2], runs[1][2])


def test_a_checkpoint_written_on_a_gpu_loads_on_the_cpu(tmp_path):
    """A GPU run's checkpoint holds a CUDA generator's state (16 bytes: seed and offset), which a
    CPU generator cannot take: the CPU agent loads the weights and seeds its generator from that
    state, the same way at every load. A state of neither layout is still refused."""
    from benchgen_agents.value_based.agent import CUDA_GENERATOR_STATE_BYTES

    cfg = cartpole_config("rainbow")
    env = cartpole()
    first = build("rainbow", cfg, env)
    first.learn(env, Context(env, 300, seed=3))
    first.save(tmp_path)
    path = tmp_path / first.checkpoint_file
    ckpt = torch.load(path, weights_only=True)
    ckpt["generator"] = torch.arange(CUDA_GENERATOR_STATE_BYTES, dtype=torch.uint8)  # as torch.cuda saves it
    torch.save(ckpt, path)

    obs = np.random.default_rng(0).normal(size=(64, 4)).astype(np.float32)
    loaded = [build("rainbow", cfg, cartpole()) for _ in range(2)]
    for agent in loaded:
        agent.load(tmp_path)
        assert torch.equal(greedy_outputs(agent, obs), greedy_outputs(first, obs))
    assert torch.equal(torch.rand(4, generator=loaded[0].generator), torch.rand(4, generator=loaded[1].generator))

    ckpt["generator"] = torch.zeros(20, dtype=torch.uint8)
    torch.save(ckpt, path)
    with pytest.raises(UsageError, match="cannot be used here"):
        build("rainbow", cfg, cartpole()).load(tmp_path)


def test_a_rainbow_checkpoint_is_refused_by_dqn_in_one_line(tmp_path):
    env = cartpole()
    trained = build("rainbow", cartpole_config("rainbow"), env)
    trained.learn(env, Context(env, 100, seed=0))
    trained.save(tmp_path / "rainbow")

    agent = build("dqn", cartpole_config("dqn"), cartpole())
    with pytest.raises(UsageError) as refused:
        agent.load(tmp_path / "rainbow")
    assert "no dqn checkpoint" in str(refused.value) and "\n" not in str(refused.value)

    # the same files under DQN's names: the networks do not fit, refused in one line too
    renamed = tmp_path / "renamed"
    renamed.mkdir()
    shutil.copy(tmp_path / "rainbow" / "rainbow.pt", renamed / "dqn.pt")
    shutil.copy(tmp_path / "rainbow" / "rainbow.json", renamed / "dqn.json")
    with pytest.raises(UsageError) as refused:
        agent.load(renamed)
    message = str(refused.value)
    assert "dqn checkpoint" in message and "cannot be used here" in message and "\n" not in message
