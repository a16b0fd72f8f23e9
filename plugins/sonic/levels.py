"""The 58 Sonic levels: task names, train/test split, and each level's end offset.

A level is a (game, save state) pair of stable-retro's Sonic integrations (Nichol et al. 2018).
The train/test split comes from ``data/sonic_levels.csv`` (the paper's table); the
end offsets, the zone/act each save state starts in and the game-specific end rules come from
the integrations' contest scenario (``script.lua`` next to each game's ``contest.json`` in
stable-retro's data folder), reimplemented in :mod:`benchgen_sonic.progress`.

Task names are ``<game slug>-<state>``, e.g. ``sonic1-GreenHillZone.Act1``,
``sonic2-MetropolisZone.Act3``, ``sonic3k-HiddenPalaceZone``: short enough to type, safe in file
names and shells, and stable (the slug table below never changes meaning).
"""

from __future__ import annotations

import csv
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent / "data"

SONIC1 = "SonicTheHedgehog-Genesis-v0"
SONIC2 = "SonicTheHedgehog2-Genesis-v0"
SONIC3K = "SonicAndKnuckles3-Genesis-v0"

#: the three games of the benchmark, in the paper's order
GAMES: tuple[str, ...] = (SONIC1, SONIC2, SONIC3K)

#: stable-retro game id -> task-name prefix
GAME_SLUGS: dict[str, str] = {SONIC1: "sonic1", SONIC2: "sonic2", SONIC3K: "sonic3k"}

#: stable-retro game id -> the cartridge a user must own (for error messages)
GAME_TITLES: dict[str, str] = {
    SONIC1: "Sonic The Hedgehog (Genesis/Mega Drive)",
    SONIC2: "Sonic The Hedgehog 2 (Genesis/Mega Drive)",
    SONIC3K: "Sonic & Knuckles + Sonic The Hedgehog 3 (Genesis/Mega Drive, locked-on)",
}


@dataclass(frozen=True)
class GameRules:
    """End rules one game's contest script adds to "completed / life lost / time limit"."""

    special_stage: tuple[str, str, int] | None = None
    """(RAM variable, "==" or "!=", value): the episode ends when it holds (entering a special or
    bonus stage leaves the level). Sonic 2: ``game_mode == 16``; Sonic 3&K: ``special_stage != 0``."""
    act_change_shift: bool = False
    """Sonic 3&K: some levels switch act mid-level and the x coordinate jumps; the script then
    shifts its x offset by the camera's jump (``screen_x``) so progress stays continuous."""

    def ram_variables(self) -> tuple[str, ...]:
        """RAM variables (names in the integration's data.json) these rules read every frame."""
        names = ["x", "lives"]
        if self.special_stage:
            names.append(self.special_stage[0])
        if self.act_change_shift:
            names += ["act", "screen_x"]
        return tuple(names)


#: per-game rules, transcribed from each game's ``script.lua`` (function ``contest_done``)
GAME_RULES: dict[str, GameRules] = {
    SONIC1: GameRules(),
    SONIC2: GameRules(special_stage=("game_mode", "==", 16)),
    SONIC3K: GameRules(special_stage=("special_stage", "!=", 0), act_change_shift=True),
}

