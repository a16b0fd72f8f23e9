"""Worker pinning (benchgen.cpu_affinity) on real child processes."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from benchgen.cpu_affinity import PIN_WORKERS_ENV, most_idle_cpus, pin_workers

CPUS = sorted(os.sched_getaffinity(0))


@pytest.fixture
def sleepers(request):
    """``request.param`` idle child processes."""
    procs = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) for _ in range(request.param)]
    yield [p.pid for p in procs]
    for p in procs:
        p.kill()
        p.wait()


@pytest.mark.skipif(len(CPUS) < 2, reason="needs 2 usable CPUs")
@pytest.mark.parametrize("sleepers", [2], indirect=True)
def test_each_worker_gets_its_own_cpu(sleepers, monkeypatch):
    monkeypatch.delenv(PIN_WORKERS_ENV, raising=False)
    cpus = pin_workers(sleepers)
    assert cpus is not None and len(set(cpus)) == 2 and set(cpus) <= set(CPUS)
    assert [os.sched_getaffinity(pid) for pid in sleepers] == [{cpu} for cpu in cpus]
    assert os.sched_getaffinity(0) == set(CPUS)  # the calling process itself stays free


@pytest.mark.parametrize("sleepers", [1], indirect=True)
def test_a_single_worker_is_left_alone(sleepers, monkeypatch):
    monkeypatch.delenv(PIN_WORKERS_ENV, raising=False)
    assert pin_workers(sleepers) is None
    assert os.sched_getaffinity(sleepers[0]) == set(CPUS)


@pytest.mark.parametrize("sleepers", [len(CPUS) + 1], indirect=True)
def test_more_workers_than_cpus_are_left_alone(sleepers, monkeypatch):
    monkeypatch.delenv(PIN_WORKERS_ENV, raising=False)
    assert pin_workers(sleepers) is None


@pytest.mark.parametrize("sleepers", [2], indirect=True)
def test_switched_off_by_the_environment(sleepers, monkeypatch):
    monkeypatch.setenv(PIN_WORKERS_ENV, "0")
    assert pin_workers(sleepers) is None
    assert all(os.sched_getaffinity(pid) == set(CPUS) for pid in sleepers)


def test_most_idle_cpus_come_from_the_allowed_set():
    chosen = most_idle_cpus(len(CPUS), CPUS, sample_seconds=0.01)
    assert sorted(chosen) == CPUS
    assert most_idle_cpus(1, CPUS[-1:], sample_seconds=0.01) == CPUS[-1:]
