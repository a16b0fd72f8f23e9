"""Does ale-py 0.12 play the Atari 100K games frame for frame as atari-py 0.2.9 (ALE 0.6) did?

The published Atari 100K runs (SimPLe, DER, DrQ, Agarwal et al.'s DrQ(epsilon) through Dopamine in
2021) stepped the games through atari-py 0.2.x, which bundles ALE 0.6; benchgen steps them through
ale-py 0.12. Issue 26's Freeway study left this difference as one of the last candidates for
DrQ(epsilon)'s lower crossing rate here (docs/measurements/atari100k.md). This script settles it for the
emulator itself: for each game, both emulators load the same ROM file (ale-py's), with no sticky
actions, and play the same action sequences from ``reset_game``, frame by frame (no frame skip,
no preprocessing: those are the wrappers', not the emulator's); every frame's grayscale screen
(by digest), reward, lives and game-over flag are compared, and the first difference is named.
Measured: play (rewards, lives, game overs, lengths) identical on all eleven games; atari-py's
screens are not reproducible from one process to the next (ale-py's are), so a screen difference it
names may be atari-py's own draw rather than the versions' (docs/measurements/atari100k.md).

Actions: episode ``e`` of a game draws a preference over the minimal action set from a
Dirichlet(1) distribution, then holds actions drawn from it for 1 to 16 frames at a time, so that
some episodes lean on one action (on Freeway, UP: the chicken crosses and scores) and all of them
reach states random play rarely sees. Both sides draw from the same seeded numpy generator.

atari-py is not a benchgen dependency (its last release, 2020, has no wheel for Python 3.11 and
builds ALE 0.6 from source); install it beside, in a virtual environment of its own (about a minute
to build here):

    python3 -m venv /tmp/atari-py && /tmp/atari-py/bin/pip install numpy setuptools wheel \\
        && /tmp/atari-py/bin/pip install --no-build-isolation --no-binary :all: atari-py==0.2.9
    python benchmarks/ale_versions_match.py --atari-py-python /tmp/atari-py/bin/python

Usage: python benchmarks/ale_versions_match.py --atari-py-python PYTHON [--games freeway,...]
    [--episodes 3] [--max-frames 20000] [--seed 0]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

#: the issue's eight DER games and those run beyond them
GAMES = (
    "alien",
    "amidar",
    "crazy_climber",
    "freeway",
    "frostbite",
    "hero",
    "kangaroo",
    "ms_pacman",
    "road_runner",
    "kung_fu_master",
    "battle_zone",
)
FIELDS = ("screens", "rewards", "lives", "over")


def play(emulator: str, rom: str, episodes: int, max_frames: int, seed: int) -> dict:
    """One emulator's record of the game: minimal action set, and per episode per frame the screen
    digest, reward, lives and game-over flag (run inside the interpreter that has ``emulator``)."""
    if emulator == "atari_py":
        import atari_py

        ale, key, path = atari_py.ALEInterface(), str.encode, rom.encode()
    else:
        import ale_py

        ale, key, path = ale_py.ALEInterface(), str, rom
    ale.setInt(key("random_seed"), seed)
    ale.setFloat(key("repeat_action_probability"), 0.0)
    ale.loadROM(path)
    actions = list(ale.getMinimalActionSet())  # ale-py: its Action enum; atari-py: integers
    rng = np.random.default_rng(seed)
    record = {"actions": [int(getattr(a, "value", a)) for a in actions], "episodes": []}
    for _ in range(episodes):
        preference = rng.dirichlet(np.ones(len(actions)))
        ale.reset_game()
        episode = {field: [] for field in FIELDS}
        while len(episode["rewards"]) < max_frames and not ale.game_over():
            action = actions[rng.choice(len(actions), p=preference)]
            for _ in range(int(rng.integers(1, 17))):
                episode["rewards"].append(int(ale.act(action)))
                screen = np.ascontiguousarray(ale.getScreenGrayscale()).reshape(-1)
                episode["screens"].append(hashlib.blake2b(screen.tobytes(), digest_size=8).hexdigest())
                episode["lives"].append(int(ale.lives()))
                episode["over"].append(bool(ale.game_over()))
                if ale.game_over() or len(episode["rewards"]) >= max_frames:
                    break
        record["episodes"].append(episode)
    return record


def run_side(python: str, emulator: str, rom: str, args) -> dict:
    """:func:`play` in another interpreter; its record comes back through a JSON file."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "record.json"
        command = [python, __file__, "--play", emulator, "--rom", rom, "--out", str(out)]
        command += ["--episodes", str(args.episodes), "--max-frames", str(args.max_frames), "--seed", str(args.seed)]
        done = subprocess.run(command, capture_output=True, text=True)  # the emulators' banners stay out
        if done.returncode:
            raise SystemExit(f"{emulator} failed on {rom}:\n{done.stderr[-2000:]}")
        return json.loads(out.read_text())


