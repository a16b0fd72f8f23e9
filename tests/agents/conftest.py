"""Agents set torch's process-wide thread count; give every test the count it started with. The
in-process Ray tests of these modules share one local Ray instance (``local_ray``)."""

from __future__ import annotations

import functools
import os
from unittest import mock

import pytest
import torch

#: CPUs of the shared Ray instance, whatever the machine has: every test's actors fit in it
#: (Ape-X's 2 actors x 1 CPU, data-parallel groups of up to 4 workers x 0.25 CPU), and Ape-X's
#: "more actor CPUs than Ray has" refusal reads the same number on every machine
RAY_CPUS = 4
#: the plugins the shared instance's workers load (``BENCHGEN_PLUGINS``, which ``connect`` hands
#: them): the chain suite of the in-process ``benchgen run`` calls whose units' workers join it
SHARED_RAY_PLUGINS = "tests.fixture_plugins.vector_suite"


@pytest.fixture(autouse=True)
def _restore_torch_threads():
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def local_ray():
    """One local Ray instance (loopback only) for every in-process Ray test of the session: started
    on first use by benchgen's own ``connect`` (as an agent's unit starts one), stopped at the
    session's end. Starting Ray costs seconds of both cores; one start serves all these modules.
    Its workers inherit ``PYTHONPATH`` with the repository root (Ape-X's actors import
    ``tests.fixture_plugins``) and ``BENCHGEN_PLUGINS`` (:data:`SHARED_RAY_PLUGINS`): an in-process
    ``benchgen run`` (``tests.conftest.run_cli``) started while it is up runs its units' workers
    here. Tests stop the actors they start."""
    ray = pytest.importorskip("ray")
    from benchgen.run.execution.ray_connect import connect
    from tests.conftest import REPO

    saved = {name: os.environ.get(name) for name in ("PYTHONPATH", "BENCHGEN_PLUGINS")}
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), saved["PYTHONPATH"]]))
    os.environ["BENCHGEN_PLUGINS"] = SHARED_RAY_PLUGINS
    try:
        # connect() lets Ray count the machine's CPUs; RAY_CPUS instead
        with mock.patch.object(ray, "init", functools.partial(ray.init, num_cpus=RAY_CPUS)):
            connect(None, 0, 0)
        yield ray
    finally:
        ray.shutdown()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
