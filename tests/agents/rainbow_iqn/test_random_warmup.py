"""Uniformly random actions until learning starts (SABER's code and Dopamine), counted in the
unit's steps: over all 18 actions of an Atari-sized action space, then the agent's policy only;
a unit resumed during its warm-up finishes it, one resumed past it never repeats it. And
``actor_priorities``: initial priorities from each new transition's own loss."""

from __future__ import annotations

import numpy as np
import pytest

from benchgen_agents.rainbow_iqn import make_agent
from tests.agents.agent_harness import Context, environment_of
from tests.agents.rainbow_iqn.test_rainbow_agent import RecordingEnv, cartpole, tiny_config
from tests.fixture_plugins.vector_suite import ChainVectorEnv

ACTIONS = 18  # Atari's full action set
POLICY_ACTION = 7  # what the agent's (patched) policy always picks
WARMUP = 1800  # agent steps: 100 per action expected
NUM_ENVS = 2


def chain18(steps_done: int = 0) -> RecordingEnv:
    """Two chain-8 sub-environments with 18 actions (4 frames per step), recording actions."""
    return RecordingEnv(ChainVectorEnv(["chain-8"] * NUM_ENVS, 0, num_actions=ACTIONS), steps_done)


def config(**overrides):
    base = dict(frames_per_step=4, learning_starts_frames=4 * WARMUP, replay_capacity=4000, target_update_frames=400)
    return tiny_config(**{**base, **overrides})


def agent_with_counted_policy(cfg=None):
    """An agent whose policy (the noisy argmax) is replaced by a constant action, counting calls."""
    agent = make_agent(cfg or config(), environment_of(chain18()))
    calls = []

    def policy(obs):
        calls.append(len(obs))
        return np.full(len(obs), POLICY_ACTION)

    agent.greedy_actions = policy
    return agent, calls


def assert_uniform(actions: np.ndarray) -> None:
    counts = np.bincount(actions, minlength=ACTIONS)
    expected = len(actions) / ACTIONS
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    # 17 degrees of freedom: P(chi2 > 45) < 1e-3; every action well represented
    assert len(counts) == ACTIONS and chi2 < 45 and counts.min() >= 0.6 * expected, counts