def first_difference(a: dict, b: dict) -> str | None:
    """Where two records part, in words; None when they agree frame for frame."""
    if a["actions"] != b["actions"]:
        return f"minimal action sets differ: {a['actions']} against {b['actions']}"
    for e, (x, y) in enumerate(zip(a["episodes"], b["episodes"], strict=True)):
        for frame in range(min(len(x["rewards"]), len(y["rewards"]))):
            for field in FIELDS:
                if x[field][frame] != y[field][frame]:
                    return f"episode {e}, frame {frame}: {field} {x[field][frame]} against {y[field][frame]}"
        if len(x["rewards"]) != len(y["rewards"]):
            return f"episode {e}: {len(x['rewards'])} frames against {len(y['rewards'])}"
    return None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--atari-py-python", help="an interpreter with atari-py 0.2.9 installed")
    parser.add_argument("--games", default=",".join(GAMES))
    parser.add_argument("--episodes", type=int, default=3)
    parser.add_argument("--max-frames", type=int, default=20_000, help="frames per episode at most")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--play", choices=("atari_py", "ale_py"), help=argparse.SUPPRESS)
    parser.add_argument("--rom", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.play:
        Path(args.out).write_text(json.dumps(play(args.play, args.rom, args.episodes, args.max_frames, args.seed)))
        return
    if not args.atari_py_python:
        raise SystemExit("give --atari-py-python: an interpreter with atari-py 0.2.9 (see this script's docstring)")
    from ale_py import __version__ as ale_py_version
    from ale_py import roms

    games = args.games.split(",")
    unknown = [game for game in games if roms.get_rom_path(game) is None]
    if unknown:
        raise SystemExit(f"ale-py has no ROM for {', '.join(unknown)}; games are ROM names such as freeway, ms_pacman")
    try:
        atari_py_version = subprocess.run(
            [args.atari_py_python, "-c", "import importlib.metadata as m; print(m.version('atari-py'))"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        raise SystemExit(
            f"{args.atari_py_python} is not a Python with atari-py installed (see this script's docstring)"
        ) from None
    print(
        f"ale-py {ale_py_version} against atari-py {atari_py_version}; {args.episodes} episodes a game, seed {args.seed}"
    )
    print("| game | frames compared | points | lives lost | game overs | first difference |")
    print("|---|---:|---:|---:|---:|---|")
    differing = 0
    for game in games:
        rom = str(roms.get_rom_path(game))
        ours = run_side(sys.executable, "ale_py", rom, args)
        theirs = run_side(args.atari_py_python, "atari_py", rom, args)
        difference = first_difference(ours, theirs)
        differing += difference is not None
        frames = sum(len(e["rewards"]) for e in ours["episodes"])
        points = sum(sum(e["rewards"]) for e in ours["episodes"])
        lost = sum(sum(max(0, p - q) for p, q in zip(e["lives"], e["lives"][1:])) for e in ours["episodes"])
        overs = sum(e["over"][-1] for e in ours["episodes"] if e["over"])
        print(f"| {game} | {frames:,} | {points:,} | {lost} | {overs} | {difference or 'none'} |")
    print(f"{differing} of {len(games)} games differ")


if __name__ == "__main__":
    main()
