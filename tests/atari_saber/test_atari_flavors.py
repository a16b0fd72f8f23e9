"""Game modes and difficulties ("flavors", Machado et al. 2018 section 5) in the atari_saber suite.

Real ROMs throughout: the flavor backend is checked frame for frame against ale-py's native
vector env, each flavor task against its own game, and the CLI end to end.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3

import numpy as np
import pytest
from ale_py import ALEInterface, roms
from ale_py.vector_env import AtariVectorEnv
from gymnasium.spaces import Discrete

import benchgen_atari_saber
from benchgen.errors import UsageError
from benchgen.testing import build_registry, checks
from benchgen_atari_saber import flavors, tables
from benchgen_atari_saber.env import SaberVectorEnv, ale_settings, env_seeds
from benchgen_atari_saber.flavor_backend import FlavorVectorEnv
from benchgen_atari_saber.protocols import ALE2013, DQN2015, SABER
from benchgen_atari_saber.scoring import AtariScorer
from benchgen_atari_saber.suite import AtariSaberSuite
from tests.conftest import assert_usage_error, run_cli

SUITE = AtariSaberSuite()
#: SABER with a deterministic emulator, the setting the brief asks to compare under
DETERMINISTIC = dataclasses.replace(SABER, sticky_action_probability=0.0)


def _twins(task: str, protocol, cap: int, seeds) -> tuple[AtariVectorEnv, FlavorVectorEnv]:
    """The native env and the flavor backend with the same settings, reset with ``seeds``."""
    settings = ale_settings(protocol, cap)
    game = flavors.parse_task(task).game
    native = AtariVectorEnv(game, len(seeds), num_threads=1, **settings)
    ours = FlavorVectorEnv(task, len(seeds), **settings)
    return native, ours


# --- (a) the flavor backend is the native env, at the default flavor ---------------------------


@pytest.mark.parametrize(
    ("protocol", "cap"),
    [
        (DETERMINISTIC, DETERMINISTIC.max_episode_frames),  # sticky 0, no-op 0: the brief's case
        (SABER, 1_002),  # sticky 0.25 per frame, and a cap that cuts a step after 2 of its 4 frames
        (dataclasses.replace(ALE2013, full_action_space=False), 503),  # frame skip 5, minimal set
    ],
    ids=["deterministic", "sticky-cap", "skip5-minimal"],
)
def test_default_flavor_is_frame_for_frame_the_native_env(protocol, cap):
    """Bit-identical observations (the same ALE palette and OpenCV ``INTER_AREA`` resize as ale-py's
    C++ code), rewards, terminated/truncated, lives, frame counters and ``final_obs`` over 700
    steps of Breakout with game overs, cap truncations and a seeded partial reset."""
    seeds = np.array([3, 4, 5])
    native, ours = _twins("breakout:m0d0", protocol, cap, seeds)
    assert ours.ale.get_action_set() == list(native.ale.get_action_set())
    (n_obs, n_info), (o_obs, o_info) = native.reset(seed=seeds), ours.reset(seed=seeds)
    assert np.array_equal(n_obs, o_obs) and np.array_equal(n_info["lives"], o_info["lives"])
    rng = np.random.default_rng(0)
    ends = truncations = 0
    for step in range(700):
        if step == 350:  # ale-py's partial reset with new seeds
            mask = np.array([True, False, True])
            n_obs, n_info = native.reset(seed=np.array([8, 9]), options={"reset_mask": mask})
            o_obs, o_info = ours.reset(seed=np.array([8, 9]), options={"reset_mask": mask})
            assert np.array_equal(n_obs, o_obs) and np.array_equal(n_info["lives"], o_info["lives"])
        actions = rng.integers(0, len(native.ale.get_action_set()), size=3)
        native.send(actions)
        ours.send(actions)
        n_obs, n_rew, n_term, n_trunc, n_info = native.recv()
        o_obs, o_rew, o_term, o_trunc, o_info = ours.recv()
        assert np.array_equal(n_obs, o_obs), step
        assert np.array_equal(n_rew, o_rew) and np.array_equal(n_term, o_term) and np.array_equal(n_trunc, o_trunc)
        for key in ("lives", "episode_frame_number", "frame_number"):
            assert np.array_equal(n_info[key], o_info[key]), (step, key)
        done = n_term | n_trunc
        assert ("final_obs" in n_info) == ("final_obs" in o_info) == bool(done.any())
        if done.any():
            assert np.array_equal(n_info["final_obs"][done], o_info["final_obs"][done]), step
            ends += int(done.sum())
            truncations += int(n_trunc.sum())
    native.close()
    ours.close()
    assert ends >= 3  # the comparison went through episode ends
    assert truncations >= 1 if cap < 10_000 else truncations == 0


def test_saber_env_on_a_flavor_task_records_what_the_native_backend_records():
    """One level up: SaberVectorEnv on ``breakout:m0d0`` (flavor backend) and on ``breakout``
    (native) give the same steps and the same recorded episodes."""
    plain = SaberVectorEnv(["breakout"] * 2, seed=7)
    flavor = SaberVectorEnv(["breakout:m0d0"] * 2, seed=7)
    assert np.array_equal(plain.reset()[0], flavor.reset()[0])
    rng = np.random.default_rng(1)
    for _ in range(400):
        actions = rng.integers(0, 18, size=2)
        a, b = plain.step(actions), flavor.step(actions)
        for x, y in zip(a[:4], b[:4]):
            assert np.array_equal(x, y)
        assert a[4].keys() == b[4].keys() and "lives" not in b[4]
    ends = plain.pop_episode_ends()
    assert ends and [dataclasses.replace(e, task="breakout") for e in flavor.pop_episode_ends()] == ends
    plain.close()
    flavor.close()


# --- (b) a flavor is another game ---------------------------------------------------------------


def _paddle_pixels(obs: np.ndarray) -> np.ndarray:
    """Lit pixels of Breakout's paddle row (84x84 row 76, inside the walls) in each newest frame."""
    return np.count_nonzero(obs[:, -1, 76, 4:80], axis=1)


