"""The episode recorder: what it commits, and the mid-episode reset it refuses."""

from __future__ import annotations

import numpy as np
import pytest

from benchgen.results.store import ResultsStore, Unit
from benchgen.run.execution.recorder import EpisodeRecorder
from tests.fixture_plugins.toy_suite import ToyVectorEnv


@pytest.fixture
def recorder(tmp_path):
    store = ResultsStore(tmp_path / "results.sqlite")
    unit = Unit("train-count-5-s0", 0, "train", ["count-5"], 0, 10_000)
    store.add_units([unit])
    rec = EpisodeRecorder(ToyVectorEnv(["count-5", "count-5"], seed=0), store, unit)
    yield rec, store
    store.close()


def test_episodes_are_committed_as_they_finish(recorder):
    rec, store = recorder
    rec.reset(seed=0)
    for _ in range(5):  # count-5: both sub-environments finish on the 5th step at the latest
        rec.step(np.array([1, 1]))
    episodes = list(store.episodes())
    assert len(episodes) >= 2 and {e["task"] for e in episodes} == {"count-5"}
    assert rec.frames_done == 5 * 2 * 4 and store.unit("train-count-5-s0").frames_done == rec.frames_done


def test_a_reset_mid_episode_is_refused(recorder):
    rec, store = recorder
    rec.reset(seed=0)
    rec.step(np.array([1, 1]))
    with pytest.raises(RuntimeError, match=r"mid-episode.*reset once, before the first step"):
        rec.reset()


def test_a_reset_between_episodes_is_allowed(recorder):
    rec, _ = recorder
    rec.reset(seed=0)
    for _ in range(5):  # truncated by the 5-step limit on the same step (no action 0 played)
        rec.step(np.array([1, 1]))
    rec.reset()  # nothing is running: no episode is lost
