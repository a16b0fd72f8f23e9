"""Config defaults, derived values and one-line usage errors."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest

import benchgen
from benchgen.agent import AgentEnvironment
from benchgen.config import field_docs
from benchgen.errors import UsageError
from benchgen_agents.rainbow_iqn import SPECS, RainbowIQNConfig
from benchgen_agents.value_based.config import check_replay_fits


def test_defaults_are_the_papers_and_frames_convert_to_agent_steps():
    cfg = RainbowIQNConfig()
    assert (cfg.num_tau_samples, cfg.num_tau_prime_samples, cfg.num_quantile_samples) == (64, 64, 32)
    assert (cfg.n_step, cfg.gamma, cfg.priority_exponent, cfg.batch_size) == (3, 0.99, 0.2, 32)
    assert (cfg.learning_rate, cfg.adam_eps) == (5e-5, 3.125e-4)
    assert cfg.learning_starts_steps == 20_000  # 80K frames at 4 frames per step
    assert cfg.target_update_steps == 8_000  # 32K frames
    assert RainbowIQNConfig(frames_per_step=1, learning_starts_frames=500).learning_starts_steps == 500


def test_every_field_is_documented_and_derived_fields_are_not_settable():
    docs = field_docs(RainbowIQNConfig)
    for f in dataclasses.fields(RainbowIQNConfig):
        assert docs.get(f.name), f"{f.name} has no docstring"
    assert {f.name for f in dataclasses.fields(RainbowIQNConfig) if not f.init} == {
        "learning_starts_steps",
        "target_update_steps",
    }
    assert SPECS[0].name == "rainbow_iqn" and SPECS[0].config_class is RainbowIQNConfig


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"gamma": 1.5}, "gamma"),
        ({"n_step": 0}, "n_step"),
        ({"batch_size": 2.5}, "batch_size"),
        ({"priority_weight_start": -0.1}, "priority_weight_start"),
        ({"kappa": 0.0}, "kappa"),
        ({"learning_rate": float("nan")}, "learning_rate"),
        ({"device": "tpu"}, "device"),
        ({"replay_capacity": 1000}, "learning_starts_frames"),
    ],
)
def test_bad_values_are_one_line_usage_errors(kwargs, match):
    with pytest.raises(UsageError, match=match) as info:
        RainbowIQNConfig(**kwargs)
    assert "\n" not in str(info.value)


def test_a_replay_that_does_not_fit_in_memory_is_refused():
    with pytest.raises(UsageError, match="replay_capacity to at most"):
        check_replay_fits(1 << 60, 1_000_000, "Atari frames")
    check_replay_fits(1024, 10, "tiny")  # fits: no error


def test_factory_refuses_a_replay_larger_than_memory():
    import gymnasium as gym

    cfg = RainbowIQNConfig(replay_capacity=10**12)
    space = gym.spaces.Box(0, 255, (4, 84, 84), np.uint8)
    with pytest.raises(UsageError, match="GiB"):
        SPECS[0].factory(cfg, AgentEnvironment(space, gym.spaces.Discrete(4)))


def test_frames_per_step_comes_from_the_suite_and_is_not_a_setting():
    from benchgen.config import RunConfig, split_overrides
    from benchgen.run.planning.plan import resolve
    from benchgen.testing import build_registry
    from tests.fixture_plugins import toy_suite

    for key in ("frames_per_step", "agent.frames_per_step"):
        with pytest.raises(UsageError, match=f"^{key} is set from the suite, not by --config/--set; remove it$"):
            split_overrides({key: 4}, RainbowIQNConfig, "--config/--set")
    one_frame = type("OneFrameSuite", (toy_suite.ToySuite,), {"name": "toy1", "frames_per_step": 1})()
    registry = build_registry(SimpleNamespace(benchgen_suites=benchgen.hookimpl(lambda: [one_frame])))
    run = RunConfig(suite="toy1", agent="rainbow_iqn", tasks=["count-20"])
    config = resolve(registry, run, {"learning_starts_frames": 500}).agent_config
    assert (config.frames_per_step, config.learning_starts_steps) == (1, 500)
