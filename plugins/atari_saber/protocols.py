"""The published Atari evaluation protocols as named presets (``benchgen protocols atari_saber``).

SABER (section 2) and Machado et al. 2018 argue that Atari numbers differ more by protocol than
by agent. Each preset below is one paper's protocol, every parameter documented with its source;
a run picks one with ``--protocol NAME`` (or a YAML file that starts from one and changes some
parameters: a *custom* protocol, labelled so in its run record and report). The suite's
``protocol()`` lists the chosen preset's values, so ``compare`` refuses to mix protocols.

The parameters are declared once, as the fields of :class:`AtariProtocol`: each default is SABER's
value (the base protocol, the suite's default) with its source, and each field's metadata say what
the field is for (``role``), how a protocol file's value is checked (a ``check`` makes the parameter
changeable), which ale-py setting applies it (``ale``) and how the run record writes it
(``record``). Everything else is derived from that declaration (``benchgen.protocols``' helpers
and :meth:`AtariProtocol.ale_values`): the parameters a protocol file may change, the run record's
protocol section, the ``benchgen protocols`` table and the env's ale-py settings. The other presets are SABER (Rainbow 2018: DQN 2015) with the values in which they
differ, each with its source.

Where a paper leaves a value open, ``open_values`` of the preset says so and what benchgen chose.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from benchgen.errors import UsageError, did_you_mean
from benchgen.protocols import (
    COMPARED,
    IDENTITY,
    NOTE,
    RUN_DEFAULT,
    changeable,
    declared,
    declared_sources,
    declared_values,
)

#: the largest frame or episode count a protocol may give (ale-py's frame counters are C ints:
#: 2^31 - 1 frames is over 9,900 hours of play, 460 times SABER's 100-hour cap)
MAX_COUNT = 2**31 - 1


def _flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise UsageError(f"protocol parameter {name} must be true or false, not {value!r}")
    return value


def _probability(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise UsageError(f"protocol parameter {name} must be a number in [0, 1], not {value!r}")
    return float(value)


def _count(lowest: int) -> Callable[[str, Any], int]:
    """The check of a whole number from ``lowest`` to :data:`MAX_COUNT`."""

    def check(name: str, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < lowest:
            raise UsageError(f"protocol parameter {name} must be a whole number >= {lowest}, not {value!r}")
        if value > MAX_COUNT:  # ale-py counts frames in a C int; a larger cap would wrap, not hold
            raise UsageError(f"protocol parameter {name} must be at most {MAX_COUNT:,}, not {value:,}")
        return value

    return check


def _frameskip(name: str, value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value > 30:
        raise UsageError(f"protocol parameter {name} must be at most 30, not {value}")
    return _count(1)(name, value)


#: the sources of SABER's values that say the rule is absent
_FRAMES_ONLY = "none: the training budget is counted in frames"
_TRAINING_SCORES = "none: scores come from the training episodes"


@dataclass(frozen=True)
class AtariProtocol:
    """One Atari evaluation protocol, by default SABER's. Environment parameters first, then how
    scores are made, then the defaults a run takes, then the notes."""

    name: str = declared("saber", IDENTITY)
    """the preset's name (``--protocol NAME``)"""
    version: str = declared("1", record=lambda v: {"protocol_version": v})
    """bumped whenever a value of this preset changes, so old runs are not mixed with new ones"""
    sticky_action_probability: float = declared(
        0.25,
        source="SABER Table 1 (Machado et al.'s sticky actions)",
        check=_probability,
        ale="repeat_action_probability",
    )
    """probability that the emulator repeats the previous action, decided at every emulator frame
    (Machado et al. 2018's sticky actions; 0 = a deterministic emulator)"""
    frameskip: int = declared(
        4,
        source="SABER appendix B.1: Rainbow's and IQN's preprocessing, action repeat 4 (section 5: what SABER "
        "leaves open follows Rainbow and IQN)",
        check=_frameskip,
        ale="frameskip",
    )
    """emulator frames per agent action (action repeat); the observation max-pools the last two"""
    full_action_space: bool = declared(True, source="SABER Table 1: 18 actions", check=_flag, ale="full_action_space")
    """all 18 joystick actions for every game (True), or the game's minimal action set (False)"""
    noop_max: int = declared(0, source="SABER Table 1: same starting state", check=_count(0), ale="noop_max")
    """at most this many no-op frames, drawn uniformly, start each episode (0 = none); the
    no-op frames are the emulator's, before the agent's first observation"""
    life_loss_ends_training_episodes: bool = declared(
        False,
        source="SABER Table 1: life information not allowed",
        check=_flag,
        record=lambda v: {"life_info": v, "life_loss_ends_training_episodes": v},
    )
    """training only: the agent is told its episode terminated when it loses a life; the game goes
    on, and the recorded episode (its score and length) still runs to game over (benchgen's env
    signals it, not ale-py, whose ``episodic_life`` would restart the game)"""
    max_episode_frames: int = declared(
        21_600_000,
        source="SABER Table 1: 100 hours at 60 frames/s",
        check=_count(1),
        ale="max_num_frames_per_episode",
    )
    """an episode is truncated after this many emulator frames (the episode cap)"""
    max_stuck_frames: int = declared(18_000, source="SABER Table 1: max stuck time 5 minutes", check=_count(0))
    """SABER's max stuck time: an episode with no non-zero reward for this many frames is
    truncated (0 = no such rule)"""
    infinite_gameplay: bool = declared(
        True,
        source="SABER section 3.2 (infinite scores capped at 200% of the record in the mean) and appendix E "
        "(Table 6: still scoring when the 100-hour cap ends the episode)",
        check=_flag,
        record=lambda v: {
            "infinite_gameplay_rule": "cap reached with a positive reward within the last max_stuck_frames"
            if v
            else None
        },
    )
    """SABER: an episode cut by the cap while still scoring is recorded with score inf"""
    task_score: str = declared(
        "mean raw score of the last 100 training episodes (inf if any is inf)",
        source="SABER section 3.2: mean of 100 consecutive training episodes",
    )
    """how a task's score is made from the recorded episodes (not changeable: it follows
    ``best_policy`` in a custom protocol)"""
    training_episodes: int = declared(0, source=_FRAMES_ONLY, check=_count(0))
    """training episodes per game after which training ends, short of the frame budget (0: the
    budget is frames only)"""
    evaluation_episodes: int = declared(0, source=_TRAINING_SCORES, check=_count(0))
    """episodes per game in each separate evaluation phase (0: see ``evaluation_frames``; both 0:
    no evaluation phase, scores come from the training episodes)"""
    evaluation_frames: int = declared(0, source=_TRAINING_SCORES, check=_count(0))
    """emulator frames per game in each evaluation phase, the episodes started within them played
    to their end (0: phases counted in ``evaluation_episodes``)"""
    evaluation_interval_frames: int = declared(0, source=_TRAINING_SCORES, check=_count(0))
    """training frames between evaluation phases; one phase also follows training (0: only that one)"""
    evaluation_epsilon: float = declared(0.0, source=_TRAINING_SCORES, check=_probability)
    """probability of a random action at each evaluation step (0: the agent's greedy policy,
    noisy networks' noise off)"""
    evaluation_episode_cap_frames: int = declared(0, source=_TRAINING_SCORES, check=_count(0))
    """evaluation episodes are truncated after this many emulator frames (0: ``max_episode_frames``)"""
    best_policy: bool = declared(
        False,
        source=_TRAINING_SCORES,
        check=_flag,
        # recorded only where it is on: the runs of the presets that never scored the best policy
        # keep the protocol they recorded
        record=lambda v: {"best_policy": "best evaluation round's agent, re-evaluated after training"} if v else {},
    )
    """score the best policy found: the agent of the evaluation round with the highest mean raw
    score plays one more phase of a round's quota after training, with new seeds, and those
    episodes are the score (Mnih et al. 2015 and Hessel et al. 2018 as Machado et al. 2018
    section 3 describe them; False: the last phase, the agent at the end of training)"""
    training_frames: int = declared(200_000_000, RUN_DEFAULT)
    """the training budget per game a run takes unless ``--frames`` says otherwise (SABER: 200M
    frames); a default, not a comparability value: runs record the budget they ran"""
    split: str = declared("all", RUN_DEFAULT)
    """the split a run takes when it names no ``--tasks`` or ``--split`` (``splits/<name>.yaml``):
    the benchmark's own games where the protocol comes with a fixed set (Atari 100K's 26); a
    default, not a comparability value: runs record the tasks they ran"""
    tuned: str = declared("", RUN_DEFAULT, listed=False)
    """a folder of agent settings published for this protocol (``tuned/<folder>/<algorithm>.yaml``,
    over the suite's own ``tuned/<algorithm>.yaml``): Atari 100K's Rainbow is Data-Efficient
    Rainbow, its DQN DrQ(epsilon); empty: none. Defaults a run records, not comparability values
    (kept off the ``benchgen protocols`` table, as it always was)"""
    sources: Mapping[str, str] = declared(dict, NOTE)
    """parameter -> where the value comes from (a value kept from the declaration and not
    documented by the preset: the declaration's source, filled in when the preset is made)"""
    open_values: Mapping[str, str] = declared(dict, NOTE)
    """parameter -> what the paper leaves open and what benchgen chose"""

    #: parameters a custom protocol YAML may change (those declared with a ``check``; the rest
    #: define the preset itself), filled in from the declaration below the class
    CHANGEABLE: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self) -> None:
        # the values a preset keeps from the declaration and says nothing of: the declaration's sources
        object.__setattr__(self, "sources", declared_sources(self))

    @property
    def has_evaluation(self) -> bool:
        """Whether scores come from separate evaluation phases."""
        return self.evaluation_episodes > 0 or self.evaluation_frames > 0

    def parameters(self) -> dict[str, Any]:
        """The values that make two runs comparable (the fields declared ``COMPARED``)."""
        return declared_values(self, COMPARED)

    def ale_values(self) -> dict[str, Any]:
        """The values ale-py applies, by the names of its ``AtariVectorEnv`` settings."""
        return {f.metadata["ale"]: getattr(self, f.name) for f in dataclasses.fields(self) if "ale" in f.metadata}

    def changed(self, changes: Mapping[str, Any]) -> AtariProtocol:
        """A custom protocol: this preset with ``changes`` (validated; one-line ``UsageError``)."""
        checks, values = changeable(type(self)), {}
        for key, value in changes.items():
            if key not in checks:
                raise did_you_mean(
                    "protocol parameter", key, tuple(checks), hint="These are the ones a protocol file may change."
                )
            values[key] = checks[key](key, value)
        if not values:
            return self
        if values.get("best_policy", self.best_policy) != self.best_policy:  # the score is another phase's
            values["task_score"] = (
                f"mean raw score of {_BEST_ROUND_SCORE}"
                if values["best_policy"]
                else "mean raw score of the last evaluation round's episodes (the agent at the end of training)"
            )
        custom = dataclasses.replace(self, **values)
        custom.validate()
        return custom

    def validate(self) -> None:
        """Values the environment can apply (``UsageError`` otherwise)."""
        for name, check in changeable(type(self)).items():
            check(name, getattr(self, name))
        if self.infinite_gameplay and not self.max_stuck_frames:
            raise UsageError(
                "infinite_gameplay needs max_stuck_frames > 0: an episode is infinite when the cap cuts it "
                "with a positive reward within the last max_stuck_frames (SABER section 3.2 and appendix E)"
            )
        if self.evaluation_episodes and self.evaluation_frames:
            raise UsageError("give evaluation_episodes or evaluation_frames, not both (set the other to 0)")
        if not self.has_evaluation and (
            self.evaluation_interval_frames or self.evaluation_episode_cap_frames or self.best_policy
        ):
            raise UsageError(
                "evaluation_interval_frames, evaluation_episode_cap_frames and best_policy need evaluation phases: "
                "set evaluation_episodes or evaluation_frames"
            )
        for mark in (18_000, 108_000):  # the 5- and 30-minute score views are taken on exact frames
            if mark % self.frameskip:
                raise UsageError(
                    f"frameskip {self.frameskip} does not divide the {mark:,}-frame score mark; choose a "
                    "divisor of 18,000 (e.g. 3, 4, 5 or 6)"
                )