def test_a_difficulty_narrows_breakouts_paddle_through_seeded_resets_and_game_overs():
    """Difficulty 1 ("A" switch) narrows Breakout's paddle (16 -> 12 screen pixels, 12 -> 10 here).
    A seeded reset reloads the ROM, which forgets the mode and difficulty: they must survive it,
    and the autoreset after a game over."""
    default = SaberVectorEnv(["breakout"], seed=1)
    wide = _paddle_pixels(default.reset()[0])[0]
    default.close()
    env = SaberVectorEnv(["breakout:m0d1"], seed=1)
    narrow = _paddle_pixels(env.reset()[0])[0]
    assert narrow < wide
    assert _paddle_pixels(env.reset(seed=99)[0])[0] == narrow  # seeded: a ROM reload
    rng = np.random.default_rng(0)
    while True:
        obs, _, term, _, info = env.step(rng.choice([1, 3, 4], size=1))  # FIRE, RIGHT, LEFT
        if term[0]:
            break
    assert _paddle_pixels(obs)[0] == narrow  # the next game, after the autoreset
    env.close()


def test_the_shipped_modes_table_is_what_ale_py_reports_for_every_game():
    """The table the suite lists flavors from holds, for each of the 61 games, the modes and
    difficulties the installed ale-py reports (an ale-py that changes them fails here: rewrite the
    table with ``flavors.write_table``)."""
    assert list(flavors.table()) == tables.game_ids()
    for game in tables.game_ids():
        ale = ALEInterface()
        ale.loadROM(str(roms.get_rom_path(game)))
        modes, difficulties = list(ale.getAvailableModes()), list(ale.getAvailableDifficulties())
        assert flavors.available(game) == (tuple(modes), tuple(difficulties)), game
        expected = {f"{game}:m{m}d{d}" for m in modes for d in difficulties} - {f"{game}:m{modes[0]}d0"}
        assert set(flavors.flavor_tasks((game,))) == expected
    # ale-py 0.12: 426 flavors over the 61 games, 47 of which have more than their default
    assert sum(len(m) * len(d) for m, d in flavors.table().values()) == 426
    assert len(flavors.flavor_games()) == 47 and len(flavors.flavor_tasks()) == 426 - 61


def test_modes_change_the_game():
    """A mode changes what is on screen (Freeway's traffic, Machado et al.'s Figure 2) and what
    random play scores (Space Invaders)."""
    assert len(flavors.flavor_tasks(tuple(flavors.SPLIT_GAMES))) == 80  # 24 + 16 + 5 + 8 + 32, less 5

    def play(task):
        env = SaberVectorEnv([task], seed=2, protocol=DETERMINISTIC)
        first = env.reset()[0]
        rng, score = np.random.default_rng(0), 0.0
        for _ in range(150):
            score += env.step(rng.integers(0, 18, size=1))[1][0]
        env.close()
        return first, score

    assert not np.array_equal(play("freeway")[0], play("freeway:m1d0")[0])
    assert play("space_invaders")[1] != play("space_invaders:m0d1")[1]


# --- the suite: tasks, errors, scoring, split ---------------------------------------------------


def test_tasks_are_the_games_then_the_flavors_and_list_shows_them():
    tasks = SUITE.tasks()
    assert tasks[:61] == tables.game_ids() and tasks[61:] == flavors.flavor_tasks()
    for task in ("breakout:m4d1", "space_invaders:m15d1", "hero:m4d0"):
        SUITE.check_task_available(task)
    proc = run_cli("list", "atari_saber")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "  breakout:m4d1\n" in proc.stdout and "machado_flavors" in proc.stdout
    assert "tasks (426 of 426 runnable here)" in proc.stdout
    assert "  alien:m3d3\n" in proc.stdout and "  asteroids:m128d3\n" in proc.stdout  # not 5 games' worth


