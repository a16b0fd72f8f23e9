"""The 58 levels: split, task names, end offsets against the installed integrations, splits."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

import benchgen_sonic
from benchgen.registry import Registry
from benchgen_sonic import levels as lv
from benchgen_sonic.suite import SonicSuite


def test_58_levels_47_train_11_test():
    assert len(lv.LEVELS) == 58
    assert len(lv.split_tasks("train")) == 47
    assert len(lv.split_tasks("test")) == 11
    assert len(lv.LEVELS_BY_TASK) == 58  # task names are unique
    assert {level.game for level in lv.LEVELS} == set(lv.GAMES)


def test_levels_follow_the_csv():
    with (lv.DATA_DIR / "sonic_levels.csv").open(newline="") as handle:
        rows = [(r["game"], r["state"], r["split"]) for r in csv.DictReader(handle)]
    assert [(level.game, level.state, level.split) for level in lv.LEVELS] == rows


def test_task_names_are_short_and_file_safe():
    assert lv.LEVELS[0].task == "sonic1-GreenHillZone.Act1"
    assert lv.LEVELS_BY_TASK["sonic2-MetropolisZone.Act3"].zone == 5
    for task in lv.LEVELS_BY_TASK:
        assert re.fullmatch(r"sonic(1|2|3k)-[A-Za-z]+Zone(\.Act[123])?", task), task


def _parse_level_max_x(script: str) -> dict[tuple[int, int], int]:
    """``level_max_x`` of a contest script.lua: {(zone, act): end x}, commented lines skipped."""
    table = script.split("level_max_x = {", 1)[1].split("\n}", 1)[0]
    out = {}
    for line in table.splitlines():
        m = re.match(r'\s*\["zone=(\d+),act=(\d+)"\]\s*=\s*([0-9A-Fa-fx +]+),', line)
        if m:
            value = sum(int(term, 16) for term in m.group(3).split("+"))
            out[(int(m.group(1)), int(m.group(2)))] = value
    return out


@pytest.mark.parametrize("game", lv.GAMES)
def test_end_offsets_match_the_installed_contest_script(game):
    """Every level's end offset is the one stable-retro's contest scenario uses."""
    import stable_retro.data

    path = stable_retro.data.get_file_path(game, "script.lua", stable_retro.data.Integrations.STABLE)
    table = _parse_level_max_x(Path(path).read_text())
    ours = {(level.zone, level.act): level.end_x for level in lv.LEVELS if level.game == game}
    assert ours == table
    # and the contest scenario is the one that names that script
    contest = stable_retro.data.get_file_path(game, "contest.json", stable_retro.data.Integrations.STABLE)
    assert "contest_reward" in Path(contest).read_text()


def test_every_level_has_its_save_state_installed():
    import stable_retro.data

    for level in lv.LEVELS:
        assert level.state in stable_retro.data.list_states(level.game), level.task


def test_game_rules_follow_the_scripts():
    assert lv.GAME_RULES[lv.SONIC1].ram_variables() == ("x", "lives")
    assert lv.GAME_RULES[lv.SONIC2].special_stage == ("game_mode", "==", 16)
    assert lv.GAME_RULES[lv.SONIC3K].act_change_shift


def test_offsets_digest_changes_with_an_offset():
    changed = (lv.LEVELS[0].__class__(**{**lv.LEVELS[0].__dict__, "end_x": 1}),) + lv.LEVELS[1:]
    assert lv.end_offsets_digest(changed) != lv.end_offsets_digest()


def test_splits_load_through_the_hook_and_agree_with_the_csv():
    registry = Registry(plugins=[("sonic", benchgen_sonic)], autoload=False)
    suite = registry.suite("sonic")
    splits = registry.splits(suite)
    assert set(splits) == {"contest", "train", "test", "sonic1", "sonic2", "sonic3k"}
    assert list(splits["contest"].train) == lv.split_tasks("train")
    assert list(splits["contest"].test) == lv.split_tasks("test")
    assert list(splits["test"].tasks) == lv.split_tasks("test")
    assert list(splits["train"].tasks) == lv.split_tasks("train")
    per_game = [t for g in ("sonic1", "sonic2", "sonic3k") for t in splits[g].tasks]
    assert sorted(per_game) == sorted(suite.tasks())
    assert SonicSuite.default_split in splits
