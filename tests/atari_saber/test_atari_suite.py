"""The atari_saber suite object, its splits, scorer and reference tables, and its hook."""

from __future__ import annotations

import importlib.metadata
import json
from types import SimpleNamespace

import pytest
from ale_py import Action, roms

import benchgen
import benchgen_atari_saber
from benchgen.errors import UsageError
from benchgen.testing import build_registry
from benchgen_atari_saber import hooks, protocols, tables
from benchgen_atari_saber.suite import AtariSaberSuite
from tests.fixture_plugins.toy_suite import ToySuite

SUITE = AtariSaberSuite()


def test_tasks_are_the_61_games_of_the_csv_and_each_has_a_rom():
    tasks = [t for t in SUITE.tasks() if ":" not in t]  # game:mMdD flavors: test_atari_flavors.py
    assert len(tasks) == 61 and tasks == sorted(tasks) and SUITE.tasks()[:61] == tasks
    assert {"space_invaders", "skiing", "journey_escape", "double_dunk"} <= set(tasks)
    for task in tasks:
        assert roms.get_rom_path(task) is not None, task
        SUITE.check_task_available(task)
    assert len(tables.world_record_games()) == 58
    assert set(tasks) - set(tables.world_record_games()) == {"double_dunk", "elevator_action", "tennis"}


def test_suite_attributes_follow_saber():
    assert SUITE.name == "atari_saber" and SUITE.budget_unit == "frames" and SUITE.frames_per_step == 4
    assert SUITE.default_budget == 200_000_000
    assert SUITE.default_checkpoints == (10_000_000, 50_000_000, 100_000_000, 200_000_000)
    assert SUITE.episode_fields == ("score_5min", "score_30min")
    assert set(SUITE.end_reasons) == {"game_over", "stuck", "max_length"}
    assert SUITE.default_split == "all"


def test_protocol_holds_every_saber_parameter():
    p = SUITE.protocol()
    assert p["sticky_action_probability"] == 0.25 and p["sticky_actions_per"] == "emulator frame"
    assert p["full_action_space"] is True and p["num_actions"] == 18
    assert p["max_stuck_frames"] == 18_000 and p["max_episode_frames"] == 21_600_000
    assert p["life_info"] is False and p["noop_max"] == 0 and p["fire_reset"] is False
    assert p["frameskip"] == 4 and p["reward_clipping"] is False
    assert p["preprocessing"]["frame_stack"] == 4 and p["preprocessing"]["resize"] == [84, 84]
    assert p["score_marks_frames"] == {"score_5min": 18_000, "score_30min": 108_000}
    assert p["ale_py_version"] == importlib.metadata.version("ale-py")
    assert json.loads(json.dumps(p)) == p


def test_action_semantics_name_the_ale_actions():
    sem = SUITE.action_semantics()
    names = {key: Action(index).name for key, index in sem.items()}
    assert names == {
        "noop": "NOOP",
        "right": "RIGHT",
        "left": "LEFT",
        "jump": "FIRE",
        "right_jump": "RIGHTFIRE",
        "left_jump": "LEFTFIRE",
    }


def test_make_env_rejects_unknown_games_and_modes():
    with pytest.raises(UsageError, match="did you mean 'space_invaders'"):
        SUITE.make_env(["space_invader"], 0)
    with pytest.raises(UsageError, match="mode"):
        SUITE.make_env(["pong"], 0, mode="test")


def test_make_env_eval_mode_is_the_same_protocol():
    env = SUITE.make_env(["pong"], 0, mode="eval")
    assert env.mode == "eval" and env.max_episode_frames == 21_600_000 and env.max_stuck_frames == 18_000
    env.close()


SPLITS = {s.name: s for s in SUITE.splits()}


def test_splits_are_the_papers_game_sets():
    assert set(SPLITS) == {
        *("all", "wr58", "ale_train5", "saber_tuning5", "saber_seeds14", "machado_flavors"),
        *("atari100k", "atari100k_proof8"),
    }
    tasks = set(SUITE.tasks())
    for split in SPLITS.values():
        assert split.suite == "atari_saber"
        assert set(split.train) <= tasks and set(split.test) <= tasks, split.name
        assert not set(split.train) & set(split.test), split.name
        assert len(set(split.tasks)) == len(split.train) + len(split.test), split.name
    games = set(tables.game_ids())  # the flavors' split is checked in test_atari_flavors.py
    assert set(SPLITS["all"].tasks) == games
    assert set(SPLITS["wr58"].tasks) == set(tables.world_record_games())
    assert set(SPLITS["ale_train5"].train) == {"asterix", "beam_rider", "freeway", "seaquest", "space_invaders"}
    assert set(SPLITS["ale_train5"].test) == games - set(SPLITS["ale_train5"].train)  # the other 56
    assert set(SPLITS["saber_tuning5"].train) == {"alien", "battle_zone", "chopper_command", "gopher", "space_invaders"}
    assert len(SPLITS["saber_seeds14"].train) == 14
    assert {"up_n_down", "yars_revenge", "jamesbond", "kung_fu_master"} <= set(SPLITS["saber_seeds14"].train)
    # Atari 100K: Kaiser et al. 2020's 26 games, and the eight of issue 26's proof runs among them
    assert len(SPLITS["atari100k"].train) == 26 and not SPLITS["atari100k"].test
    assert {"alien", "ms_pacman", "up_n_down", "private_eye"} <= set(SPLITS["atari100k"].train)
    assert set(SPLITS["atari100k_proof8"].train) < set(SPLITS["atari100k"].train)