@pytest.mark.parametrize(
    ("task", "fragments"),
    [
        ("breakout:m5d1", ["unknown breakout flavor 'breakout:m5d1'", "did you mean", "modes 0, 4, 8"]),
        ("breakout:m4d7", ["unknown breakout flavor 'breakout:m4d7'", "did you mean 'breakout:m4d1'"]),
        ("breakout:m0d0", ["default mode and difficulty of breakout", "name the task 'breakout'"]),
        ("assault:m1d0", ["assault has one mode and one difficulty", "name the task 'assault'"]),
        ("pongg:m1d0", ["'pongg'", "did you mean 'pong'"]),
        ("breakout:4:1", ["not of the form GAME:mMODEdDIFFICULTY"]),
    ],
)
def test_unknown_flavors_are_one_line_errors_of_the_suite(task, fragments):
    with pytest.raises(UsageError) as caught:
        SUITE.make_env([task], 0)
    message = str(caught.value)
    assert "\n" not in message and all(f in message for f in fragments), message


@pytest.mark.parametrize("task", ["breakout:m5d1", "assault:m1d0"])
def test_unknown_flavor_on_the_command_line_exits_2_in_one_line(tmp_path, task):
    proc = run_cli("run", "atari_saber", "random", "--tasks", task, "--frames", "20k", "--out", tmp_path / "r")
    assert_usage_error(proc, f"unknown task of suite 'atari_saber' '{task}'")
    assert not (tmp_path / "r").exists()


def test_flavor_tasks_are_never_normalized_by_the_default_games_record(tmp_path):
    scorer = AtariScorer()
    record = scorer.reference(None).scores["breakout"]
    out = scorer.score({"breakout": record, "breakout:m4d1": record})
    assert out["per_task"] == {"breakout": pytest.approx(1.0)} and out["n_tasks"] == 1
    assert out["unnormalized"] == {"breakout:m4d1": record} and out["raw"]["breakout:m4d1"] == record
    # not even by a baseline file that lists the flavor (there is no random score for it either)
    table = tmp_path / "mine.csv"
    table.write_text("task,score\nbreakout,100\nbreakout:m4d1,100\n")
    out = scorer.score({"breakout": 50.0, "breakout:m4d1": 50.0}, baseline=str(table))
    assert set(out["per_task"]) == {"breakout"} and set(out["unnormalized"]) == {"breakout:m4d1"}


def test_machado_flavors_split_trains_on_defaults_and_tests_on_every_other_flavor():
    registry = build_registry(benchgen_atari_saber, include_agents=False)
    split = registry.split(registry.suite("atari_saber"), "machado_flavors")
    assert split.train == tuple(flavors.SPLIT_GAMES)  # default flavors = the plain game names
    assert not set(split.train) & set(split.test) and len(set(split.test)) == len(split.test)
    assert all(flavors.is_flavor_task(t) for t in split.test)
    assert not any(flavors.is_flavor_task(t) for t in split.train)
    every = {f.task for g in split.train for f in flavors.game_flavors(g)}
    defaults = {flavors.default_flavor(g).task for g in split.train}
    assert set(split.test) == every - defaults and len(split.test) == 80
    # each game's source is named where the split is listed: Farebrother et al.'s four, Pong benchgen's
    assert "Farebrother, Machado & Bowling 2018" in split.description and "Pong, benchgen's choice" in split.description
    assert {g for g, source in flavors.SPLIT_GAMES.items() if source == flavors.FAREBROTHER_2018} == {
        "breakout",
        "freeway",
        "hero",
        "space_invaders",
    }
    assert flavors.SPLIT_GAMES["pong"] == flavors.BENCHGEN_CHOICE
    checks.check_splits(registry, registry.suite("atari_saber"))


# --- the env contract on flavor tasks -------------------------------------------------------------


def test_flavor_tasks_pass_the_conformance_checks():
    """gymnasium's checker, episode ends, seeding, and a joint env of a flavor and a plain game."""
    checks.check_gymnasium_env_checker(SUITE, "breakout:m4d1")
    ends = checks.check_episode_ends(SUITE, ["breakout:m4d1"], max_steps=2_000)
    assert ends[0].task == "breakout:m4d1" and ends[0].end_reason == "game_over"
    checks.check_reproducible(SUITE, ["breakout:m4d1"] * 2)
    checks.check_vector_env(SUITE, ["breakout:m4d1", "pong", "breakout:m4d1"], steps=64)


