"""The replay memory: frames stored once, stacks rebuilt within episodes, n-step returns across
episode ends, per-environment streams, ring overwrites, importance weights, bytes per transition."""

from __future__ import annotations

import numpy as np
import pytest

from benchgen.errors import UsageError
from benchgen_agents.value_based.replay import PRIORITY_EPS, PrioritizedReplay
from tests.agents.value_based.replay_sim import ScriptedStreams, decode

GAMMA = 0.9


def make_replay(capacity, num_envs, n_step=3, stack=4, clip=0.0, omega=0.5):
    return PrioritizedReplay(capacity, num_envs, (stack, 2, 2), np.uint8, stack, n_step, GAMMA, omega, clip)


def valid_indices(replay):
    return np.flatnonzero(replay.tree.get(np.arange(replay.slots)) > 0)


def check_against_script(replay, sim, n_step):
    """Every sampleable transition rebuilds the env's observations, returns and discounts."""
    indices = valid_indices(replay)
    batch = replay.transitions(indices)
    for row, obs in enumerate(batch["obs"]):
        env, episode, t = sim.by_id[decode(obs[-1])]
        ret, discount, nxt, ready = sim.expected((env, episode), t, n_step, GAMMA)
        assert ready, f"step {t} of episode {(env, episode)} is sampleable before its n-step future exists"
        assert indices[row] // replay.stream_capacity == env, "transition stored in another env's stream"
        np.testing.assert_array_equal(obs, sim.episodes[(env, episode)][t].obs)
        np.testing.assert_array_equal(batch["next_obs"][row], nxt)
        assert batch["returns"][row] == pytest.approx(ret, rel=1e-5, abs=1e-5)
        assert batch["discounts"][row] == pytest.approx(discount, rel=1e-6)
    return indices, batch


@pytest.mark.parametrize("pad", ["zeros", "repeat"])
def test_stacks_rebuilt_at_episode_boundaries_and_n_step_targets(pad):
    # Two envs with different episode lengths (1-step episodes included), both end kinds.
    schedules = [
        [(4, "term"), (2, "trunc"), (1, "term"), (6, "trunc"), (3, "term")],
        [(1, "trunc"), (7, "term"), (2, "term")],
    ]
    replay = make_replay(1000, 2)
    sim = ScriptedStreams(schedules, pad=pad)
    sim.run(replay)
    indices, batch = check_against_script(replay, sim, 3)
    # every ready transition of the script is sampleable (nothing was overwritten)
    expected = sum(sim.expected(key, t, 3, GAMMA)[3] for key, steps in sim.episodes.items() for t in range(len(steps)))
    assert len(indices) == expected == replay.num_valid


def test_n_step_returns_cut_at_termination_and_bootstrap_after_truncation():
    # One env: a 4-step episode that terminates, a 2-step one truncated by a time limit, then a
    # 1-step episode that terminates (it must not leak into the truncated episode's targets).
    replay = PrioritizedReplay(100, 1, (1,), np.float32, 1, 3, 0.5, 0.5, reward_clip=0.0)
    obs = lambda v: np.array([[float(v)]], np.float32)  # noqa: E731
    replay.start_episode(0, obs(0)[0])
    script = [
        (0, 1.0, False, False),
        (1, 2.0, False, False),
        (2, 3.0, False, False),
        (3, 4.0, True, False),
        (10, 10.0, False, False),
        (11, 20.0, False, True),
        (20, 5.0, True, False),
    ]
    for value, reward, term, trunc in script:
        final = [obs({3: 99, 11: 12, 20: 21}[value])[0]] if term or trunc else None
        nxt = obs({3: 10, 11: 20, 20: 30}.get(value, value + 1))
        replay.add(obs(value), np.array([0]), np.array([reward]), np.array([term]), np.array([trunc]), nxt, final)
    batch = replay.transitions(valid_indices(replay))
    rows = zip(batch["obs"], batch["returns"], batch["discounts"], batch["next_obs"])
    got = {float(o[0]): (float(r), float(d), float(n[0])) for o, r, d, n in rows}
    assert got == {
        0.0: (1 + 0.5 * 2 + 0.25 * 3, 0.125, 3.0),  # three steps, bootstraps from s_3
        1.0: (2 + 0.5 * 3 + 0.25 * 4, 0.0, 99.0),  # the window ends on the terminal step: no bootstrap
        2.0: (3 + 0.5 * 4, 0.0, 99.0),
        3.0: (4.0, 0.0, 99.0),
        10.0: (10 + 0.5 * 20, 0.25, 12.0),  # truncated: bootstrap from the final observation
        11.0: (20.0, 0.5, 12.0),
        20.0: (5.0, 0.0, 21.0),
    }