def test_a_protocol_with_its_own_games_runs_them_unless_told_otherwise(tmp_path):
    """`benchgen run atari_saber rainbow --protocol atari100k` plans Atari 100K's 26 games at
    400K frames, not the suite's 61; a protocol file based on it keeps them; --tasks and
    --split still choose; SABER's runs keep all 61."""
    from benchgen.config import RunConfig
    from benchgen.registry import get_registry
    from benchgen.run.planning.plan import plan_units, resolve

    registry = get_registry()

    def planned(**run):
        units = plan_units(resolve(registry, RunConfig(suite="atari_saber", agent="random", **run), {}))
        return sorted(u.tasks[0] for u in units), {u.budget_frames for u in units}

    assert planned(protocol="atari100k") == (sorted(SPLITS["atari100k"].train), {400_000})
    custom = tmp_path / "sticky100k.yaml"
    custom.write_text("base: atari100k\nsticky_action_probability: 0.25\n")
    assert planned(protocol=str(custom))[0] == sorted(SPLITS["atari100k"].train)
    assert planned(protocol="atari100k", tasks=["pong"])[0] == ["pong"]
    assert planned(protocol="atari100k", split="saber_tuning5")[0] == sorted(SPLITS["saber_tuning5"].train)
    assert len(planned()[0]) == 61 and len(planned(protocol="machado2018")[0]) == 61
    shown = SUITE.protocol_presets()
    assert (shown["atari100k"]["split"], shown["saber"]["split"]) == ("atari100k", "all")
    assert "Table 1" in shown["atari100k"]["sources"]["split"]
    assert "split" not in AtariSaberSuite(protocols.ATARI100K).protocol()  # a default, not a comparability value


def test_atari100k_runs_rainbow_and_dqn_as_the_benchmark_knows_them(tmp_path):
    """Under `--protocol atari100k` Rainbow is Data-Efficient Rainbow and DQN is DrQ(epsilon), from
    the suite's protocol settings (each value sourced), unless the user picks a variant; SABER's
    runs keep the papers' own; a protocol file based on atari100k keeps them too."""
    from benchgen.config import RunConfig
    from benchgen.registry import get_registry
    from benchgen.run.planning.plan import resolve

    registry = get_registry()

    def resolved(agent, protocol=None, **overrides):
        run = RunConfig(suite="atari_saber", agent=agent, tasks=["pong"], protocol=protocol)
        return resolve(registry, run, overrides)

    der = resolved("rainbow", "atari100k")
    assert der.agent_config.variant == "der" and der.agent_config.update_period_steps == 1
    assert "Data-Efficient Rainbow" in der.config_sources["variant"] and der.config_sources["n_step"] == "variant der"
    assert resolved("dqn", "atari100k").agent_config.variant == "drq_eps"
    assert resolved("rainbow", "atari100k", variant="paper").agent_config.update_period_steps == 4
    assert resolved("rainbow", "atari100k", n_step=3).agent_config.n_step == 3  # --set over the variant
    assert resolved("rainbow").agent_config.variant == "paper" and resolved("dqn").agent_config.variant == "nature"
    custom = tmp_path / "sticky100k.yaml"
    custom.write_text("base: atari100k\nsticky_action_probability: 0.25\n")
    assert resolved("rainbow", str(custom)).agent_config.variant == "der"
    assert "tuned" not in AtariSaberSuite(protocols.ATARI100K).protocol()


def test_the_plugin_gives_data_only_to_its_own_suite():
    other = type("OtherSuite", (ToySuite,), {"name": "sonic"})()  # another plugin's suite

    @benchgen.hookimpl
    def benchgen_suites():
        return [other]

    registry = build_registry(
        [benchgen_atari_saber, SimpleNamespace(benchgen_suites=benchgen_suites)], include_agents=False
    )
    assert registry.splits(other) == {}
    assert registry.declared_scorer(other) is None
    assert registry.reference_scores(other) == {}
    assert [s.name for s in hooks.benchgen_suites()] == ["atari_saber"]


def test_plugin_registers_through_the_entry_point_and_the_registry():
    eps = importlib.metadata.entry_points(group="benchgen")
    assert any(ep.name == "atari_saber" and ep.value == "benchgen_atari_saber" for ep in eps)
    registry = build_registry(benchgen_atari_saber, include_agents=False)
    suite = registry.suite("atari_saber")
    assert set(registry.splits(suite)) == set(SPLITS)
    assert registry.scorer(suite).default_baseline == "world_record"
    tables = registry.reference_scores(suite)
    assert {"world_record", "human", "rainbow_iqn_saber", "rainbow_saber", "machado2018_dqn_sticky"} <= set(tables)
    assert all(t.source for t in tables.values())  # every table names where it is printed
