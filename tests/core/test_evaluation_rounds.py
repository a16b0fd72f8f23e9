"""Evaluation rounds (``EvaluationSchedule``) on the toy suite: quotas in frames and in episodes,
per task of a joint unit, the exploration epsilon, and a round that is not replayed once done."""

from __future__ import annotations

import numpy as np
import pytest

from benchgen.results.store import ResultsStore, Unit
from benchgen.run.evaluation.rounds import EvaluationRounds
from benchgen.run.execution.recorder import EpisodeRecorder
from benchgen.suite import EvaluationSchedule
from tests.fixture_plugins.toy_suite import ToyVectorEnv

TASKS = ["count-20", "count-50"]
ENV_TASKS = ["count-20", "count-50", "count-20", "count-50"]


class SteadyPolicy:
    """Always action 1: a toy episode then never ends by 'game_over' (three 0s in a row)."""

    def act(self, observations, greedy=True):
        return np.ones(len(observations), dtype=np.int64)


@pytest.fixture
def unit_store(tmp_path):
    store = ResultsStore(tmp_path / "results.sqlite")
    unit = Unit("joint-s0", 0, "joint", TASKS, 0, 1_000)
    store.add_units([unit])
    yield unit, store
    store.close()


def _play(unit, store, schedule, frames_done=1_000, saves=None):
    recorder = EpisodeRecorder(ToyVectorEnv(ENV_TASKS, seed=0), store, unit, frames_done=frames_done)
    rounds = EvaluationRounds(schedule, unit, recorder, ENV_TASKS, seed=0)
    saves = saves if saves is not None else []
    rounds.play_due(
        SteadyPolicy(), lambda tasks, seed: ToyVectorEnv(tasks, seed), lambda env: env, lambda: saves.append(1)
    )
    return [e for e in store.episodes() if e["phase"] == "joint_eval"]


def test_a_frame_quota_counts_the_episodes_started_while_it_was_open_per_task(unit_store):
    unit, store = unit_store
    episodes = _play(unit, store, EvaluationSchedule(frames=200))
    by_task = {t: [e for e in episodes if e["task"] == t] for t in TASKS}
    # count-20 episodes last 80 frames: two sub-envs x 2 episodes pass 200 frames; count-50's last
    # 200 frames: its two first episodes started while the quota was open, none after
    assert [len(by_task[t]) for t in TASKS] == [4, 2]
    assert all(e["end_reason"] == "time_limit" for e in episodes)  # every counted episode played to its end
    assert {e["frames_total"] for e in episodes} == {1_000}  # the training counter, not advanced
    assert store.unit(unit.unit_id).frames_done == 1_000
    assert {e["extras"]["eval_round"] for e in episodes} == {1}


def test_an_episode_quota_is_exact_and_a_finished_round_is_not_played_again(unit_store):
    unit, store = unit_store
    saves = []
    episodes = _play(unit, store, EvaluationSchedule(episodes=5), saves=saves)
    assert sorted(e["task"] for e in episodes) == ["count-20"] * 5 + ["count-50"] * 5
    assert saves == [1]  # the agent was saved before the round
    again = _play(unit, store, EvaluationSchedule(episodes=5), saves=saves)
    assert len(again) == 10 and saves == [1]  # done rounds are read back from the store


def test_epsilon_replaces_the_policy_with_random_actions(unit_store):
    unit, store = unit_store
    episodes = _play(unit, store, EvaluationSchedule(episodes=6, epsilon=1.0))
    # uniformly random actions play three 0s in a row well within 20 steps, which the steady policy never does
    assert any(e["end_reason"] == "game_over" for e in episodes)


def test_rounds_fall_at_the_interval_and_after_training():
    schedule = EvaluationSchedule(episodes=1, interval_frames=400)
    assert schedule.points(1_000) == [400, 800, 1_000]
    assert schedule.points(800) == [400, 800]
    assert EvaluationSchedule(frames=10).points(1_000) == [1_000]
    with pytest.raises(ValueError, match="exactly one"):
        EvaluationSchedule(episodes=1, frames=1)
