"""``benchgen.api``'s arguments (issue 47, 12): each is checked before anything is built or
written, in one line, where a bad one gave a raw error (``num_envs=0``, ``task=None``), was
accepted (``mode="bogus"``, ``seed=1.5``), wrote a run its own tools then called damaged
(``budget=1.5``, a NaN in ``config``), or, for a restarted recording with another config,
continued silently."""

from __future__ import annotations

import json
import math

import pytest

from benchgen import api
from benchgen.errors import UsageError


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"num_envs": 0}, "num_envs must be at least 1"),
        ({"num_envs": -1}, "num_envs must be at least 1"),
        ({"num_envs": "2"}, "num_envs must be a whole number"),
        ({"num_envs": True}, "num_envs must be a whole number"),
        ({"task": None}, "task must be a task name"),
        ({"mode": "bogus"}, "mode must be one of train, eval"),
        ({"seed": 1.5}, "seed must be a whole number"),
        ({"seed": -1}, "seed must be in"),
    ],
)
def test_make_env_checks_its_arguments(kwargs, fragment):
    args = {"task": "count-20", **kwargs}
    with pytest.raises(UsageError, match=fragment):
        api.make_env("toy", args.pop("task"), **args)


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"budget": 1.5}, "budget must be a whole number"),
        ({"budget": 0}, "budget must be at least 1"),
        ({"seed": 1.5}, "seed must be a whole number"),
        ({"config": {"f": math.nan}}, "config must hold JSON values"),
        ({"config": {"f": object()}}, "config must hold JSON values"),
        ({"config": [1, 2]}, "config must be a mapping"),
    ],
)
def test_a_recording_checks_its_arguments_before_writing(tmp_path, kwargs, fragment):
    with pytest.raises(UsageError, match=fragment):
        api.Recording(tmp_path / "r", "toy", "count-20", **kwargs)
    assert not (tmp_path / "r").exists()


def test_a_restarted_recording_with_another_config_is_refused(tmp_path):
    with api.Recording(tmp_path / "r", "toy", "count-20", budget=200, config={"lr": 0.001}) as rec:
        rec.env.reset(seed=0)
    assert json.loads((tmp_path / "r" / "run.json").read_text())["agent_config"] == {"lr": 0.001}
    with pytest.raises(UsageError, match=r"another config \(lr: 0.001 -> 0.01\)"):
        api.Recording(tmp_path / "r", "toy", "count-20", budget=200, config={"lr": 0.01})
    with api.Recording(tmp_path / "r", "toy", "count-20", budget=200, config={"lr": 0.001}):
        pass  # the same config continues it