def test_rewards_clipped_for_learning_only():
    replay = PrioritizedReplay(100, 1, (1,), np.float32, 1, 1, 0.5, 0.5, reward_clip=1.0)
    replay.start_episode(0, np.zeros(1, np.float32))
    replay.add(
        np.zeros((1, 1), np.float32),
        np.array([0]),
        np.array([-7.5]),
        np.array([True]),
        np.array([False]),
        np.zeros((1, 1), np.float32),
        [np.ones(1, np.float32)],
    )
    assert replay.rewards[0] == -7.5  # stored raw
    assert replay.transitions(valid_indices(replay))["returns"][0] == -1.0


def test_ring_overwrite_never_yields_a_corrupted_stack():
    # 37 slots per stream, ~700 steps: the ring wraps dozens of times; checked after every step.
    rng = np.random.default_rng(1)
    schedules = [[(int(rng.integers(1, 12)), rng.choice(["term", "trunc"])) for _ in range(120)] for _ in range(2)]
    replay = make_replay(74, 2)
    sim = ScriptedStreams(schedules, pad="zeros")
    sizes = []
    sim.run(replay, after_step=lambda: sizes.append(len(check_against_script(replay, sim, 3)[0])))
    assert replay.num_valid == sizes[-1]
    assert np.mean(sizes[len(sizes) // 2 :]) > 74 / 3  # the memory stays mostly usable
    assert replay.num_added == sum(len(s) for s in sim.episodes.values())


def test_observations_that_are_not_a_frame_stack_are_refused():
    replay = make_replay(100, 1)
    first = np.arange(16, dtype=np.uint8).reshape(4, 2, 2)
    replay.start_episode(0, first)

    def step(o, nxt):
        replay.add(o[None], np.array([0]), np.array([0.0]), np.array([False]), np.array([False]), nxt[None])

    unrelated = np.full((4, 2, 2), 200, np.uint8)
    step(first, unrelated)
    with pytest.raises(UsageError, match="frame_stack"):
        step(unrelated, unrelated)


def test_bytes_per_transition_for_atari_frames():
    replay = PrioritizedReplay(100_000, 1, (4, 84, 84), np.uint8, 4, 3, 0.99, 0.2)
    assert replay.frames.shape[1:] == (1, 84, 84)  # each frame once, no stacked or next-state copies
    per_slot = replay.nbytes / replay.slots
    assert per_slot <= 1.1 * 7056, per_slot
    assert PrioritizedReplay.estimate_bytes(100_000, (4, 84, 84), np.uint8, 4) == replay.nbytes


def test_importance_weights_follow_priorities():
    replay = PrioritizedReplay(100, 1, (1,), np.float32, 1, 1, 0.9, priority_exponent=0.5, reward_clip=0.0)
    replay.start_episode(0, np.zeros(1, np.float32))
    for v in range(4):
        done = np.array([v == 3])
        replay.add(
            np.full((1, 1), v, np.float32),
            np.array([0]),
            np.array([1.0]),
            done,
            np.array([False]),
            np.zeros((1, 1), np.float32),
            [np.zeros(1, np.float32)] if v == 3 else None,
        )
    idx = valid_indices(replay)
    assert len(idx) == 4 and replay.num_valid == 4
    losses = np.array([0.0, 1.0, 4.0, 9.0])
    replay.update_priorities(idx, losses)
    p = (losses + PRIORITY_EPS) ** 0.5
    probs = p / p.sum()
    rng = np.random.default_rng(0)
    counts = np.zeros(4)
    for _ in range(2000):
        batch = replay.sample(8, beta=0.4, rng=rng)
        pos = np.searchsorted(idx, batch["indices"])
        w = (4 * probs[pos]) ** -0.4
        np.testing.assert_allclose(batch["weights"], w / w.max(), rtol=1e-5)
        counts += np.bincount(pos, minlength=4)
    np.testing.assert_allclose(counts / counts.sum(), probs, atol=0.01)
    assert replay.max_priority == pytest.approx(max(1.0, p.max()))


def test_capacity_too_small_for_the_envs_is_a_usage_error():
    with pytest.raises(UsageError, match="per environment"):
        make_replay(40, 8)


def test_save_and_load_round_trip(tmp_path):
    sim = ScriptedStreams([[(3, "term"), (5, "trunc")], [(9, "term")]])
    replay = make_replay(200, 2)
    sim.run(replay)
    replay.save(tmp_path)
    again = make_replay(200, 2)
    again.load(tmp_path)
    for name in ("frames", "actions", "rewards", "flags", "pos", "ep_len", "in_episode"):
        np.testing.assert_array_equal(getattr(again, name), getattr(replay, name))
    np.testing.assert_array_equal(again.tree.nodes, replay.tree.nodes)
    assert (again.num_valid, again.num_added, again.max_priority) == (
        replay.num_valid,
        replay.num_added,
        replay.max_priority,
    )
    with pytest.raises(UsageError, match="another shape"):
        make_replay(200, 1).load(tmp_path)
