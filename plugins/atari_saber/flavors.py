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
``getAvailableDifficulties``) for each of the suite's 61 games, shipped as ``data/ale_modes.csv``
(written from ale-py 0.12.1 by :func:`write_table`; ``tests/atari_saber/test_atari_flavors.py``
compares it with the installed ale-py). Asking ale-py loads each ROM (about 70 ms a game, 4.6 s
for the 61), which every ``benchgen`` command that lists or validates a task would pay; the table
costs a file read. The 61 games have 426 flavors; 47 have more than one, and their 365 other
flavors are tasks of the suite.

Which flavors a study plays is a split's business. ``splits/machado_flavors.yaml`` holds
:data:`SPLIT_GAMES`, each with its source: the four games of Farebrother, Machado and Bowling
2018 ("Generalization and Regularization in DQN"), who train on the default flavor and test on
others, and Pong, which no paper names: benchgen's own choice.
"""

from __future__ import annotations

import csv
import functools
import re
from dataclasses import dataclass
from pathlib import Path

from benchgen.errors import UsageError, did_you_mean

#: the shipped table: ale-py ROM id, its modes and its difficulties (space-separated, ale-py's order)
MODES_CSV = Path(__file__).resolve().parent / "data" / "ale_modes.csv"

FAREBROTHER_2018 = "Farebrother, Machado and Bowling 2018, Generalization and Regularization in DQN"
BENCHGEN_CHOICE = "benchgen's choice (no paper names it)"
#: the games of the ``machado_flavors`` split and where each comes from. Machado et al.'s extended
#: abstract shows Freeway's modes (Figure 2) and names no game set; the flavor study that followed
#: it (Farebrother et al.) plays Breakout, Freeway, Hero and Space Invaders. Pong, whose flavors
#: are mostly difficulties, is benchgen's addition. 80 flavors besides the defaults.
SPLIT_GAMES: dict[str, str] = {
    "breakout": FAREBROTHER_2018,
    "freeway": FAREBROTHER_2018,
    "hero": FAREBROTHER_2018,
    "pong": BENCHGEN_CHOICE,
    "space_invaders": FAREBROTHER_2018,
}

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
def table() -> dict[str, tuple[tuple[int, ...], tuple[int, ...]]]:
    """game -> (modes, difficulties), from the shipped ``data/ale_modes.csv``, in its order."""
    with MODES_CSV.open(newline="") as handle:
        return {
            row["game"]: (tuple(map(int, row["modes"].split())), tuple(map(int, row["difficulties"].split())))
            for row in csv.DictReader(handle)
        }


def available(game: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(modes, difficulties) of ``game``, in ale-py's order, from the shipped table."""
    try:
        return table()[game]
    except KeyError:
        raise UsageError(f"no modes and difficulties are known for '{game}' (not one of the suite's games)") from None


def flavor_games() -> tuple[str, ...]:
    """The games with more than one flavor, in the table's (alphabetical) order."""
    return tuple(g for g, (modes, difficulties) in table().items() if len(modes) * len(difficulties) > 1)


def ale_reports(game: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(modes, difficulties) the installed ale-py reports for ``game`` (loads its ROM): what the
    shipped table must hold."""
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


def flavor_tasks(games: tuple[str, ...] | None = None) -> list[str]:
    """The non-default flavors of ``games`` (default: every game that has some) as task names, game
    by game (the defaults are the plain game names)."""
    games = flavor_games() if games is None else games
    return [f.task for game in games for f in game_flavors(game) if f != default_flavor(game)]


def write_table(games: list[str], path: Path = MODES_CSV) -> None:
    """Write the table for ``games`` from the installed ale-py (after an ale-py upgrade that changes
    a game's modes: ``python -c "from benchgen_atari_saber import flavors, tables;
    flavors.write_table(tables.game_ids())"``)."""
    with path.open("w", newline="") as handle:
        out = csv.writer(handle, lineterminator="\n")
        out.writerow(["game", "modes", "difficulties"])
        for game in games:
            modes, difficulties = ale_reports(game)
            out.writerow([game, " ".join(map(str, modes)), " ".join(map(str, difficulties))])


def task_flavor(task: str) -> Flavor:
    """The flavor a task plays: its own for ``game:mMdD``, the default one for a plain game."""
    return parse_task(task) if is_flavor_task(task) else default_flavor(task)


def check_flavor(task: str, games: list[str]) -> Flavor:
    """The flavor ``task`` names, after checking it exists; one-line ``UsageError`` otherwise.

    ``games`` are the games that may have flavors. An explicit default flavor is refused with the
    name to use instead, an unknown mode or difficulty with ale-py's lists and a suggestion.
    """
    flavor = parse_task(task)
    if flavor.game in table() and flavor.game not in games:
        raise UsageError(
            f"{flavor.game} has one mode and one difficulty, no other flavor: name the task '{flavor.game}'"
        )
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
