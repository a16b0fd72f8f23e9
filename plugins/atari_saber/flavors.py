"""Game modes and difficulties ("flavors") as ``atari_saber`` tasks (Machado et al. 2018, section 5).

Machado et al. 2018 ("Revisiting the ALE", section 5) gave the ALE the cartridge switches of the
Atari 2600: a *mode* changes a game's rules (Freeway's traffic, their Figure 2), a *difficulty*
its speed or the size of the player's paddle. They propose them as a test of generalization:
learn on a game's default mode and difficulty, be tested on the others.

A task ``game:mMdD`` plays ``game`` in mode ``M`` and difficulty ``D`` (``breakout:m4d1``). The
plain game name (``breakout``) stays the *default flavor*, the one every Atari benchmark plays:
ale-py's first available mode and difficulty 0, the cartridge's power-on switches. Its explicit
name (``breakout:m0d0``) is not a task, so that one game has one name and one score table row.

The modes and difficulties are what ale-py reports (``ALEInterface.getAvailableModes`` and
``getAvailableDifficulties``), read once per process and cached, so the tasks always match the
installed emulator. Reading them loads the ROM (about 70 ms a game), so the suite lists the
flavors of :data:`FLAVOR_GAMES` only: the 61 games have 426 flavors and take about 4.6 s to list,
which every ``benchgen`` command that validates a task would pay.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from benchgen.errors import UsageError, did_you_mean

#: games whose flavors are tasks of the suite. Machado et al.'s extended abstract shows Freeway's
#: modes (Figure 2) and names no game set; these five are the games of the flavor generalization
#: study that followed it (Farebrother, Machado and Bowling 2018: Freeway, Hero, Breakout, Space
#: Invaders) plus Pong, whose flavors are mostly difficulties. 80 flavors besides the defaults.
FLAVOR_GAMES: tuple[str, ...] = ("breakout", "freeway", "hero", "pong", "space_invaders")

_TASK_RE = re.compile(r"(?P<game>[a-z0-9_]+):m(?P<mode>\d+)d(?P<difficulty>\d+)")


@dataclass(frozen=True)
class Flavor:
    """One (game, mode, difficulty) combination."""

    game: str
    """ale-py ROM id (``space_invaders``)"""
    mode: int
    """game mode, one of ale-py's ``getAvailableModes()`` for the game"""
    difficulty: int
    """difficulty switch, one of ale-py's ``getAvailableDifficulties()`` for the game"""

    @property
    def task(self) -> str:
        """The explicit task name ``game:mMdD``.

        >>> Flavor("breakout", 4, 1).task
        'breakout:m4d1'
        """
        return f"{self.game}:m{self.mode}d{self.difficulty}"


def is_flavor_task(task: str) -> bool:
    """Whether ``task`` names a flavor (``game:...``) rather than a plain game.

    >>> is_flavor_task("breakout:m4d1"), is_flavor_task("breakout")
    (True, False)
    """
    return ":" in task


def parse_task(task: str) -> Flavor:
    """``"breakout:m4d1"`` -> ``Flavor("breakout", 4, 1)``; a one-line ``UsageError`` if it is not of
    that form (it does not check that the game has that mode: see :func:`check_flavor`).

    >>> parse_task("breakout:m4d1")
    Flavor(game='breakout', mode=4, difficulty=1)
    """
    match = _TASK_RE.fullmatch(task)
    if not match:
        raise UsageError(f"task '{task}' is not of the form GAME:mMODEdDIFFICULTY (e.g. breakout:m4d1)")
    return Flavor(match["game"], int(match["mode"]), int(match["difficulty"]))


def quiet_ale() -> None:
    """Keep ale-py's banner and ROM messages off stderr (CLI errors are one line)."""
    import ale_py

    ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)


@functools.cache
def available(game: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(modes, difficulties) ale-py reports for ``game``, in its order (loads the ROM once)."""
    from ale_py import ALEInterface, roms

    quiet_ale()
    path = roms.get_rom_path(game)
    if path is None:
        raise UsageError(f"ale-py has no ROM for '{game}'; install ale-py>=0.10, which bundles the Atari ROMs")
    ale = ALEInterface()
    ale.loadROM(str(path))
    return tuple(int(m) for m in ale.getAvailableModes()), tuple(int(d) for d in ale.getAvailableDifficulties())


def default_flavor(game: str) -> Flavor:
    """The flavor the plain game name plays: the first available mode, difficulty 0."""
    modes, difficulties = available(game)
    return Flavor(game, modes[0], 0 if 0 in difficulties else difficulties[0])


def game_flavors(game: str) -> tuple[Flavor, ...]:
    """Every flavor of ``game``, the default one included: modes, then difficulties, in ale-py's order."""
    modes, difficulties = available(game)
    return tuple(Flavor(game, m, d) for m in modes for d in difficulties)


def flavor_tasks(games: tuple[str, ...] = FLAVOR_GAMES) -> list[str]:
    """The non-default flavors of ``games`` as task names, game by game (the defaults are the plain
    game names)."""
    return [f.task for game in games for f in game_flavors(game) if f != default_flavor(game)]


def task_flavor(task: str) -> Flavor:
    """The flavor a task plays: its own for ``game:mMdD``, the default one for a plain game."""
    return parse_task(task) if is_flavor_task(task) else default_flavor(task)


def check_flavor(task: str, games: list[str]) -> Flavor:
    """The flavor ``task`` names, after checking it exists; one-line ``UsageError`` otherwise.

    ``games`` are the games that may have flavors. An explicit default flavor is refused with the
    name to use instead, an unknown mode or difficulty with ale-py's lists and a suggestion.
    """
    flavor = parse_task(task)
    if flavor.game not in games:
        raise did_you_mean(
            "atari_saber game with flavors", flavor.game, games, hint=f"(in '{task}'; modes are tasks for these only)"
        )
    if flavor == default_flavor(flavor.game):
        raise UsageError(f"'{task}' is the default mode and difficulty of {flavor.game}: name the task '{flavor.game}'")
    modes, difficulties = available(flavor.game)
    if flavor.mode not in modes or flavor.difficulty not in difficulties:
        tasks = [f.task for f in game_flavors(flavor.game) if f != default_flavor(flavor.game)]
        hint = f"({flavor.game} has modes {_listed(modes)} and difficulties {_listed(difficulties)})"
        raise did_you_mean(f"{flavor.game} flavor", task, tasks, hint=hint, listed_by="benchgen list atari_saber")
    return flavor


def _listed(values: tuple[int, ...]) -> str:
    return ", ".join(map(str, values))
