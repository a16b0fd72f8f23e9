"""The tasks: every game mode and difficulty ale-py reports for a handful of games.

Machado et al. 2018 ("Revisiting the Arcade Learning Environment") added *modes* and
*difficulties* to the ALE: the cartridge switches that change a game's rules or speed. A task is
one (game, mode, difficulty) "flavor", named ``game:mMdD`` (``breakout:m4d1``). The list is
ale-py's (``ALEInterface.getAvailableModes`` / ``getAvailableDifficulties``), read from the table
the atari_saber plugin ships and checks against ale-py (``benchgen_atari_saber/data/ale_modes.csv``):
asking ale-py would load every game's ROM each time the tasks are listed.

The default flavor of a game is its first available mode with difficulty 0 (mode 0, difficulty 0
for every game here: the cartridge's power-on settings, which the standard ALE benchmark plays).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

#: the games of the suite (ale-py ROM ids): few enough for CI, each with several flavors and
#: short random episodes. Pong's flavors are mostly difficulties, Hero's only modes. (Farebrother,
#: Machado and Bowling 2018 evaluate DQN with this train-on-default, test-on-flavors protocol.)
GAMES: tuple[str, ...] = ("breakout", "freeway", "hero", "pong", "space_invaders")

_TASK_RE = re.compile(r"(?P<game>[a-z0-9_]+):m(?P<mode>\d+)d(?P<difficulty>\d+)")


@dataclass(frozen=True)
class Flavor:
    """One task: a game played in one mode and difficulty."""

    game: str
    mode: int
    difficulty: int

    @property
    def task(self) -> str:
        return f"{self.game}:m{self.mode}d{self.difficulty}"


def parse_task(task: str) -> Flavor:
    """``"breakout:m4d1"`` -> ``Flavor("breakout", 4, 1)``; ValueError if it is not of that form."""
    m = _TASK_RE.fullmatch(task)
    if not m:
        raise ValueError(f"task '{task}' is not of the form game:mMODEdDIFFICULTY")
    return Flavor(m["game"], int(m["mode"]), int(m["difficulty"]))


def quiet_ale() -> None:
    """Keep ale-py's banner off stderr (CLI errors are one line)."""
    import ale_py

    ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)


def game_flavors(game: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(modes, difficulties) ale-py reports for ``game`` (the atari_saber plugin's table of them)."""
    from benchgen_atari_saber.flavors import available

    return available(game)


@functools.cache
def flavors() -> tuple[Flavor, ...]:
    """Every task of the suite, game by game, modes then difficulties in ale-py's order."""
    out = []
    for game in GAMES:
        modes, difficulties = game_flavors(game)
        out += [Flavor(game, m, d) for m in modes for d in difficulties]
    return tuple(out)


def default_flavor(game: str) -> Flavor:
    """The flavor the standard benchmark plays: first mode, difficulty 0."""
    modes, difficulties = game_flavors(game)
    return Flavor(game, modes[0], 0 if 0 in difficulties else difficulties[0])


def env_id(game: str) -> str:
    """gymnasium id of a game's v5 environment: ``space_invaders`` -> ``ALE/SpaceInvaders-v5``."""
    return "ALE/" + "".join(part.capitalize() for part in game.split("_")) + "-v5"
