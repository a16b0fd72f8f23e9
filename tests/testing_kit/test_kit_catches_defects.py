"""The kit must catch each defect it promises to catch, with a message that says what to fix.

Each case breaks the toy suite in one way and runs the one check that guards against it.
"""

from __future__ import annotations

import math
import types

import gymnasium as gym
import numpy as np
import pytest

import benchgen
from benchgen.scoring import ReferenceScores, Scorer
from benchgen.suite import Split
from benchgen.testing import ConformanceError, build_registry, checks
from tests.fixture_plugins import toy_suite


class DefectiveEnv(toy_suite.ToyVectorEnv):
    def __init__(self, tasks, seed, defect):
        super().__init__(tasks, seed)
        self.defect = defect
        if defect == "float_obs":
            self.single_observation_space = gym.spaces.Box(0, 255, (1, 8, 8), np.float32)
            self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        if defect == "obs_out_of_bounds":
            self.single_observation_space = gym.spaces.Box(0, 0, (1, 8, 8), np.uint8)
            self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        if defect == "image_bounds":
            high = np.full((1, 8, 8), 255, np.uint8)
            high[0, 7, 7] = 0  # a degenerate dimension: gymnasium warns, it does not fail
            self.single_observation_space = gym.spaces.Box(np.zeros_like(high), high, dtype=np.uint8)
            self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        if defect == "next_step_autoreset":
            self.metadata = {"autoreset_mode": gym.vector.AutoresetMode.NEXT_STEP}
        if defect == "unseeded":
            self.rng = np.random.default_rng()

    def reset(self, *, seed=None, options=None):
        if self.defect == "unseeded":
            seed = None
        obs, info = super().reset(seed=seed, options=options)
        return obs, info

    def _obs(self):
        obs = super()._obs()
        if self.defect == "float_obs":
            return obs.astype(np.float32)
        if self.defect == "obs_out_of_bounds":
            obs[:, 0, 1, 1] = 7
        return obs

    def step(self, actions):
        if self.defect == "unseeded":
            self.rng = np.random.default_rng()
        obs, reward, terminated, truncated, info = super().step(actions)
        if self.defect == "lives_in_info":
            info["lives"] = np.full(self.num_envs, 3)
        if self.defect == "no_final_obs":
            info.pop("final_obs", None)
        if self.defect == "int_terminated":
            terminated = terminated.astype(int)
        if self.defect == "shaped_score":
            for end in self.episodes.pending:
                end.score += 1.0
        if self.defect == "bad_end_reason":
            for end in self.episodes.pending:
                end.end_reason = "exploded"
        if self.defect == "wrong_frames":
            for end in self.episodes.pending:
                end.length_frames = 10**9
        if self.defect == "no_extras":
            for end in self.episodes.pending:
                end.extras = {}
        return obs, reward, terminated, truncated, info

    def pop_episode_ends(self):
        if self.defect == "never_records":
            self.episodes.pop()
        if self.defect == "records_twice":
            return list(self.episodes.pending)
        return super().pop_episode_ends()


class DefectiveSuite(toy_suite.ToySuite):
    def __init__(self, defect=None, **attrs):
        self.defect = defect
        for k, v in attrs.items():
            setattr(self, k, v)

    def make_env(self, tasks, seed, *, mode="train"):
        return DefectiveEnv(tasks, seed, self.defect)


def _registry(suite, splits=None, scorer=None):
    plugin = types.SimpleNamespace()

    @benchgen.hookimpl
    def benchgen_suites():
        return [suite]

    @benchgen.hookimpl
    def benchgen_splits(suite):
        return splits if splits is not None else [Split("toy", "all", tuple(toy_suite.TASKS))]

    plugin.benchgen_suites, plugin.benchgen_splits = benchgen_suites, benchgen_splits
    if scorer is not None:

        @benchgen.hookimpl
        def benchgen_scorer(suite):
            return scorer

        plugin.benchgen_scorer = benchgen_scorer
    return build_registry(plugin)


ENV_DEFECTS = {
    "float_obs": "uint8 Box",
    "next_step_autoreset": "SAME_STEP",
    "lives_in_info": "['lives']",
    "no_final_obs": "final_obs",
    "int_terminated": "terminated must be a bool array",
    "shaped_score": "summed rewards",
    "bad_end_reason": "'exploded' is not in the suite's end_reasons",
    "wrong_frames": "length_frames",
    "no_extras": "episode_fields",
    "never_records": "record one EpisodeEnd per finished episode",
    "records_twice": "returned episodes a second time",
}


@pytest.mark.parametrize("defect", sorted(ENV_DEFECTS))
def test_env_defects_are_caught(defect):
    suite = DefectiveSuite(defect)
    with pytest.raises(ConformanceError, match="suite 'toy'") as err:
        checks.check_episode_ends(suite, ["count-20", "count-20"], max_steps=500)
    assert ENV_DEFECTS[defect] in str(err.value)


def test_unseeded_env_is_caught():
    with pytest.raises(ConformanceError, match="diverge"):
        checks.check_reproducible(DefectiveSuite("unseeded"), ["count-20"] * 2)