# (zone, act, end x) of every level, transcribed from ``level_max_x`` in each game's script.lua,
# which keys the table by the zone and act ids in RAM. The save state's name gives the level;
# the env checks at reset that RAM holds the zone/act listed here (``Level.zone``/``Level.act``).
# tests/sonic/test_levels.py re-parses the installed script.lua and compares.
_END_OFFSETS: dict[tuple[str, str], tuple[int, int, int]] = {
    # Sonic The Hedgehog: GHZ 0, LZ 1, MZ 2, SLZ 3, SYZ 4, SBZ 5
    (SONIC1, "GreenHillZone.Act1"): (0, 0, 0x2560),
    (SONIC1, "GreenHillZone.Act2"): (0, 1, 0x1F60),
    (SONIC1, "GreenHillZone.Act3"): (0, 2, 0x292A),
    (SONIC1, "LabyrinthZone.Act1"): (1, 0, 0x1A50),
    (SONIC1, "LabyrinthZone.Act2"): (1, 1, 0x1150),
    (SONIC1, "LabyrinthZone.Act3"): (1, 2, 0x1CC4),
    (SONIC1, "MarbleZone.Act1"): (2, 0, 0x1860),
    (SONIC1, "MarbleZone.Act2"): (2, 1, 0x1860),
    (SONIC1, "MarbleZone.Act3"): (2, 2, 0x1720),
    (SONIC1, "StarLightZone.Act1"): (3, 0, 0x2060),
    (SONIC1, "StarLightZone.Act2"): (3, 1, 0x2060),
    (SONIC1, "StarLightZone.Act3"): (3, 2, 0x1F48),
    (SONIC1, "SpringYardZone.Act1"): (4, 0, 0x2360),
    (SONIC1, "SpringYardZone.Act2"): (4, 1, 0x2960),
    (SONIC1, "SpringYardZone.Act3"): (4, 2, 0x2B83),
    (SONIC1, "ScrapBrainZone.Act1"): (5, 0, 0x2260),
    (SONIC1, "ScrapBrainZone.Act2"): (5, 1, 0x1EE0),
    # Sonic The Hedgehog 2 (Metropolis act 3 is zone 5 in RAM)
    (SONIC2, "EmeraldHillZone.Act1"): (0, 0, 0x2A40),
    (SONIC2, "EmeraldHillZone.Act2"): (0, 1, 0x29C0),
    (SONIC2, "MetropolisZone.Act1"): (4, 0, 0x2300),
    (SONIC2, "MetropolisZone.Act2"): (4, 1, 0x1F40),
    (SONIC2, "MetropolisZone.Act3"): (5, 0, 0x29AF),
    (SONIC2, "WingFortressZone"): (6, 0, 0x29D9),
    (SONIC2, "HillTopZone.Act1"): (7, 0, 0x2900),
    (SONIC2, "HillTopZone.Act2"): (7, 1, 0x2E2E),
    (SONIC2, "OilOceanZone.Act1"): (10, 0, 0x3040),
    (SONIC2, "OilOceanZone.Act2"): (10, 1, 0x2856),
    (SONIC2, "MysticCaveZone.Act1"): (11, 0, 0x2450),
    (SONIC2, "MysticCaveZone.Act2"): (11, 1, 0x21A0),
    (SONIC2, "CasinoNightZone.Act1"): (12, 0, 0x2840),
    (SONIC2, "CasinoNightZone.Act2"): (12, 1, 0x2740),
    (SONIC2, "ChemicalPlantZone.Act1"): (13, 0, 0x2840),
    (SONIC2, "ChemicalPlantZone.Act2"): (13, 1, 0x2943),
    (SONIC2, "AquaticRuinZone.Act1"): (15, 0, 0x298C),
    (SONIC2, "AquaticRuinZone.Act2"): (15, 1, 0x298D),
    # Sonic 3 & Knuckles (Hidden Palace is zone 22, act 1 in RAM)
    (SONIC3K, "AngelIslandZone.Act1"): (0, 0, 0x3080 + 0x1049),
    (SONIC3K, "AngelIslandZone.Act2"): (0, 1, 0x4870),
    (SONIC3K, "HydrocityZone.Act1"): (1, 0, 0x3630),
    (SONIC3K, "HydrocityZone.Act2"): (1, 1, 0x3F80),
    (SONIC3K, "MarbleGardenZone.Act1"): (2, 0, 0x2D16),
    (SONIC3K, "MarbleGardenZone.Act2"): (2, 1, 0x3B62),
    (SONIC3K, "CarnivalNightZone.Act1"): (3, 0, 0x3163),
    (SONIC3K, "CarnivalNightZone.Act2"): (3, 1, 0x4786),
    (SONIC3K, "FlyingBatteryZone.Act1"): (4, 0, 0x2DDD),
    (SONIC3K, "FlyingBatteryZone.Act2"): (4, 1, 0x33AD),
    (SONIC3K, "IcecapZone.Act1"): (5, 0, 0x68A7),  # the script: "changes act before boss"
    (SONIC3K, "IcecapZone.Act2"): (5, 1, 0x4342),
    (SONIC3K, "LaunchBaseZone.Act1"): (6, 0, 0x3D4A),
    (SONIC3K, "LaunchBaseZone.Act2"): (6, 1, 0x39A3),
    (SONIC3K, "MushroomHillZone.Act1"): (7, 0, 0x420B),
    (SONIC3K, "MushroomHillZone.Act2"): (7, 1, 0x3D41),
    (SONIC3K, "SandopolisZone.Act1"): (8, 0, 0x40FB),
    (SONIC3K, "SandopolisZone.Act2"): (8, 1, 0x5109),
    (SONIC3K, "LavaReefZone.Act1"): (9, 0, 0x2BE4),
    (SONIC3K, "LavaReefZone.Act2"): (9, 1, 0x38B0),
    (SONIC3K, "DeathEggZone.Act1"): (11, 0, 0x35EE),
    (SONIC3K, "DeathEggZone.Act2"): (11, 1, 0x359F),
    (SONIC3K, "HiddenPalaceZone"): (22, 1, 0x0FC8),
}


