"""A resolved run works out its numbers once: the reporting checkpoints scaled to the budget (the
same for ``benchgen run`` and a loop outside benchgen), in frames, and scaled again to each unit's
own budget."""

from __future__ import annotations

from benchgen.config import RunConfig
from benchgen.registry import get_registry
from benchgen.results.store import Unit
from benchgen.run import lifecycle
from benchgen.run.planning.plan import plan_units, resolve


def test_a_run_and_a_recording_scale_the_suites_checkpoints_alike(tmp_path):
    """The toy suite reports at 1,000 and 4,000 of its 4,000 frames: a 2,000-frame run reports at
    500 and 2,000, whether benchgen runs it or records a loop outside benchgen."""
    registry = get_registry()
    resolved = resolve(registry, RunConfig(suite="toy", agent="random", tasks=["count-20"], budget=2_000), {})
    assert resolved.checkpoints == [500, 2_000]
    assert resolved.budget_frames == 2_000
    recording = lifecycle.open_recording(
        registry,
        tmp_path / "loop",
        registry.suite("toy"),
        None,
        task="count-20",
        agent="my_loop",
        seed=0,
        budget=2_000,
        protocol=None,
        num_envs=1,
        config=None,
    )
    assert recording.record().checkpoints == resolved.checkpoints


def test_reporting_points_scale_to_each_units_budget():
    """A unit with half the run's budget keeps its checkpoints at half the run's points; a unit
    that does not learn keeps none."""
    registry = get_registry()
    run = RunConfig(suite="toy", agent="random", tasks=["count-20"], budget=4_000, checkpoints=[1_000, 4_000])
    resolved = resolve(registry, run, {})
    (unit,) = plan_units(resolved)
    assert resolved.reporting_frames(unit) == {1_000, 4_000}
    half = Unit("train-count-20-s1", 1, "train", ["count-20"], 1, 2_000)
    assert resolved.reporting_frames(half) == {500, 2_000}
    zeroshot = Unit("zeroshot-count-20-s0", 2, "zeroshot", ["count-20"], 0, 2_000, learn=False)
    assert resolved.reporting_frames(zeroshot) == set()
