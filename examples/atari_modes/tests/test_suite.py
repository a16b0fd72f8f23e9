"""What is particular to atari_modes: the task list is ale-py's, the flavor and the emulator
settings really are applied, episodes are recorded by the protocol, scores are normalized."""

from __future__ import annotations

import csv
import math
from importlib import resources

import numpy as np
import pytest

from benchgen.errors import UsageError
from benchgen.testing import checks
from benchgen_atari_modes import SUITE, catalogue, env
from benchgen_atari_modes.suite import game_references, random_scores


def _ale_flavors(game):
    import ale_py
    from ale_py import roms

    ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)
    ale = ale_py.ALEInterface()
    ale.loadROM(str(roms.get_rom_path(game)))
    return list(ale.getAvailableModes()), list(ale.getAvailableDifficulties())


def test_tasks_are_what_ale_py_reports():
    expected = []
    for game in catalogue.GAMES:
        modes, difficulties = _ale_flavors(game)
        assert len(modes) * len(difficulties) > 1, f"{game} has a single flavor"
        expected += [f"{game}:m{m}d{d}" for m in modes for d in difficulties]
    assert SUITE.tasks() == expected
    for task in expected:
        assert catalogue.parse_task(task).task == task


def test_flavors_split_trains_on_defaults_and_tests_on_the_rest():
    by_name = {s.name: s for s in SUITE.splits()}
    flavors = by_name["flavors"]
    assert flavors.train == tuple(f"{g}:m0d0" for g in catalogue.GAMES)
    assert set(flavors.train).isdisjoint(flavors.test)
    assert set(flavors.train) | set(flavors.test) == set(SUITE.tasks())
    for game in catalogue.GAMES:
        one = by_name[f"flavors_{game}"]
        assert one.train == (f"{game}:m0d0",) and all(t.startswith(game + ":") for t in one.test)


def test_flavor_and_emulator_settings_reach_the_emulator():
    """Each game's default and last flavor: the mode, difficulty, sticky actions, frame skip and
    action set the protocol names are the ones the emulator runs with."""
    for game in catalogue.GAMES:
        flavors = [f for f in catalogue.flavors() if f.game == game]
        tasks = [catalogue.default_flavor(game).task, flavors[-1].task]
        vec = env.AtariModesVectorEnv(tasks, seed=0)
        try:
            obs, info = vec.reset(seed=1)
            assert obs.shape == (2, 4, 84, 84) and obs.dtype == np.uint8 and info == {}
            vec.step(np.zeros(2, dtype=np.int64))
            for sub, task in zip(vec._vec.envs, tasks):
                flavor = catalogue.parse_task(task)
                ale_env = sub.unwrapped
                assert (ale_env._game_mode, ale_env._game_difficulty) == (flavor.mode, flavor.difficulty)
                assert ale_env.ale.getFloat("repeat_action_probability") == pytest.approx(0.25)
                assert ale_env._frameskip == 1 and ale_env.action_space.n == 18
        finally:
            vec.close()


@pytest.mark.slow
def test_every_flavor_passes_the_gymnasium_checker():
    """The kit's gymnasium check on all 85 tasks (about 3 minutes): `pytest -m slow`."""
    for task in SUITE.tasks():
        checks.check_gymnasium_env_checker(SUITE, task)


def test_flavors_change_the_game():
    """Pong's difficulty switch changes the paddle: the same seeded, same-action play differs."""

    def play(task):
        vec = env.AtariModesVectorEnv([task], seed=0)
        vec.reset(seed=0)
        total = [vec.step(np.array([a % 18]))[0] for a in range(200)]
        vec.close()
        return np.stack(total)

    assert not np.array_equal(play("pong:m0d0"), play("pong:m0d3"))


def test_episode_cap_ends_with_max_length_and_frames_count_skipped_frames():
    vec = env.AtariModesVectorEnv(["pong:m0d0", "pong:m1d1"], seed=3, max_episode_frames=400)
    try:
        vec.reset()
        ends = []
        for _ in range(100):
            obs, rew, term, trunc, info = vec.step(np.array([0, 0]))
            ends += vec.pop_episode_ends()
            assert "lives" not in info and "episode_frame_number" not in info
        assert trunc.all() and not term.any() and "final_obs" in info
        assert [(e.env_index, e.end_reason, e.length_frames) for e in ends] == [
            (0, "max_length", 400),
            (1, "max_length", 400),
        ]
    finally:
        vec.close()


def test_make_env_rejects_unknown_tasks_with_the_standard_error():
    with pytest.raises(UsageError, match="did you mean 'breakout:m0d0'"):
        SUITE.make_env(["breakout:m0d0x"], 0)


def test_protocol_names_the_emulator_settings():
    proto = SUITE.protocol()
    assert proto["sticky_action_probability"] == 0.25 and proto["max_episode_frames"] == 108_000
    assert proto["frames_per_step"] == SUITE.frames_per_step == 4 and proto["life_loss_signal"] is False


def test_random_scores_cover_every_task_and_were_measured():
    path = resources.files("benchgen_atari_modes").joinpath("data", "random_scores.csv")
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["task"] for r in rows] == SUITE.tasks()
    assert all(int(r["episodes"]) >= 1 and int(r["frames_per_seed"]) >= 100_000 for r in rows)
    scores = random_scores()
    # sanity against the SABER table's default-game random scores
    assert scores["pong:m0d0"] == pytest.approx(-20.3, abs=1.0)
    assert scores["breakout:m0d0"] == pytest.approx(1.5, abs=1.0)
    assert scores["freeway:m0d0"] == pytest.approx(0.0, abs=0.5)


def test_scores_normalize_against_the_flavor_random_score_and_the_game_reference():
    s = SUITE.scorer()
    wr = game_references()["world_record"].scores
    task = "breakout:m4d1"
    r = s.random_scores[task]
    assert wr[task] == 864.0
    out = s.score({task: r + (864.0 - r) / 2, "breakout:m0d0": s.random_scores["breakout:m0d0"]})
    assert out["per_task"][task] == pytest.approx(0.5)
    assert out["by_flavor"]["default"]["median"] == pytest.approx(0.0)
    assert out["by_flavor"]["other"]["median"] == pytest.approx(0.5)
    human = s.score({task: 30.5}, baseline="human")
    assert human["baseline"] == "human" and human["per_task"][task] == pytest.approx((30.5 - r) / abs(30.5 - r))
    assert math.isinf(s.score({task: math.inf})["per_task"][task])