AtariProtocol.CHANGEABLE = tuple(changeable(AtariProtocol))


#: what every preset states, whether or not it differs from its base
_ALWAYS_STATED = ("name", "version", "sources", "open_values")


def _preset(base: AtariProtocol, **stated: Any) -> AtariProtocol:
    """A preset: ``base`` with its name, version and notes, and the values in which it differs
    from ``base`` (a value stated equal to the base's is an error: a preset says how it differs)."""
    same = [k for k, v in stated.items() if k not in _ALWAYS_STATED and getattr(base, k) == v]
    if same:
        raise ValueError(f"preset {stated.get('name')} states {same} at {base.name}'s values")
    made = dataclasses.replace(base, **stated)
    made.validate()
    return made


_SABER_SECTION_2 = "SABER (Toromanoff et al. 2019), section 2"
#: the two rules SABER introduced (Table 1, section 3.1), absent from the protocols before it
_NO_SABER_RULES = {
    "max_stuck_frames": "none: SABER's max stuck time came later",
    "infinite_gameplay": "none: SABER's infinite-gameplay rule came later",
}
_MACHADO = "Machado et al. 2018 (Revisiting the ALE)"
#: the episodes that score a protocol with ``best_policy`` (a round's quota, whatever it is)
_BEST_ROUND_SCORE = "the best evaluation round's agent, re-evaluated in one more round after training"
#: what Machado et al. and SABER say of scoring the best policy found, cited by the presets that do
_BEST_POLICY = (
    f"{_MACHADO}, section 3, 'Evaluation of the Best Policy': Mnih et al. evaluated regularly during training "
    "and, at its end, evaluated the best policy in a number of episodes with no learning; the best score is "
    "biased upwards, so the agent at that point is to be evaluated a second, independent time (SABER section 2.1, "
    "'Reporting performance': the bias of reporting the best policy, common practice in DQN and Rainbow)"
)

