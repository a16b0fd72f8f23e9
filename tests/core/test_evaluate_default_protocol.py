"""``benchgen evaluate RUN`` works on every suite (issue 31): without ``--protocol`` it re-evaluates
under the run's own protocol (or the suite's only one: the gymnasium suite refuses ``--protocol``,
so its runs could not be re-evaluated at all before)."""

from __future__ import annotations

import json
import sqlite3

import pytest

from tests.conftest import run_cli

CASES = {
    # suite: (the training run's arguments, the protocol its re-evaluation must run under)
    "gymnasium": (("gymnasium", "random", "--tasks", "CartPole-v1", "--frames", "200"), None),
    "atari_saber": (
        (
            "atari_saber",
            "random",
            "--tasks",
            "breakout",
            "--frames",
            "400",
            "--num-envs",
            "1",
            "--protocol",
            "machado2018",
        ),
        "machado2018",
    ),
}


@pytest.mark.parametrize("suite", sorted(CASES))
def test_evaluate_without_protocol_uses_the_runs_own(tmp_path, suite):
    trained, protocol = CASES[suite]
    base = tmp_path / "base"
    proc = run_cli("run", *trained, "--out", base, "--no-progress", plugins=None)
    assert proc.returncode == 0, proc.stderr[-2000:]
    proc = run_cli("evaluate", base, "--episodes", "2", "--no-progress", plugins=None)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = tmp_path / ("base-eval" + (f"-{protocol}" if protocol else ""))  # named after the protocol it ran
    meta = json.loads((out / "run.json").read_text())
    assert meta["protocol"].get("protocol") == protocol
    assert meta["protocol"] == json.loads((base / "run.json").read_text())["protocol"]
    with sqlite3.connect(out / "results.sqlite") as conn:
        phases = [row[0] for row in conn.execute("SELECT phase FROM episodes")]
    assert phases == ["reeval", "reeval"]
