"""Procgen's protocols as named presets (``benchgen protocols procgen``): the two settings of
Cobbe et al. 2020 ("Leveraging Procedural Generation to Benchmark Reinforcement Learning"), every
value with its source (the paper, openai's ``train-procgen`` code, the ``procgen`` package; the
details are in ``data/ppo_paper_hyperparameters.md`` and ``data/SOURCES.md``).

A protocol here is the environment's options (distribution mode, backgrounds, themes...), the
training levels, how the test levels are drawn and how scores are made. A custom protocol file
starts from a preset and changes what :attr:`ProcgenProtocol.CHANGEABLE` lists::

    base: easy200
    num_levels: 500
    distribution_mode: hard
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from benchgen.errors import UsageError, did_you_mean

from .games import MAX_LEVEL, MODES

#: how test levels are drawn (module docstring of ``env.py``)
TEST_LEVELS_RULE = (
    "levels [start_level + num_levels, 2^31 - 1): every level the package can draw above the training levels"
)
#: the normalization constant sets shipped (``data/normalization_<name>.csv``)
NORMALIZATIONS = ("paper", "train_procgen")

_PAPER = "Cobbe et al. 2020, arXiv:1912.01588"
_CODE = "openai/train-procgen train_procgen/train.py @ 1a2ae21"
_PACKAGE = "procgen 0.10.7 (procgen/env.py ProcgenGym3Env defaults)"


@dataclass(frozen=True)
class ProcgenProtocol:
    """One Procgen protocol: the environment's options, the levels, how scores are made."""

    name: str
    """the preset's name (``--protocol NAME``)"""
    version: str
    """bumped whenever a value of this preset changes, so old runs are not mixed with new ones"""
    distribution_mode: str
    """the package's level distribution: easy, hard (every game), extreme, memory, exploration
    (some games; exploration plays one fixed level, so it has no test levels)"""
    num_levels: int
    """training levels: the levels [start_level, start_level + num_levels) (0: every level, and
    then no level is held out for testing)"""
    start_level: int
    """the first training level"""
    use_backgrounds: bool = True
    """human-designed backgrounds (False: black)"""
    restrict_themes: bool = False
    """a single asset theme in games that have several"""
    use_monochrome_assets: bool = False
    """monochrome rectangles instead of the designed assets"""
    center_agent: bool = True
    """the view follows the agent (games with a moving view)"""
    paint_vel_info: bool = False
    """paint the agent's velocity into the frame"""
    use_generated_assets: bool = False
    """randomly generated assets instead of the designed ones"""
    use_sequential_levels: bool = False
    """a completed level is followed by the next one (seed + 997) instead of a new draw"""
    evaluation_episodes: int = 100
    """test-level episodes per evaluation round (0: no test rounds); a round follows every
    ``evaluation_interval_steps`` of training and the end of training"""
    evaluation_interval_steps: int = 250_000
    """training steps (per task) between test rounds"""
    normalization: str = "paper"
    """the (R_min, R_max) set normalized scores use: 'paper' (appendix C) or 'train_procgen'
    (train-procgen's constants.py); they differ on jumper and leaper in easy mode"""
    training_steps: int = 25_000_000
    """the training budget per game a run takes unless told (a default: runs record their budget)"""
    sources: Mapping[str, str] = field(default_factory=dict)
    """parameter -> where the value comes from"""
    open_values: Mapping[str, str] = field(default_factory=dict)
    """parameter -> what the sources leave open and what benchgen chose"""

    #: parameters a custom protocol YAML may change
    CHANGEABLE = (
        "distribution_mode",
        "num_levels",
        "start_level",
        "use_backgrounds",
        "restrict_themes",
        "use_monochrome_assets",
        "center_agent",
        "paint_vel_info",
        "use_generated_assets",
        "use_sequential_levels",
        "evaluation_episodes",
        "evaluation_interval_steps",
        "normalization",
    )
    _BOOLEANS = (
        "use_backgrounds",
        "restrict_themes",
        "use_monochrome_assets",
        "center_agent",
        "paint_vel_info",
        "use_generated_assets",
        "use_sequential_levels",
    )

    @property
    def train_levels(self) -> tuple[int, int]:
        """``[low, high)`` of the training levels (the package draws uniformly among them)."""
        if self.num_levels == 0:
            return 0, MAX_LEVEL
        return self.start_level, self.start_level + self.num_levels

    @property
    def test_levels(self) -> tuple[int, int] | None:
        """``[low, high)`` of the test levels, disjoint from the training levels by construction;
        None where nothing is held out (``num_levels`` 0, exploration mode)."""
        if self.num_levels == 0 or self.distribution_mode == "exploration":
            return None
        return self.start_level + self.num_levels, MAX_LEVEL

    def parameters(self) -> dict[str, Any]:
        """The values that make two runs comparable, as ``Suite.protocol()`` lists them."""
        values = {
            f.name: getattr(self, f.name)
            for f in dataclasses.fields(self)
            if f.name not in ("name", "sources", "open_values", "training_steps")
        }
        values["test_levels"] = TEST_LEVELS_RULE if self.test_levels else "none"
        return values

    def changed(self, changes: Mapping[str, Any]) -> ProcgenProtocol:
        """A custom protocol: this preset with ``changes`` (validated; one-line ``UsageError``)."""
        values = {}
        for key, value in changes.items():
            if key not in self.CHANGEABLE:
                raise did_you_mean(
                    "protocol parameter", key, self.CHANGEABLE, hint="These are the ones a protocol file may change."
                )
            values[key] = _checked(self, key, value)
        custom = dataclasses.replace(self, **values) if values else self
        custom.validate()
        return custom

    def validate(self) -> None:
        """Values the package can apply (``UsageError`` otherwise)."""
        for name in self.CHANGEABLE:
            _checked(self, name, getattr(self, name))
        if self.num_levels and self.start_level + self.num_levels >= MAX_LEVEL:
            raise UsageError(
                f"start_level + num_levels must stay below {MAX_LEVEL:,} (the package's largest level seed), so that "
                "test levels remain above them"
            )
        if self.evaluation_episodes and self.test_levels is None:
            raise UsageError(
                "this protocol holds out no test levels (num_levels 0 or exploration mode): set evaluation_episodes: 0"
            )


