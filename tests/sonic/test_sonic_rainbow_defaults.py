"""Rainbow on Sonic takes Gotta Learn Fast's settings (section 4.2): Vmax = 200, replay 0.5M, no
hyperparameter schedules (beta stays 0.4), rewards unclipped; on Atari, Rainbow's own."""

from __future__ import annotations

import pytest

from tests.conftest import run_cli

AIRSTRIKER = "tests.sonic.airstriker_plugin"
SONIC = {"v_min": "-200.0", "v_max": "200.0", "replay_capacity": "500000", "priority_weight_end": "0.4"}
ATARI = {"v_min": "-10.0", "v_max": "10.0", "replay_capacity": "1000000", "priority_weight_end": "1.0"}


def settings(agent: str, suite: str, plugins: str | None) -> dict[str, str]:
    proc = run_cli("settings", agent, "--suite", suite, plugins=plugins)
    assert proc.returncode == 0, proc.stderr
    values = {}
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and line.startswith("  "):
            values[parts[0]] = parts[1]
    return values


@pytest.mark.parametrize("agent", ["rainbow", "rainbow_joint"])
def test_rainbow_takes_the_papers_settings_per_suite(agent):
    sonic = settings(agent, "sonic_airstriker", AIRSTRIKER)  # a suite derived from sonic keeps its defaults
    assert {k: sonic[k] for k in SONIC} == SONIC and float(sonic["reward_clip"]) == 0.0
    atari = settings(agent, "atari_saber", None)
    assert {k: atari[k] for k in ATARI} == ATARI and float(atari["reward_clip"]) == 1.0
