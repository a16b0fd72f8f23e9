"""Environments in other processes (benchgen.remote): any agent, not only Ape-X, can play the
unit's environment elsewhere and have its episodes recorded under the unit, numbered with the
others, its frames counted exactly; a report of a score the suite did not produce is refused."""

from __future__ import annotations

import pickle
import sqlite3

import numpy as np
import pytest

from benchgen.remote import EpisodeInbox, RemoteEpisodes
from tests.conftest import run_cli
from tests.fixture_plugins.remote_agent import FORGED_SCORE, doctored
from tests.fixture_plugins.vector_suite import ChainEnvFactory

PLUGINS = "tests.fixture_plugins.vector_suite,tests.fixture_plugins.remote_agent"


def played(inbox: EpisodeInbox, steps: int, worker: int = 0, num_envs: int = 2):
    """A collector of ``inbox``'s factory (sent through pickle, as to another process) after
    ``steps`` vector steps of chain-8 with actions 1 (reward 1) and 0 (reward 0.2)."""
    factory = pickle.loads(pickle.dumps(ChainEnvFactory(inbox.key, "chain-8")))
    env, collector = factory(num_envs, seed=0, worker=worker)
    env.reset(seed=0)
    for _ in range(steps):
        env.step(np.arange(num_envs) % 2)
    return collector


def test_a_report_carries_the_suites_facts_and_exact_frames():
    inbox = EpisodeInbox()
    collector = played(inbox, steps=20, worker=1)
    report = pickle.loads(pickle.dumps(collector.report()))
    ends, frames = inbox.open(report)
    assert frames == report.frames == 20 * 2 * 4
    # chain-8 ends after 8 steps: 2 episodes per sub-environment, scores 1.6 (action 0) and 8 (action 1)
    assert sorted((e.env_index, round(e.score, 6), e.length_frames) for e in ends) == [
        (2, 1.6, 32),
        (2, 1.6, 32),
        (3, 8.0, 32),
        (3, 8.0, 32),
    ]  # env_index = worker * num_envs + i
    assert inbox.open(collector.report()) == ([], 0)  # nothing new since: an empty report, in order


@pytest.mark.parametrize("forge", ["score", "invent", "again"])
def test_a_doctored_report_is_refused(forge):
    inbox = EpisodeInbox()
    report = played(inbox, steps=10).report()
    inbox.open(report)
    with pytest.raises(RuntimeError, match="refused"):
        inbox.open(doctored(report, forge))


def test_reports_of_another_unit_or_out_of_order_are_refused():
    mine, other = EpisodeInbox(), EpisodeInbox()
    with pytest.raises(RuntimeError, match="no collector of this unit"):
        mine.open(played(other, steps=10).report())
    collector = played(mine, steps=10)
    first, second = collector.report(), collector.report()
    with pytest.raises(RuntimeError, match="next report is 0"):
        mine.open(second)
    mine.open(first)
    mine.open(second)
    with pytest.raises(RuntimeError, match="no collector of this unit"):
        mine.open(RemoteEpisodes(first.payload.decode(), first.seal))  # not even bytes


def test_changing_the_copies_a_report_shows_changes_nothing():
    inbox = EpisodeInbox()
    report = played(inbox, steps=10).report()
    report.episodes[0].score = FORGED_SCORE
    ends, _ = inbox.open(report)
    assert FORGED_SCORE not in [e.score for e in ends]


def test_a_remote_env_refuses_a_reset_mid_episode_as_the_recorder_does():
    env, _ = ChainEnvFactory(EpisodeInbox().key)(1, seed=0)
    env.reset(seed=0)
    env.step(np.array([1]))
    with pytest.raises(RuntimeError, match="mid-episode"):
        env.reset()


def _episodes(out):
    db = sqlite3.connect(out / "results.sqlite")
    units = db.execute("select unit_id, status, frames_done from units").fetchall()
    rows = db.execute(
        "select unit_id, env_index, episode, frames_total, length_frames, score from episodes order by episode"
    ).fetchall()
    return units, rows


def _run_remote(out, *settings: str):
    """``benchgen run chain remote_random`` for 4000 frames on two sub-environments, with ``settings``."""
    sets = [arg for setting in settings for arg in ("--set", setting)]
    return run_cli(
        "run",
        "chain",
        "remote_random",
        "--tasks",
        "chain-8",
        "--frames",
        "4000",
        "--num-envs",
        "2",
        *sets,
        "--out",
        out,
        "--no-progress",
        plugins=PLUGINS,
        timeout=300,
    )


def test_any_agent_can_play_in_other_processes(tmp_path):
    """A random agent whose two spawned worker processes play everything (no Ray)."""
    out = tmp_path / "run"
    result = _run_remote(out, "workers=2", "chunk_steps=10")
    assert result.returncode == 0, result.stderr[-3000:]
    units, rows = _episodes(out)
    assert len(units) == 1 and units[0][1:] == ("done", 4000)  # every remote frame counted, exactly the budget
    assert {r[0] for r in rows} == {units[0][0]}
    assert {r[1] for r in rows} == {0, 1, 2, 3}  # both workers' sub-environments
    assert [r[2] for r in rows] == list(range(len(rows))) and len(rows) > 100  # one contiguous numbering
    assert all(a[3] <= b[3] for a, b in zip(rows, rows[1:])) and rows[-1][3] <= 4000
    assert sum(r[4] for r in rows) <= 4000
    assert all(0 <= r[5] <= r[4] / 4 for r in rows)  # at most reward 1 per step of 4 frames: the suite's scores


def test_a_forged_score_stops_the_run_and_is_not_recorded(tmp_path):
    out = tmp_path / "run"
    result = _run_remote(out, "workers=1", "forge=score")
    assert result.returncode != 0 and "refused a remote episode report" in result.stderr
    units, rows = _episodes(out)
    assert rows and FORGED_SCORE not in [r[5] for r in rows]  # the real report before it was recorded
    assert [r[2] for r in rows] == list(range(len(rows)))
    assert units[0][2] == 10 * 2 * 4  # the frames of that one real report