#: the base protocol: the declaration's defaults, documented by its sources
SABER = AtariProtocol()

MACHADO2018 = _preset(
    SABER,
    name="machado2018",
    version="1",
    max_episode_frames=18_000,
    max_stuck_frames=0,
    infinite_gameplay=False,
    task_score="mean raw score of the last 100 training episodes",
    sources={
        **_NO_SABER_RULES,
        "sticky_action_probability": f"{_MACHADO}, section 4.2 and Table 1: sticky actions, stickiness 0.25",
        "full_action_space": "SABER section 2.1, 'Action set': Machado et al.'s recommendation of all 18 actions "
        "(not restated in their extended abstract)",
        "life_loss_ends_training_episodes": f"{_MACHADO}, section 2, 'Episode Termination': game over only",
        "max_episode_frames": f"{_SABER_SECTION_2}.2: 5 minutes in Revisiting ALE",
        "task_score": f"{_MACHADO}, section 3 ('Performance During Training') and Table 1: the last 100 "
        "training episodes",
    },
    open_values={
        "frameskip": "not restated in the extended abstract; benchgen: 4, the DQN setup Machado et al. evaluate",
        "noop_max": "sticky actions replace no-op starts as the source of randomness; benchgen: 0",
    },
)

DQN2015 = _preset(
    SABER,
    name="dqn2015",
    version="2",
    sticky_action_probability=0.0,
    full_action_space=False,
    noop_max=30,
    life_loss_ends_training_episodes=True,
    max_episode_frames=108_000,
    max_stuck_frames=0,
    infinite_gameplay=False,
    task_score=f"mean raw score of {_BEST_ROUND_SCORE}",
    evaluation_episodes=30,
    evaluation_interval_frames=4_000_000,
    evaluation_epsilon=0.05,
    evaluation_episode_cap_frames=18_000,
    best_policy=True,
    sources={
        **_NO_SABER_RULES,
        "evaluation_frames": "none: the evaluation is counted in episodes",
        "sticky_action_probability": "Mnih et al. 2015: the deterministic ALE of the time",
        "frameskip": "Mnih et al. 2015, Methods: the agent sees and acts on every 4th frame",
        "full_action_space": f"Mnih et al. 2015 (minimal action set); {_SABER_SECTION_2}.1, 'Action set'",
        "noop_max": "Mnih et al. 2015, Methods: up to 30 no-op actions at the start of evaluation episodes",
        "life_loss_ends_training_episodes": f"{_SABER_SECTION_2}.1, 'End of an episode'; {_MACHADO}, section 2, "
        "'Episode Termination'",
        "evaluation_episodes": "Mnih et al. 2015: the trained agent plays 30 evaluation episodes",
        "evaluation_epsilon": "Mnih et al. 2015: epsilon-greedy with epsilon 0.05 during evaluation",
        "evaluation_episode_cap_frames": "Mnih et al. 2015: evaluation episodes of up to 5 minutes",
        "task_score": f"Mnih et al. 2015: the average score of the evaluation episodes; {_BEST_POLICY}",
        "best_policy": _BEST_POLICY,
    },
    open_values={
        "max_episode_frames": "the training episode cap is not stated; benchgen: 108,000 frames (30 minutes)",
        "noop_max": "stated for evaluation; benchgen applies it to training episodes too, as DQN's code did",
        "evaluation_interval_frames": "Mnih et al. evaluated regularly during training (Machado et al. 2018, "
        "section 3) without an interval benchgen has a source for; benchgen: every 4M frames (1M agent steps, "
        "Hessel et al. 2018's interval), each round 30 episodes like the final evaluation",
        "best_policy": "the best round is the one of highest mean raw score (the earliest of equal rounds); its "
        "re-evaluation plays 30 episodes, the final evaluation's number, with seeds no round used",
    },
)

