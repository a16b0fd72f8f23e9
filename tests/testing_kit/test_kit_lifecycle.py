"""The agent kit starts and resumes runs through benchgen.run.lifecycle, as ``benchgen run`` and
``benchgen resume`` do: a kit resume passes the same drift check."""

from __future__ import annotations

import json

import pytest

from benchgen.errors import UsageError
from benchgen.testing import kit_registry
from benchgen.testing.agent_runs import KitRunner
from benchgen.testing.agent_suites import PIXELS


def test_a_kit_resume_refuses_a_run_recorded_under_other_software_as_benchgen_resume_does(tmp_path):
    runner = KitRunner(kit_registry(), "random", tmp_path)
    stopped = runner.run(PIXELS, "run", stop_at_frames=runner.half(PIXELS))
    assert stopped.stopped and all(u.status != "done" for u in stopped.units)
    meta = json.loads((stopped.path / "run.json").read_text())
    original = dict(meta["versions"])
    meta["versions"]["numpy"] = "0.0.1"
    (stopped.path / "run.json").write_text(json.dumps(meta))
    with pytest.raises(UsageError, match=r"recorded under another protocol or software: version\.numpy \(0\.0\.1 -> "):
        runner.resume(stopped.path, stopped.envs)
    # the same run, its record put back, resumes to the end
    meta["versions"] = original
    (stopped.path / "run.json").write_text(json.dumps(meta))
    resumed = runner.resume(stopped.path, stopped.envs)
    assert not resumed.stopped and all(u.status == "done" for u in resumed.units)