def _checked(protocol: ProcgenProtocol, name: str, value: Any) -> Any:
    """One parameter's value, type- and range-checked."""
    if name in ProcgenProtocol._BOOLEANS:
        if not isinstance(value, bool):
            raise UsageError(f"protocol parameter {name} must be true or false, not {value!r}")
        return value
    if name == "distribution_mode":
        if value not in MODES:
            raise did_you_mean("distribution_mode", str(value), MODES)
        return value
    if name == "normalization":
        if value not in NORMALIZATIONS:
            raise did_you_mean("normalization", str(value), NORMALIZATIONS)
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise UsageError(f"protocol parameter {name} must be a whole number, not {value!r}")
    if value < 0 or (name == "evaluation_interval_steps" and value == 0) or value > MAX_LEVEL:
        raise UsageError(
            f"protocol parameter {name} must be between 0 and {MAX_LEVEL:,} (interval above 0), not {value}"
        )
    return value


_SHARED_SOURCES = {
    "start_level": f"{_CODE}: --start_level default 0",
    "use_backgrounds": f"{_PACKAGE}; these options came in 0.10.0, their defaults render as 0.9.2 (the paper's) did",
    "restrict_themes": _PACKAGE,
    "use_monochrome_assets": _PACKAGE,
    "center_agent": _PACKAGE,
    "paint_vel_info": _PACKAGE,
    "use_generated_assets": _PACKAGE,
    "use_sequential_levels": _PACKAGE,
    "test_levels": f"{_PAPER}, section 2.3: tested on the full distribution of levels ({_CODE}: num_levels=0)",
    "normalization": f"{_PAPER}, appendix C (data/normalization_paper.csv)",
    "evaluation_episodes": f"{_CODE}: the test worker's logged score is the mean of its last 100 episodes",
}
_SHARED_OPEN = {
    "test_levels": (
        "the paper tests on every level (num_levels=0), which includes the training levels with probability "
        "num_levels / 2^31; benchgen draws test levels from [start_level + num_levels, 2^31 - 1) so that no training "
        "level is ever scored as a test level, records each episode's level seed, and refuses an episode that breaks it"
    ),
    "evaluation_episodes": (
        "the paper's test curve is a concurrent worker playing test levels with the current (sampled) policy; "
        "benchgen plays test rounds of 100 episodes at every evaluation_interval_steps with the agent's "
        "non-greedy policy (PPO samples, as the test worker did): the same measure at discrete points"
    ),
    "evaluation_interval_steps": "not a paper value: 250K steps gives 100 test points over the 25M of easy200",
    "normalization": (
        "train-procgen's constants.py differs from appendix C on jumper and leaper in easy mode (R_min 1 and 1.5 "
        "against 3 and 3); benchgen defaults to the paper's and ships both (normalization: train_procgen)"
    ),
}

EASY200 = ProcgenProtocol(
    name="easy200",
    version="1",
    distribution_mode="easy",
    num_levels=200,
    start_level=0,
    training_steps=25_000_000,
    sources={
        **_SHARED_SOURCES,
        "distribution_mode": f"{_PAPER}, section 2.3 (easy mode, for limited compute)",
        "num_levels": f"{_PAPER}, section 2.3: 200 training levels in easy mode; train-procgen README (easy-200)",
        "training_steps": f"{_PAPER}, appendix hyperparameter table: 25M timesteps in easy mode",
    },
    open_values={
        **_SHARED_OPEN,
        "training_steps": (
            "the paper says 25M; train-procgen's released easy-200 runs go to 50M (one worker x its default 50M "
            "per process): benchgen's default is the paper's 25M, and the shipped curves reach 50M"
        ),
    },
)

HARD500 = dataclasses.replace(
    EASY200,
    name="hard500",
    distribution_mode="hard",
    num_levels=500,
    training_steps=200_000_000,
    evaluation_interval_steps=2_000_000,
    sources={
        **_SHARED_SOURCES,
        "distribution_mode": f"{_PAPER}, section 2.3 (hard mode)",
        "num_levels": f"{_PAPER}, section 2.3: 500 training levels in hard mode; train-procgen README (hard-500)",
        "training_steps": f"{_PAPER}, appendix hyperparameter table: 200M timesteps in hard mode (4 workers)",
    },
    open_values={
        **_SHARED_OPEN,
        "evaluation_interval_steps": "not a paper value: 2M steps gives 100 test points over the 200M of hard500",
    },
)

PRESETS = {p.name: p for p in (EASY200, HARD500)}
DEFAULT = EASY200.name


def preset(name: str) -> ProcgenProtocol:
    """The preset ``name`` (one-line ``UsageError`` naming the others)."""
    if name not in PRESETS:
        raise did_you_mean("procgen protocol", name, tuple(PRESETS), listed_by="benchgen protocols procgen")
    return PRESETS[name]