#: DQN 2015's protocol with Hessel et al.'s evaluation phases, counted in frames
RAINBOW2018 = _preset(
    DQN2015,
    name="rainbow2018",
    version="2",
    evaluation_episodes=0,
    evaluation_frames=500_000,
    evaluation_epsilon=0.0,
    evaluation_episode_cap_frames=108_000,
    sources={
        **{k: v for k, v in DQN2015.sources.items() if not k.startswith("evaluation") and k != "task_score"},
        "evaluation_episodes": "none: each evaluation phase is counted in frames",
        "evaluation_frames": "Hessel et al. 2018: each evaluation phase plays 500K frames",
        "evaluation_interval_frames": "Hessel et al. 2018: learning is suspended every 1M agent steps (4M frames)",
        "evaluation_episode_cap_frames": "Hessel et al. 2018: evaluation episodes truncated at 108K frames",
    },
    open_values={
        "max_episode_frames": "the training episode cap is not stated; benchgen: 108,000 frames (30 minutes)",
        "evaluation_epsilon": "not stated; benchgen: the greedy policy, noisy networks' noise off",
        "task_score": "Hessel et al. scored the best agent found in their evaluation phases (SABER section 2.1, "
        "'Reporting performance'); benchgen re-evaluates it after training in a phase of a round's 500K frames, "
        "with seeds no round used, and scores that phase; the report shows it beside the best and the last round",
        "best_policy": "the best phase is the one of highest mean raw score (the earliest of equal phases)",
    },
)

