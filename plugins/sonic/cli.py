"""``benchgen sonic import-roms DIR``: import the user's Sonic ROMs into stable-retro."""

from __future__ import annotations

import argparse

from benchgen_sonic.levels import GAME_TITLES, GAMES, LEVELS
from benchgen_sonic.roms import MAX_ROM_BYTES, import_roms, rom_status


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``sonic`` command group to benchgen's command line."""
    sonic = subparsers.add_parser("sonic", help="Sonic suite tools (importing the game ROMs)")
    commands = sonic.add_subparsers(dest="sonic_command", metavar="COMMAND", required=True)
    imp = commands.add_parser(
        "import-roms",
        help="import your Sonic ROMs into stable-retro",
        description="Scan DIR (and zip archives in it) for the ROMs of Sonic The Hedgehog, Sonic 2 "
        "and Sonic 3 & Knuckles (Genesis), recognized by SHA-1 as stable-retro does, copy them into "
        "stable-retro's data folder, and report which of the three games can now be played. "
        f"Only regular files (and zip members) of at most {MAX_ROM_BYTES // 2**20} MiB are read: links, "
        "FIFOs and devices are skipped, each named in one line.",
    )
    imp.add_argument("directory", metavar="DIR", help="folder holding ROM files (.md, .bin, .gen, .smd, or zips)")
    imp.set_defaults(func=cmd_import_roms)


def cmd_import_roms(args: argparse.Namespace) -> int:
    """Import, then print one line per game; exit 0 if at least one game is playable."""
    report = import_roms(args.directory)
    print(f"scanned {report.scanned} file(s) in {args.directory}")
    for game, source in report.imported.items():
        print(f"imported {game} from {source}")
    for name, sha1 in report.unrecognized:
        print(f"not a supported Sonic ROM: {name} (SHA-1 {sha1})")
    for name, why in report.skipped:
        print(f"skipped {name}: {why}")
    if not report.imported:
        print("no Sonic ROM found")
    print("games:")
    available = 0
    for game in GAMES:
        status = rom_status(game)
        levels = sum(level.game == game for level in LEVELS)
        if status.ok:
            available += 1
            print(f"  {game:30} available ({levels} levels)")
        else:
            print(f"  {game:30} not available: {status.status} ({GAME_TITLES[game]})")
    return 0 if available else 1
