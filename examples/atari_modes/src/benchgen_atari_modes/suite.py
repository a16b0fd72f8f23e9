"""The ``atari_modes`` suite: its tasks, protocol, splits and scorer.

Generalization across flavors (Machado et al. 2018): an agent trains on the default mode and
difficulty of each game and is tested on the game's other modes and difficulties.

Scoring. Every task has its own random score (``data/random_scores.csv``, measured with
``benchgen run atari_modes random``, see the package README). The only published reference
points are for the default flavor of each game: the world record (TwinGalaxies, as collected by
SABER) and the human beginner score (Mnih et al. 2015), ``data/game_references.csv``. A task is
normalized against its own random score and its game's reference:

    s = (score - random[task]) / |reference[game] - random[task]|

so 0 is random play *on that flavor* and 1 is the game's default-flavor reference above it. A
flavor can be harder or easier than the default game, so normalized scores of non-default
flavors are a scale for comparing agents, not a claim that 1 is reachable. The scorer adds
``by_flavor``: the aggregates over the default flavors and over the other flavors separately
(their difference is the generalization gap).
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any

from benchgen.errors import did_you_mean
from benchgen.scoring import ReferenceScores, Scorer, aggregate, read_score_csv
from benchgen.suite import Split, Suite
from benchgen_atari_modes import catalogue, env

#: version of the suite's protocol (bump it when anything in ``protocol()`` changes meaning)
VERSION = "1"


def _data(name: str):
    return resources.files("benchgen_atari_modes").joinpath("data", name)


class AtariModesSuite(Suite):
    """ALE game modes and difficulties, read from ale-py."""

    name = "atari_modes"
    description = "ALE modes and difficulties (Machado et al. 2018): train on default flavors, test on the others"
    version = VERSION
    budget_unit = "frames"
    frames_per_step = env.FRAMES_PER_STEP
    default_budget = 50_000_000
    default_checkpoints = (10_000_000, 50_000_000)
    default_num_envs = 1
    episode_fields = ()
    end_reasons = ("game_over", "max_length")
    task_score_rule = "mean raw score of the last 100 training episodes (Machado et al. 2018)"
    default_split = "flavors"

    def tasks(self) -> list[str]:
        return [f.task for f in catalogue.flavors()]

    def protocol(self) -> dict[str, Any]:
        import ale_py

        return {
            "version": VERSION,
            "emulator": "ale-py",
            "ale_py_version": ale_py.__version__,
            "sticky_action_probability": env.STICKY_ACTION_PROBABILITY,
            "action_set": "full_18",
            "frames_per_step": env.FRAMES_PER_STEP,
            "max_pool_last_frames": 2,
            "observation": f"grayscale_{env.SCREEN_SIZE}x{env.SCREEN_SIZE}_stack{env.FRAME_STACK}",
            "max_episode_frames": env.MAX_EPISODE_FRAMES,
            "life_loss_signal": False,
            "noop_starts_max": 0,
            "games": list(catalogue.GAMES),
        }

    def check_task_available(self, task: str) -> None:
        if task not in self.tasks():
            raise did_you_mean(f"task of suite '{self.name}'", task, self.tasks())

    def make_env(self, tasks: Sequence[str], seed: int, *, mode: str = "train") -> env.AtariModesVectorEnv:
        for task in tasks:
            self.check_task_available(task)
        return env.AtariModesVectorEnv(tasks, seed)

    def splits(self) -> list[Split]:
        """``flavors`` (all games) and ``flavors_<game>`` (one game each): train on the default
        flavor, test on every other flavor. Built from ale-py's lists, so they always match it."""
        out = []
        groups = [("flavors", catalogue.GAMES)] + [(f"flavors_{g}", (g,)) for g in catalogue.GAMES]
        for name, games in groups:
            train = tuple(catalogue.default_flavor(g).task for g in games)
            test = tuple(f.task for f in catalogue.flavors() if f.game in games and f.task not in train)
            what = "each game's" if len(games) > 1 else f"{games[0]}'s"
            out.append(
                Split(
                    self.name,
                    name,
                    train,
                    test,
                    description=f"train on {what} default mode/difficulty, test on the other flavors",
                    source="benchgen_atari_modes (from ale-py's available modes and difficulties)",
                )
            )
        return out

    def scorer(self) -> AtariModesScorer:
        """Each flavor against its own random score and its game's reference (module docstring)."""
        return AtariModesScorer(random_scores(), game_references())


def game_references() -> dict[str, ReferenceScores]:
    """The per-game references, repeated for every flavor of the game."""
    with _data("game_references.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    by_game = {row["game"]: row for row in rows}
    tables = {
        "world_record": "world record of the game's default flavor (TwinGalaxies, July 2019, as in SABER)",
        "human": "human beginner score of the game's default flavor (Mnih et al. 2015)",
    }
    column = {"world_record": "world_record", "human": "human_beginner"}
    out = {}
    for name, description in tables.items():
        scores = {
            f.task: float(by_game[f.game][column[name]])
            for f in catalogue.flavors()
            if by_game.get(f.game, {}).get(column[name])
        }
        out[name] = ReferenceScores(name, scores, description)
    return out


def random_scores() -> dict[str, float]:
    """Per-task random scores shipped with the package (tasks ale-py no longer lists are dropped)."""
    known = set(AtariModesSuite().tasks())
    with resources.as_file(_data("random_scores.csv")) as path:
        return {t: s for t, s in read_score_csv(path).items() if t in known}


class AtariModesScorer(Scorer):
    """Normalizes each flavor against its own random score and its game's reference."""

    default_baseline = "world_record"

    def score(self, raw: Mapping[str, float], baseline: str | None = None) -> dict:
        result = super().score(raw, baseline)
        default = {catalogue.default_flavor(g).task for g in catalogue.GAMES}
        per_task = result["per_task"]
        result["by_flavor"] = {
            "default": aggregate({t: v for t, v in per_task.items() if t in default}),
            "other": aggregate({t: v for t, v in per_task.items() if t not in default}),
        }
        return result