ALE2013 = _preset(
    SABER,
    name="ale2013",
    version="1",
    sticky_action_probability=0.0,
    frameskip=5,
    max_episode_frames=18_000,
    max_stuck_frames=0,
    infinite_gameplay=False,
    task_score="mean raw score of the 500 evaluation episodes",
    training_episodes=5_000,
    evaluation_episodes=500,
    sources={
        **_NO_SABER_RULES,
        "sticky_action_probability": "Bellemare et al. 2013: the deterministic ALE",
        "life_loss_ends_training_episodes": "Bellemare et al. 2013, section 3.1.2: episodes end at end of game",
        "task_score": "Bellemare et al. 2013, section 3.1.2: average score of the evaluation episodes",
        "frameskip": "Bellemare et al. 2013, section 3.1.2 and appendix C: the agent acts every 5 frames",
        "max_episode_frames": "Bellemare et al. 2013, section 3.1.2: 5 minutes (18,000 frames)",
        "full_action_space": "Bellemare et al. 2013, section 2.2: the joystick's 18 actions (the minimal sets are "
        "not used)",
        "noop_max": "Bellemare et al. 2013, section 3.1.2: the episode starts on the frame after reset",
        "training_episodes": "Bellemare et al. 2013, appendix C: 5,000 training episodes per trial",
        "evaluation_episodes": "Bellemare et al. 2013, appendix C: 500 evaluation episodes, no learning",
        "evaluation_frames": "none: the evaluation is counted in episodes",
        "evaluation_interval_frames": "Bellemare et al. 2013, section 3.1.2: one evaluation, after training",
        "best_policy": "Bellemare et al. 2013, section 3.1.2: the agent at the end of training is evaluated",
        "evaluation_episode_cap_frames": "Bellemare et al. 2013, section 3.1.2: every episode's 5-minute cap",
    },
    open_values={
        "evaluation_epsilon": "whether evaluation episodes explore is not stated (its Sarsa explored with "
        "epsilon 0.05, appendix C); benchgen: the greedy policy",
    },
)

