"""The episode bookkeeping every suite env shares (``benchgen.episodes.EpisodeBook``, issue 28
item 6): raw returns and lengths per sub-environment, episodes handed out once."""

from __future__ import annotations

import math

import numpy as np

from benchgen.episodes import EpisodeBook


def test_returns_and_lengths_are_counted_per_sub_environment():
    book = EpisodeBook(["a", "b"], frames_per_step=4)
    book.add(np.array([1.0, 10.0]))
    book.add(np.array([2.0, -3.0]))
    end = book.end(1, "game_over", extras={"x": 3})
    assert (end.env_index, end.task, end.score, end.length_frames, end.end_reason) == (1, "b", 7.0, 8, "game_over")
    assert end.extras == {"x": 3}
    book.add(np.array([4.0, 5.0]))
    first = book.end(0, "time_limit")
    assert (first.score, first.length_frames) == (7.0, 12)
    # the ended sub-environment started afresh: one step, 5 points so far
    assert book.steps.tolist() == [0, 1] and book.returns.tolist() == [0.0, 5.0]
    assert [e.task for e in book.pop()] == ["b", "a"]
    assert book.pop() == []


def test_a_suite_may_record_its_own_score_and_length():
    book = EpisodeBook(["a"], frames_per_step=4)
    book.add(np.array([3.0]))
    end = book.end(0, "max_length", score=math.inf, length_frames=7, events=[{"type": "rollover"}])
    assert math.isinf(end.score) and end.length_frames == 7 and end.events == [{"type": "rollover"}]


def test_a_reset_abandons_running_episodes_and_a_restart_keeps_finished_ones():
    book = EpisodeBook(["a", "b"], frames_per_step=2)
    book.add(np.array([1.0, 1.0]))
    book.end(0, "game_over")
    book.add(np.array([1.0, 1.0]))
    book.restart(np.array([False, True]))  # a partial reset: b's running episode is not recorded
    assert book.steps.tolist() == [1, 0]
    assert [e.env_index for e in book.pop()] == [0]
    book.add(np.array([1.0, 1.0]))
    book.end(1, "game_over")
    book.reset()  # a full reset: nothing running or unpopped survives
    assert book.pop() == [] and book.steps.tolist() == [0, 0] and book.returns.tolist() == [0.0, 0.0]