# --- (f) protocol parameters reach the flavor backend ---------------------------------------------


def test_minimal_action_set_and_noop_starts_reach_the_flavor_backend():
    dqn = AtariSaberSuite(DQN2015)  # minimal action set, up to 30 no-op starts
    for task, game in (("breakout:m4d1", "breakout"), ("space_invaders:m3d0", "space_invaders")):
        env = dqn.make_env([task], 0)
        ale = ALEInterface()
        ale.loadROM(str(roms.get_rom_path(game)))
        assert env.single_action_space == Discrete(len(ale.getMinimalActionSet()))
        env.close()
    # no-op frames are emulated before the first observation: ALE counts them (after the frames a
    # mode selection takes: 4 for Breakout's mode 4), the episode does not; ale-py draws 0..29
    # (8 emulators: a seeded reset reloads each one's ROM, the cost of this test)
    seeds = env_seeds(0, 8)
    for noop_max in (0, 30):
        settings = ale_settings(dataclasses.replace(DQN2015, noop_max=noop_max))
        native = AtariVectorEnv("breakout", 8, num_threads=1, **settings)
        ours = FlavorVectorEnv("breakout:m4d1", 8, **settings)
        frames = [env.reset(seed=seeds)[1]["episode_frame_number"] for env in (native, ours)]
        native.close()
        ours.close()
        if noop_max == 0:
            assert frames[0].tolist() == [0] * 8 and frames[1].tolist() == [4] * 8
            continue
        for noops in (frames[0], frames[1] - 4):
            assert noops.min() >= 0 and noops.max() <= 29 and len(set(noops.tolist())) > 4


def test_life_loss_signal_reaches_a_flavor_task_in_training_only():
    """DQN 2015: a lost life reads as a terminated episode in training; the recorded episode runs
    to game over (Breakout: 5 balls, so 5 terminations for one recorded episode)."""
    env = SaberVectorEnv(["breakout:m4d1"], seed=0, protocol=DQN2015, mode="train")
    env.reset()
    rng, terminations, ends = np.random.default_rng(0), 0, []
    while not ends:
        terminations += int(env.step(rng.choice([1, 2, 3], size=1))[2][0])  # minimal set: FIRE, RIGHT, LEFT
        ends = env.pop_episode_ends()
    assert terminations == 5 and ends[0].end_reason == "game_over"
    env.close()


def test_custom_protocol_frameskip_5_on_a_flavor_run(tmp_path):
    protocol = tmp_path / "ale2013_quick.yaml"
    protocol.write_text("base: ale2013\nevaluation_episodes: 2\n")  # ALE 2013: frame skip 5
    out = tmp_path / "run"
    proc = run_cli(
        "run", "atari_saber", "random", "--tasks", "breakout:m4d1", "--frames", "10k",
        "--protocol", protocol, "--out", out, "--no-progress",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    with sqlite3.connect(out / "results.sqlite") as conn:
        lengths = [row[0] for row in conn.execute("SELECT length_frames FROM episodes")]
    assert len(lengths) >= 3 and all(n % 5 == 0 for n in lengths)
    assert json.loads((out / "run.json").read_text())["protocol"]["frameskip"] == 5


# --- (c) a real run through the CLI ---------------------------------------------------------------


def test_random_run_on_a_flavor_is_recorded_and_reported_raw(tmp_path):
    out = tmp_path / "run"
    proc = run_cli(
        "run", "atari_saber", "random", "--tasks", "breakout:m4d1", "--frames", "20k", "--out", out,
        "--no-progress",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    with sqlite3.connect(out / "results.sqlite") as conn:
        rows = conn.execute("SELECT task, length_frames, end_reason FROM episodes").fetchall()
    assert len(rows) >= 5 and {r[0] for r in rows} == {"breakout:m4d1"}
    assert all(r[2] == "game_over" and r[1] % 4 == 0 for r in rows)
    proc = run_cli("report", out)
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = (out / "report" / "report.md").read_text()
    assert "| breakout:m4d1 |" in report and "Reported raw, left out of the aggregates: breakout:m4d1" in report


@pytest.mark.parametrize("task", ["air_raid:m2d0", "journey_escape:m0d1", "pooyan:m30d0"])
def test_a_flavor_of_a_game_with_a_taller_screen_resets_and_steps(task):
    """A few ROMs draw more than 210 rows (air_raid 250, journey_escape 230, pooyan 220, carnival
    214; carnival has one flavor): their flavors run at the ROM's own screen size instead of failing to copy the screen."""
    from benchgen import api

    env = api.make_env("atari_saber", task)
    try:
        obs, _ = env.reset(seed=0)
        for _ in range(3):
            obs, reward, *_ = env.step(np.zeros(env.num_envs, dtype=np.int64))
        assert env.observation_space.contains(obs)
    finally:
        env.close()