_KAISER = "Kaiser et al. 2020 (SimPLe), section 6 (the Atari 100K setup)"
_DOPAMINE_100K = "Dopamine labs/atari_100k configs (DER.gin, DrQ_eps.gin), as run by Agarwal et al. 2021"

ATARI100K = _preset(
    SABER,
    name="atari100k",
    version="1",
    sticky_action_probability=0.0,
    full_action_space=False,
    life_loss_ends_training_episodes=True,
    max_episode_frames=108_000,
    max_stuck_frames=0,
    infinite_gameplay=False,
    task_score="mean raw score of the 100 evaluation episodes after training",
    evaluation_episodes=100,
    evaluation_epsilon=0.001,
    training_frames=400_000,
    split="atari100k",
    tuned="atari100k",
    sources={
        **_NO_SABER_RULES,
        "sticky_action_probability": f"{_KAISER}: no sticky actions; {_DOPAMINE_100K}: sticky_actions = False",
        "frameskip": f"{_KAISER}: frame skip 4 with max-pooling over the last two frames",
        "life_loss_ends_training_episodes": f"{_DOPAMINE_100K}: AtariPreprocessing.terminal_on_life_loss = True",
        "max_episode_frames": f"{_DOPAMINE_100K}: max_steps_per_episode = 27,000 agent steps (108,000 frames)",
        "evaluation_episodes": f"{_DOPAMINE_100K}: num_eval_episodes = 100; Agarwal et al. 2021, section 3",
        "evaluation_frames": "none: the evaluation is counted in episodes",
        "evaluation_interval_frames": "Kaiser et al. 2020: one evaluation, after the 100K training steps",
        "best_policy": "Agarwal et al. 2021: the final agent's evaluation episodes",
        "evaluation_epsilon": f"{_DOPAMINE_100K}: epsilon_eval = 0.001 (DrQ(epsilon), Agarwal et al. 2021)",
        "evaluation_episode_cap_frames": "every episode's 27,000-step cap (max_episode_frames)",
        "training_frames": f"{_KAISER}: 100K agent interactions = 400K frames per game",
        "split": f"{_KAISER}, Table 1: the 26 games (the same 26 in DER, CURL, DrQ, SPR and Agarwal et al. 2021)",
        "task_score": "Agarwal et al. 2021: the mean score of the evaluation episodes, per game and run",
    },
    open_values={
        "full_action_space": "Kaiser et al. and Dopamine (ALE's default) play the game's minimal action set; "
        "benchgen: minimal",
        "noop_max": "SimPLe's and SPR's code start episodes with up to 30 no-op actions; Dopamine's atari_100k "
        "runner (MaxEpisodeEvalRunner, its train.py's default) first started them with none (July 2021), then with "
        "0-29 no-op agent steps (from 20 July 2021) and 0-29 no-op emulator frames (from 24 August 2021, before "
        "its DrQ_eps.gin), training episodes included, and which of these Agarwal et al.'s runs used is not "
        "stated; benchgen: none (0)",
        "evaluation_episodes": "DER and SPR report the mean over evaluation episodes of the final agent, "
        "SimPLe over 8 runs of its own policy; Dopamine: 100 episodes; benchgen: 100 episodes, played to their end",
    },
)

PRESETS: dict[str, AtariProtocol] = {p.name: p for p in (SABER, MACHADO2018, DQN2015, RAINBOW2018, ALE2013, ATARI100K)}
DEFAULT = SABER.name


def preset(name: str) -> AtariProtocol:
    """The named preset (did-you-mean ``UsageError`` for an unknown name)."""
    if name not in PRESETS:
        raise did_you_mean("Atari protocol", name, PRESETS, hint="`benchgen protocols atari_saber` lists them.")
    return PRESETS[name]
