"""What benchgen knows of Procgen's games, read from the package's source (openai/procgen 0.10.7,
the version the ``procgen-mirror`` wheel builds): the 16 games, which distribution modes each
accepts, and each game's episode cap.

The package asserts in C++ (``Game::parse_options``, ``procgen/src/game.cpp``) that a game accepts
a mode, which aborts the whole Python process; the suite checks against :data:`MODE_GAMES` first
so that a wrong combination is a one-line error instead.
"""

from __future__ import annotations

from benchgen.errors import UsageError

#: the 16 games (``procgen/env.py``: ENV_NAMES), alphabetical as the paper lists them
GAMES = (
    "bigfish",
    "bossfight",
    "caveflyer",
    "chaser",
    "climber",
    "coinrun",
    "dodgeball",
    "fruitbot",
    "heist",
    "jumper",
    "leaper",
    "maze",
    "miner",
    "ninja",
    "plunder",
    "starpilot",
)

#: distribution modes and the games that accept them; easy and hard: every game
#: (``procgen/src/game.cpp`` Game::parse_options; exploration: ``procgen/env.py`` EXPLORATION_LEVEL_SEEDS)
MODE_GAMES = {
    "easy": frozenset(GAMES),
    "hard": frozenset(GAMES),
    "extreme": frozenset({"chaser", "dodgeball", "leaper", "starpilot"}),
    "memory": frozenset({"caveflyer", "dodgeball", "heist", "jumper", "maze", "miner"}),
    "exploration": frozenset({"coinrun", "caveflyer", "leaper", "jumper", "maze", "heist", "climber", "ninja"}),
}
MODES = tuple(MODE_GAMES)

#: the one level of each exploration-mode game (``procgen/env.py``: EXPLORATION_LEVEL_SEEDS); the
#: package plays that level in hard mode
EXPLORATION_LEVEL_SEEDS = {
    "coinrun": 1949448038,
    "caveflyer": 1259048185,
    "leaper": 1318677581,
    "jumper": 1434825276,
    "maze": 158988835,
    "heist": 876640971,
    "climber": 1561126160,
    "ninja": 1123500215,
}

#: an episode ends after this many steps unless the game sets its own (``procgen/src/game.cpp``: Game::Game)
DEFAULT_TIMEOUT = 1000
#: games with their own cap (their constructors in ``procgen/src/games/``; data/episode_timeouts.csv)
TIMEOUTS = {"bigfish": 6000, "bossfight": 4000, "plunder": 4000, "leaper": 500, "maze": 500}
#: jumper's cap in memory mode (``procgen/src/games/jumper.cpp``)
JUMPER_MEMORY_TIMEOUT = 2000

#: the largest level seed: a level is drawn from [low, high) with high at most INT32_MAX
#: (``procgen/src/vecgame.cpp``: num_levels 0 means [0, INT32_MAX))
MAX_LEVEL = 2**31 - 1

#: the 15 button combinations, in the package's order (``procgen/env.py``: get_combos)
ACTION_COMBOS = (
    ("LEFT", "DOWN"),
    ("LEFT",),
    ("LEFT", "UP"),
    ("DOWN",),
    (),
    ("UP",),
    ("RIGHT", "DOWN"),
    ("RIGHT",),
    ("RIGHT", "UP"),
    ("D",),
    ("A",),
    ("W",),
    ("S",),
    ("Q",),
    ("E",),
)


def timeout(game: str, mode: str) -> int:
    """The episode cap of ``game`` in ``mode``, in steps."""
    if game == "jumper" and mode == "memory":
        return JUMPER_MEMORY_TIMEOUT
    return TIMEOUTS.get(game, DEFAULT_TIMEOUT)


def check_mode(game: str, mode: str) -> None:
    """A one-line ``UsageError`` if ``game`` has no distribution mode ``mode`` (the package would abort
    the process on it: module docstring)."""
    if game not in MODE_GAMES[mode]:
        raise UsageError(
            f"procgen's {game} has no {mode} mode; games that have it: {', '.join(sorted(MODE_GAMES[mode]))}"
        )
