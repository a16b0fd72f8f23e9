"""Numbers given to ``--set`` and ``--config`` (issue 47, 11): an integer too large for any count
(``batch_size=1e100`` passed and crashed mid-run) and a boolean or a non-finite value where a
number is wanted (``gamma=true`` was taken as 1.0) are refused in one line. (The run settings'
integers have ranges of their own, checked when a run is planned: ``tests/core/test_plan.py``.)"""

from __future__ import annotations

import dataclasses

import pytest

from benchgen.config import MAX_INTEGER, build_dataclass
from benchgen.errors import UsageError
from tests.conftest import refused_in_process


@pytest.mark.parametrize(
    "setting, fragment",
    [
        ("batch_size=1e100", "beyond any count"),
        ("gamma=true", "must be a number, not 'True'"),
        ("run.max_retries=.inf", "must be an integer"),
        ("run.progress_every=true", "must be a number, not 'True'"),
        ("run.cpus_per_unit=.nan", "must be a finite number"),
        ("run.cpus_per_unit=1e999", "must be a finite number"),
    ],
)
def test_numbers_no_run_can_use_are_refused(capsys, setting, fragment):
    refused_in_process(capsys, fragment, "run", "toy", "dqn", "--tasks", "count-20", "--set", setting, "--plan")


@dataclasses.dataclass
class Settings:
    batch_size: int = 32
    gamma: float = 0.99


@pytest.mark.parametrize(
    "values", [{"batch_size": 10**100}, {"batch_size": "1e100"}, {"gamma": True}, {"gamma": False}]
)
def test_the_coercion_refuses_them_for_every_config(values):
    with pytest.raises(UsageError):
        build_dataclass(Settings, values, "test")


def test_ordinary_numbers_still_pass():
    settings = build_dataclass(Settings, {"batch_size": "1e3", "gamma": "0.9"}, "test")
    assert (settings.batch_size, settings.gamma) == (1000, 0.9)
    assert build_dataclass(Settings, {"batch_size": MAX_INTEGER}, "test").batch_size == MAX_INTEGER