@dataclass(frozen=True)
class Level:
    """One playable level: what the environment needs to run and score it."""

    game: str
    """stable-retro game id, e.g. ``SonicTheHedgehog-Genesis-v0``."""
    state: str
    """Save state at the start of the level, e.g. ``GreenHillZone.Act1``."""
    end_x: int
    """Absolute x at which the level counts as completed (before any boss fight)."""
    split: str = "train"
    """``train`` or ``test`` in the paper's split."""
    zone: int | None = None
    """Zone id the save state starts in (checked against RAM at reset); None: not checked."""
    act: int | None = None
    """Act id the save state starts in (checked with ``zone``)."""
    rules: GameRules = GameRules()
    """Game-specific end rules."""
    info_path: str | None = None
    """A data.json (RAM map) replacing the integration's own; used by test integrations."""
    slug: str | None = None
    """Task-name prefix; default: the game's slug (``sonic1``...) or its lower-cased first word."""

    @property
    def task(self) -> str:
        """The task name benchgen uses for this level."""
        prefix = self.slug or GAME_SLUGS.get(self.game) or self.game.split("-")[0].lower()
        return f"{prefix}-{self.state}"


def _read_levels() -> tuple[Level, ...]:
    levels = []
    with (DATA_DIR / "sonic_levels.csv").open(newline="") as handle:
        for row in csv.DictReader(handle):
            game, state = row["game"], row["state"]
            zone, act, end_x = _END_OFFSETS[(game, state)]
            levels.append(Level(game, state, end_x, row["split"], zone, act, GAME_RULES[game]))
    return tuple(levels)


#: all 58 levels, in the order of ``data/sonic_levels.csv``
LEVELS: tuple[Level, ...] = _read_levels()

#: task name -> level
LEVELS_BY_TASK: dict[str, Level] = {level.task: level for level in LEVELS}


def split_tasks(split: str, game: str | None = None) -> list[str]:
    """Task names of the paper's ``train`` (47) or ``test`` (11) levels, optionally of one game."""
    return [lv.task for lv in LEVELS if lv.split == split and (game is None or lv.game == game)]


def end_offsets_digest(levels: tuple[Level, ...] = LEVELS) -> str:
    """A short hash of every level's end offset and rules, recorded with the protocol so that a
    change to any of them makes runs incomparable."""
    table = [[lv.task, lv.end_x, lv.zone, lv.act, repr(lv.rules)] for lv in levels]
    return hashlib.sha1(json.dumps(table).encode()).hexdigest()[:12]
