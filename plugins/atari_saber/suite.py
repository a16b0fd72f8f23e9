"""The ``atari_saber`` suite: 61 Atari games under the SABER protocol (Toromanoff et al. 2019)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchgen.errors import UsageError, did_you_mean
from benchgen.protocols import changed_parameters, described, recorded
from benchgen.scoring import PublishedAggregate, ReferenceScores
from benchgen.suite import EvaluationSchedule, Suite
from benchgen.tuned import TunedSettings, entries_for, load_tuned_file
from benchgen_atari_saber import env as saber_env
from benchgen_atari_saber import flavors, protocols, published, tables
from benchgen_atari_saber.scoring import AtariScorer, reference_tables

#: ALE's full action set (``ale_py.Action``), the suite's agent-visible action space
ACTION_MEANINGS = (
    "NOOP", "FIRE", "UP", "RIGHT", "LEFT", "DOWN", "UPRIGHT", "UPLEFT", "DOWNRIGHT", "DOWNLEFT",
    "UPFIRE", "RIGHTFIRE", "LEFTFIRE", "DOWNFIRE", "UPRIGHTFIRE", "UPLEFTFIRE", "DOWNRIGHTFIRE",
    "DOWNLEFTFIRE",
)  # fmt: skip


def _ale_version() -> str:
    try:
        import ale_py

        return str(ale_py.__version__)
    except ImportError:  # pragma: no cover - ale-py is a dependency
        return "not installed"


class AtariSaberSuite(Suite):
    """61 Atari 2600 games (ale-py ROM ids), SABER protocol, world-record normalization.

    Budgets are emulator frames (skipped frames included: 200M frames = 50M agent steps). The
    per-task score is SABER's/Machado's: the mean raw score of the last 100 training episodes.

    ``protocol``: the Atari protocol the suite runs (SABER by default; see ``protocols.py`` and
    :meth:`with_protocol`).

    Tasks ``game:mMdD`` play a game in another mode and difficulty (``flavors.py``; Machado et al.
    2018, section 5) under the same protocol; they are scored raw (``scoring.py``), and the
    ``machado_flavors`` split trains on default flavors and tests on the others.
    """

    name = "atari_saber"
    description = "61 Atari games + 80 modes/difficulties, SABER protocol (sticky, 18 actions, no life info, 100 h cap)"
    version = "1"
    budget_unit = "frames"
    frames_per_step = protocols.SABER.frameskip
    default_budget = protocols.SABER.training_frames  # SABER: 200M frames per game
    default_checkpoints = (10_000_000, 50_000_000, 100_000_000, 200_000_000)  # SABER Table 6 columns
    default_num_envs = 8  # a throughput choice, not a protocol value (SABER does not fix it)
    episode_fields = tuple(saber_env.SCORE_MARKS)  # ("score_5min", "score_30min")
    # SABER section 5 and Tables 7-9: the score at 5 minutes (Machado et al.'s cap), at 30 minutes (the DQN-era
    # cap) and uncapped, from the same episodes
    score_views = {"score_5min": "5 min", "score_30min": "30 min"}
    end_reasons = saber_env.END_REASONS
    task_score_rule = "mean raw score of the last 100 training episodes (SABER/Machado); inf if any is inf"
    default_split = protocols.SABER.split
    default_joint_split = "ale_train5"
    default_protocol = protocols.DEFAULT
    #: every run records their versions: the emulator, and OpenCV, which resizes the flavor backend's frames
    software = ("ale-py", "opencv-python-headless")

    #: build envs on ale-py's ALEInterface (flavor_backend.py), whose emulators agents may read
    #: (capabilities, emulators.py); False: ale-py's faster native vector env
    emulator_backend = False

    def __init__(self, protocol: protocols.AtariProtocol = protocols.SABER):
        self.atari_protocol = protocol
        self.frames_per_step = protocol.frameskip
        self.default_budget = protocol.training_frames  # SABER: 200M; Atari 100K: 400K
        self.default_split = protocol.split  # SABER: all 61 games; Atari 100K: its 26
        if protocol.task_score != protocols.SABER.task_score:
            self.task_score_rule = protocol.task_score

    def protocol_presets(self) -> dict[str, dict[str, Any]]:
        """SABER, Machado et al. 2018, DQN 2015, Rainbow 2018, ALE 2013 and Atari 100K, as their
        declaration lists them (``benchgen.protocols.described``)."""
        return {name: described(p) for name, p in protocols.PRESETS.items()}

    def with_protocol(self, preset: str, changes: Mapping[str, Any]) -> AtariSaberSuite:
        """This suite under ``preset`` with ``changes`` (``AtariProtocol.CHANGEABLE`` keys)."""
        chosen = protocols.preset(preset)
        custom = chosen.changed(changes)
        suite = type(self)(custom)
        # a value equal to the preset's changes nothing: such a protocol is the preset itself
        suite.protocol_changes = changed_parameters(chosen, custom, changes)
        if not suite.protocol_changes:
            suite = type(self)(chosen)
        return suite

    def tuned_settings(self, algorithm: str, task: str | None, joint: bool = False) -> list[TunedSettings]:
        """The suite's tuned settings (``tuned/<algorithm>.yaml``), then over them those published
        for the protocol (``AtariProtocol.tuned``: ``tuned/atari100k/rainbow.yaml`` makes a Rainbow
        run under ``atari100k`` Data-Efficient Rainbow unless the user picks another variant)."""
        entries = super().tuned_settings(algorithm, task, joint)
        folder = self.atari_protocol.tuned
        path = Path(__file__).parent / "tuned" / folder / f"{algorithm}.yaml"
        if folder and path.is_file():
            entries = [*entries, *entries_for(load_tuned_file(path), task, joint)]
        return entries

    def capabilities(self) -> frozenset[str]:
        """RAM, the palette screen, state clone/restore and per-frame actions (``emulators.py``)."""
        from benchgen_atari_saber.emulators import ATARI_CAPABILITIES

        return ATARI_CAPABILITIES

    def with_capabilities(self, names: Sequence[str]) -> AtariSaberSuite:
        """This suite (same protocol) building its envs on ale-py's ``ALEInterface``, the same
        protocol frame for frame, so that agents read the emulators (``emulators.py``)."""
        suite = type(self)(self.atari_protocol)
        suite.protocol_changes = dict(self.protocol_changes)
        suite.emulator_backend = True
        return suite

    def tasks(self) -> list[str]:
        """The 61 games of ``data/world_records.csv`` (each in its default mode and difficulty), then
        the other modes and difficulties of every game that has some, as ``game:mMdD`` (Machado et
        al. 2018, section 5; 365 from the shipped table of ale-py 0.12's lists, ``flavors.py``)."""
        return tables.game_ids() + flavors.flavor_tasks()

    def protocol(self) -> dict[str, Any]:
        """Every value that must match for two Atari runs to be compared (SABER Table 1 for the
        default protocol), with the protocol's name (``custom`` and its base for a changed one)."""
        p = self.atari_protocol
        custom = {"protocol": "custom", "protocol_base": p.name} if self.protocol_changes else {"protocol": p.name}
        return {
            "suite": self.name,
            "version": self.version,
            **custom,
            **recorded(p),  # every comparability value of the protocol, as its declaration records it
            # how ale-py and the env apply them, the same under every protocol
            "emulator": "ale-py",
            "ale_py_version": _ale_version(),
            "sticky_actions_per": "emulator frame",
            "num_actions": saber_env.NUM_ACTIONS if p.full_action_space else "the game's minimal set",
            "episodic_life": False,
            "fire_reset": False,
            "rollover_threshold": saber_env.ROLLOVER_THRESHOLD,
            "rollover_correction": "10**ceil(log10(|r|))",
            "score_marks_frames": dict(saber_env.SCORE_MARKS),
            "reward_clipping": False,
            "preprocessing": {
                "maxpool_last_2_frames": True,
                "grayscale": True,
                "resize": [84, 84],
                "resize_interpolation": "area (ale-py native)",
                "frame_stack": 4,
            },
            "skiing_fire_actions": "sent without the button (ale-py lists no fire button for Skiing)",
        }

    def check_task_available(self, task: str) -> None:
        """Unknown game, mode or difficulty, or a missing ROM -> ``UsageError`` that says how to fix it."""
        if flavors.is_flavor_task(task):
            flavors.check_flavor(task, [g for g in flavors.flavor_games() if g in tables.game_ids()])
            return
        if task not in tables.game_ids():
            raise did_you_mean("atari_saber game", task, tables.game_ids())
        try:
            from ale_py import roms

            path = roms.get_rom_path(task)
        except Exception as exc:  # ale-py missing or broken
            raise UsageError(f"cannot load ale-py for '{task}' ({exc}); run `pip install 'ale-py>=0.10'`")
        if path is None:
            raise UsageError(f"ale-py has no ROM for '{task}'; install ale-py>=0.10, which bundles the Atari ROMs")

    def make_env(self, tasks: Sequence[str], seed: int, *, mode: str = "train") -> saber_env.SaberVectorEnv:
        """One sub-environment per entry of ``tasks``. The modes differ only where the protocol
        says: the training-only life-loss signal, and the evaluation episode cap."""
        if mode not in ("train", "eval"):
            raise UsageError(f"mode must be 'train' or 'eval', not '{mode}'")
        for task in dict.fromkeys(tasks):
            self.check_task_available(task)
        p = self.atari_protocol
        cap = p.evaluation_episode_cap_frames if mode == "eval" and p.evaluation_episode_cap_frames else None
        backend = _interface_backend(p) if self.emulator_backend else None
        try:
            return saber_env.SaberVectorEnv(
                list(tasks), seed=seed, mode=mode, protocol=p, max_episode_frames=cap, backend_factory=backend
            )
        except ValueError as exc:  # minimal action sets of different sizes
            raise UsageError(str(exc)) from None

    def make_video_env(self, task: str, seed: int) -> saber_env.SaberVectorEnv:
        """One ``"eval"`` sub-environment on the ALEInterface backend (frame for frame ale-py's
        native env, see ``flavor_backend.py``), whose full-resolution screen :meth:`screens` reads."""

        self.check_task_available(task)
        p = self.atari_protocol
        cap = p.evaluation_episode_cap_frames or None
        return saber_env.SaberVectorEnv(
            [task], seed=seed, mode="eval", protocol=p, max_episode_frames=cap, backend_factory=_interface_backend(p)
        )

    def screens(self, env: saber_env.SaberVectorEnv):
        """The full RGB screens of an env from :meth:`make_video_env` (one task: 210x160 for most
        games, taller for a few, e.g. air_raid's 250 rows); None for the fast native env."""
        backends = [group.backend for group in env._groups]
        if not all(hasattr(b, "screens") for b in backends):
            return None
        shots = [backend.screens() for backend in backends]
        out = np.zeros((env.num_envs, *shots[0].shape[1:]), dtype=np.uint8)
        for group, shot in zip(env._groups, shots):
            out[group.index] = shot
        return out

    def evaluation_schedule(self) -> EvaluationSchedule | None:
        """The protocol's evaluation phases (DQN 2015, Rainbow 2018, ALE 2013; the first two score
        the best phase's agent re-evaluated after training); None for SABER and Machado et al.,
        whose scores come from the training episodes."""
        p = self.atari_protocol
        if not p.has_evaluation:
            return None
        return EvaluationSchedule(
            episodes=p.evaluation_episodes,
            frames=p.evaluation_frames,
            interval_frames=p.evaluation_interval_frames,
            epsilon=p.evaluation_epsilon,
            best_policy=p.best_policy,
        )

    def allows_infinite_scores(self) -> bool:
        """SABER's infinite-gameplay rule records a still-scoring capped episode as ``inf``; the other
        presets have no such rule."""
        return self.atari_protocol.infinite_gameplay

    def episode_budget(self) -> int | None:
        """ALE 2013's 5,000 training episodes per game; None for the protocols counted in frames."""
        return self.atari_protocol.training_episodes or None

    def scorer(self) -> AtariScorer:
        """World-record (default), human-beginner and SABER Rainbow-IQN normalization
        (:class:`~benchgen_atari_saber.scoring.AtariScorer`)."""
        return AtariScorer()

    def reference_scores(self) -> list[ReferenceScores]:
        """World records, human beginners and SABER's Rainbow-IQN by checkpoint
        (:func:`~benchgen_atari_saber.scoring.reference_tables`), and the papers' other tables
        (:func:`~benchgen_atari_saber.published.paper_reference_tables`: SABER Tables 4, 7-9,
        ALE 2013 Tables 1 and 4-5, Machado et al. 2018 Table 1)."""
        return [*reference_tables(), *published.paper_reference_tables()]

    def published_aggregates(self) -> list[PublishedAggregate]:
        """SABER Tables 2-3 and its text, ALE 2013's counts, recomputed from the shipped tables."""
        return published.published_aggregates()

    def action_semantics(self) -> dict[str, int]:
        """Indices in the full 18-action set. The joystick's single button (FIRE) is the jump in
        Atari platformers (Pitfall!, Montezuma's Revenge), so 'jump' = FIRE, 'right_jump' =
        RIGHTFIRE, 'left_jump' = LEFTFIRE. None under a minimal action set, whose indices differ
        from game to game."""
        if not self.atari_protocol.full_action_space:
            return None
        return {
            "noop": ACTION_MEANINGS.index("NOOP"),  # 0
            "right": ACTION_MEANINGS.index("RIGHT"),  # 3
            "left": ACTION_MEANINGS.index("LEFT"),  # 4
            "jump": ACTION_MEANINGS.index("FIRE"),  # 1
            "right_jump": ACTION_MEANINGS.index("RIGHTFIRE"),  # 11
            "left_jump": ACTION_MEANINGS.index("LEFTFIRE"),  # 12
        }


def _interface_backend(p: protocols.AtariProtocol):
    """A ``SaberVectorEnv`` backend factory on ale-py's ``ALEInterface`` (``flavor_backend.py``):
    a plain game plays its default mode and difficulty, frame for frame ale-py's native env."""
    from benchgen_atari_saber.flavor_backend import FlavorVectorEnv
    from benchgen_atari_saber.flavors import default_flavor, is_flavor_task

    def backend(task, num_envs, max_episode_frames, num_threads):
        if is_flavor_task(task):
            flavor_task = task
        else:
            flavor = default_flavor(task)
            flavor_task = f"{flavor.game}:m{flavor.mode}d{flavor.difficulty}"
        return FlavorVectorEnv(flavor_task, num_envs, **saber_env.ale_settings(p, max_episode_frames))

    return backend