def test_gymnasium_checker_failures_and_warnings_are_caught():
    with pytest.raises(ConformanceError, match="gymnasium's env checker"):
        checks.check_gymnasium_env_checker(DefectiveSuite("obs_out_of_bounds"), "count-20")
    with pytest.raises(ConformanceError, match="gymnasium's env checker warns"):
        checks.check_gymnasium_env_checker(DefectiveSuite("image_bounds"), "count-20")
    checks.check_gymnasium_env_checker(DefectiveSuite(), "count-20")


def test_single_task_view_returns_the_episode_s_last_observation():
    env = checks.SingleTaskEnv(toy_suite.ToyVectorEnv(["count-20"], 0))
    obs, info = env.reset(seed=3)
    assert obs.shape == (1, 8, 8) and isinstance(info, dict)
    for _ in range(25):  # crosses an episode end: the episode's last observation comes back
        obs, reward, terminated, truncated, info = env.step(1)
        if terminated or truncated:
            assert obs[0, 0, 0] > 0
            break
    else:
        pytest.fail("no episode ended")


@pytest.mark.parametrize(
    "attrs, fragment",
    [
        ({"name": "Toy Suite"}, "lowercase"),
        ({"budget_unit": "seconds"}, "budget_unit"),
        ({"default_checkpoints": (5000,)}, "default_checkpoints"),
        ({"end_reasons": ()}, "end_reasons"),
        ({"episode_fields": ("score",)}, "clashes"),
        ({"default_split": "nope"}, "default_split 'nope'"),
        ({"tasks": lambda: ["a,b"]}, "without commas"),
    ],
)
def test_attribute_defects_are_caught(attrs, fragment):
    suite = DefectiveSuite(**attrs)
    with pytest.raises(ConformanceError, match=fragment):
        checks.check_suite_attributes(suite, _registry(suite))


@pytest.mark.parametrize(
    "proto, fragment",
    [
        ({"version": "1", "frameSkip": 4}, "snake_case"),
        ({"frames_per_step": 4}, "'version'"),
        ({"version": "2"}, "Suite.version"),
        ({"version": "1", "sizes": (84, 84)}, "round trip"),
        ({"version": "1", "p": float("nan")}, "not plain JSON"),
    ],
)
def test_protocol_defects_are_caught(proto, fragment):
    suite = DefectiveSuite(protocol=lambda: dict(proto))
    with pytest.raises(ConformanceError, match=fragment):
        checks.check_protocol(suite)


@pytest.mark.parametrize(
    "splits, fragment",
    [
        ([], "no split"),
        ([Split("toy", "bad", ("count-20",), ("count-20", "count-50"))], "both train and test"),
        ([Split("toy", "bad", ("count-20", "count-20"))], "twice"),
        ([Split("toy", "bad", ("count-21",))], "unknown tasks"),
        ([Split("toy", "bad", ())], "no train tasks"),
    ],
)
def test_split_defects_are_caught(splits, fragment):
    suite = DefectiveSuite()
    with pytest.raises(ConformanceError, match=fragment):
        checks.check_splits(_registry(suite, splits), suite)


class _MissingDefaultScorer(Scorer):
    default_baseline = "best_ever"  # declared, but the scorer has no table of that name


class _InfinityClippingScorer(Scorer):
    def score(self, raw, baseline=None):
        return super().score({t: min(v, 1e9) for t, v in raw.items()}, baseline)


class _DroppingScorer(Scorer):
    def score(self, raw, baseline=None):  # forgets tasks it cannot normalize
        out = super().score(raw, baseline)
        out["unnormalized"] = {}
        return out


TABLE = ReferenceScores("target", {"count-20": 20.0, "count-50": 50.0})
RANDOM = {"count-20": 4.0, "count-50": 10.0}


@pytest.mark.parametrize(
    "scorer, fragment",
    [
        (Scorer({"count-99": 1.0}, {"target": TABLE}), "random scores name unknown tasks"),
        (Scorer(RANDOM, {"target": ReferenceScores("target", {"count-7": 1.0})}), "'target' names unknown tasks"),
        (_MissingDefaultScorer(RANDOM, {"wr": TABLE}), "default baseline 'best_ever' does not resolve"),
        (Scorer(RANDOM, {"wr": TABLE, "target": TABLE}), "default baseline does not resolve"),  # none of two
        (_InfinityClippingScorer(RANDOM, {"world_record": TABLE}), "infinite score"),
        (_DroppingScorer(RANDOM, {"world_record": TABLE}), "unnormalized"),
    ],
)
def test_scorer_defects_are_caught(scorer, fragment):
    suite = DefectiveSuite()
    with pytest.raises(ConformanceError, match=fragment):
        checks.check_scorer(_registry(suite, scorer=scorer), suite)


def test_a_good_scorer_passes():
    suite = DefectiveSuite()
    checks.check_scorer(_registry(suite, scorer=Scorer(RANDOM, {"world_record": TABLE})), suite)
    assert math.isnan(Scorer({}, {}).task_score([]))