def test_random_over_all_actions_until_learning_starts_then_the_policy():
    agent, calls = agent_with_counted_policy()
    env = chain18()
    budget = WARMUP + 200
    agent.learn(env, Context(env, budget, seed=3))
    actions = np.array(env.actions)  # (vector steps, sub-environments)
    random_part, after = actions[: WARMUP // NUM_ENVS].ravel(), actions[WARMUP // NUM_ENVS :].ravel()
    assert_uniform(random_part)
    assert np.all(after == POLICY_ACTION)  # from the first step after the warm-up on, the policy acts
    assert sum(calls) == len(after) == budget - WARMUP  # and it is not asked during the warm-up
    # learning starts with the step that fills the memory to learning_starts: the warm-up's last
    first_paid = WARMUP - NUM_ENVS
    assert agent.counters["updates"] == (budget - first_paid) // agent.config.update_period_steps


def test_warmup_actions_come_from_the_units_seed():
    runs = []
    for seed in (3, 3, 4):
        agent, _ = agent_with_counted_policy()
        env = chain18()
        agent.learn(env, Context(env, 200, seed=seed))
        runs.append(env.actions)
    assert runs[0] == runs[1] and runs[0] != runs[2]


def test_a_resumed_unit_finishes_its_warmup_and_never_repeats_it(tmp_path):
    first, _ = agent_with_counted_policy()
    env = chain18()
    first.learn(env, Context(env, 1000, seed=1))  # stopped (checkpointed) during the warm-up
    first.save(tmp_path / "during")

    during, calls = agent_with_counted_policy()
    during.load(tmp_path / "during")  # no saved memory: it refills
    env = chain18(steps_done=1000)
    during.learn(env, Context(env, WARMUP + 400, seed=1))
    actions = np.array(env.actions)
    random_vector_steps = (WARMUP - 1000) // NUM_ENVS  # the rest of the unit's warm-up, no more
    assert np.all(actions[random_vector_steps:] == POLICY_ACTION)
    assert len(np.unique(actions[:random_vector_steps])) == ACTIONS
    assert sum(calls) == NUM_ENVS * (len(actions) - random_vector_steps)
    assert during.counters["updates"] == 0  # its memory held only 400 steps: no learning yet
    during.save(tmp_path / "refilling")

    # resumed past the warm-up: the policy acts from the first step, although the memory is
    # empty again and learning waits for it to refill
    refilling, calls = agent_with_counted_policy()
    refilling.load(tmp_path / "refilling")
    env = chain18(steps_done=WARMUP + 400)
    refilling.learn(env, Context(env, WARMUP + 600, seed=1))
    assert np.all(np.array(env.actions) == POLICY_ACTION) and sum(calls) == 200
    assert refilling.counters["updates"] == 0


def test_an_agent_that_has_learned_does_not_warm_up_again(tmp_path):
    """A unit resumed after learning started, or a fine-tuning unit started (at 0 steps) from a
    trained checkpoint: the policy acts from the first step."""
    trained, _ = agent_with_counted_policy(config(learning_starts_frames=400))
    env = chain18()
    trained.learn(env, Context(env, 300, seed=2))
    assert trained.counters["updates"] > 0
    trained.save(tmp_path)
    for steps_done in (300, 0):  # resumed, fine-tuned
        again, calls = agent_with_counted_policy(config(learning_starts_frames=400))
        again.load(tmp_path)
        env = chain18(steps_done=steps_done)
        again.learn(env, Context(env, steps_done + 100, seed=2))
        assert np.all(np.array(env.actions) == POLICY_ACTION) and sum(calls) == 100


def live_priorities(agent) -> np.ndarray:
    priorities = agent.replay.tree.get(np.arange(agent.replay.slots))
    return priorities[priorities > 0]


@pytest.mark.parametrize("actor_priorities", [False, True])
def test_actor_priorities_give_new_transitions_their_own_loss(actor_priorities):
    agent = make_agent(config(actor_priorities=actor_priorities), environment_of(chain18()))
    env = chain18()
    agent.learn(env, Context(env, 600, seed=0))  # no update yet: every priority is an initial one
    assert agent.counters["updates"] == 0
    live = live_priorities(agent)
    assert len(live) > 500
    if actor_priorities:
        assert len(np.unique(live)) > 100 and not np.any(live == 1.0)  # losses, none the max priority
    else:
        assert np.all(live == 1.0)  # PER, Rainbow: the largest priority seen (1 before any loss)


def test_actor_priorities_are_computed_before_any_update_samples():
    agent = make_agent(config(actor_priorities=True, learning_starts_frames=400), environment_of(chain18()))
    waiting = []  # completed transitions still without their own priority, at each update
    update = agent.update

    def counting_update(beta):
        waiting.append(sum(len(part) for part in agent._pending))
        return update(beta)

    agent.update = counting_update
    env = chain18()
    agent.learn(env, Context(env, 300, seed=0))
    assert agent.counters["updates"] > 50 and set(waiting) == {0}
    assert agent._pending == []  # the last ones were computed when learn returned


def test_actor_priorities_resume_exactly(tmp_path):
    cfg = tiny_config(save_replay=True, actor_priorities=True)
    first = make_agent(cfg, environment_of(cartpole()))
    env = cartpole()
    first.learn(env, Context(env, 300, seed=3))
    first._pending.append(np.array([5, 6]))  # as if saved between two priority computations
    first.save(tmp_path)
    env_a = cartpole(steps_done=300)
    first.learn(env_a, Context(env_a, 500, seed=3))
    second = make_agent(cfg, environment_of(cartpole()))
    second.load(tmp_path)
    assert [p.tolist() for p in second._pending] == [[5, 6]]
    env_b = cartpole(steps_done=300)
    second.learn(env_b, Context(env_b, 500, seed=3))
    assert env_a.actions == env_b.actions and first.counters == second.counters
    np.testing.assert_array_equal(first.replay.tree.nodes, second.replay.tree.nodes)
