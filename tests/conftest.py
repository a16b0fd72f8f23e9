"""Shared fixtures: the toy suite plugin, CLI runners (in this process, or in a subprocess), clean registries."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# Before anything imports torch: one OpenMP thread per test process, idle threads asleep. The
# tests run in one process per core (pytest-xdist) beside Ray actors and CLI subprocesses; torch's
# default (every core, workers spinning between parallel regions) made the processes take each
# other's cores (a 6-second Ray test took 130 s beside another test process).
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import pytest  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def cli_env(extra_plugins: str | None = "tests.fixture_plugins.toy_suite") -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    if extra_plugins:
        env["BENCHGEN_PLUGINS"] = extra_plugins
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


def run_cli(
    *args: str, plugins: str | None = "tests.fixture_plugins.toy_suite", cwd=None, timeout=600
) -> subprocess.CompletedProcess:
    """``benchgen ARGS`` as ``python -m benchgen ARGS`` would run it, with its output captured, but
    in this process (``tests/inprocess.py``: a fresh interpreter and its imports cost 2-3 s of CPU
    a call). Tests of the process boundary (signals, kills, start-up imports, Ray, the real exit
    status of the interpreter) use :func:`run_cli_subprocess`. ``BENCHGEN_TEST_CLI=subprocess``
    runs every call in a new interpreter instead (to check that both ways agree, or compare costs)."""
    if os.environ.get("BENCHGEN_TEST_CLI") == "subprocess":
        return run_cli_subprocess(*args, plugins=plugins, cwd=cwd, timeout=timeout)
    from tests.inprocess import run_main

    return run_main([str(a) for a in args], cli_env(plugins), Path(cwd or REPO), timeout)


def run_cli_subprocess(
    *args: str, plugins: str | None = "tests.fixture_plugins.toy_suite", cwd=None, timeout=600, **kw
) -> subprocess.CompletedProcess:
    """Run ``python -m benchgen ARGS`` in a new interpreter and capture its output."""
    return subprocess.run(
        [sys.executable, "-m", "benchgen", *map(str, args)],
        capture_output=True,
        text=True,
        env=cli_env(plugins),
        cwd=cwd or REPO,
        timeout=timeout,
        **kw,
    )


def assert_usage_error(proc: subprocess.CompletedProcess, *fragments: str) -> None:
    """The CLI's promise for bad input: exit 2, one line ``benchgen: error: ...`` holding each of
    ``fragments``, no traceback."""
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr[-2000:]
    assert lines[0].startswith("benchgen: error: "), lines[0]
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def start_cli(*args, plugins: str | None = "tests.fixture_plugins.toy_suite", quiet: bool = False) -> subprocess.Popen:
    """Start ``python -m benchgen ARGS`` in the background, for tests that signal or kill it; its
    output is captured as text (discarded when ``quiet``: a long run would fill the pipe)."""
    streams = (
        {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        if quiet
        else {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
    )
    return subprocess.Popen(
        [sys.executable, "-m", "benchgen", *map(str, args)], env=cli_env(plugins), cwd=REPO, **streams
    )


#: test modules that start Ray, and tests of other modules that do: they run in one xdist process,
#: one after the other (``--dist loadgroup``), so that two Ray instances never share the 2 cores
RAY_MODULES = {
    "test_apex.py",
    "test_data_parallel_ppo.py",
    "test_data_parallel_rainbow.py",
    "test_data_parallel_runs.py",
    "test_executors.py",
    "test_ray_loopback.py",
    "test_virtual_workers_ppo.py",
}
#: tests of other modules that start Ray (the Ray tutorial page, run as written)
RAY_TESTS: set[str] = {"test_tutorial_starting_ray_runs_as_written"}
#: tests of those modules that start no Ray instance (a local executor, virtual workers in the run's
#: own process, checks of settings and files): they leave the Ray group, which is the suite's
#: critical path on 2 cores (its one process ran about as long as the other did for all the rest)
NOT_RAY_TESTS = {
    "test_killed_worker_is_retried_without_loss_or_duplicates[local-jobs2]",
    "test_ray_not_installed_is_a_one_line_error",
    "test_nothing_else_imports_ray",
    "test_sigterm_stops_a_run_with_two_workers_and_resume_ends_it_whole[virtual workers in process]",
    "test_contiguous_shares",
    "test_the_accumulated_update_is_the_mean_of_the_virtual_workers_gradients",
    "test_rollouts_that_fit_neither_memory_nor_disk_are_refused_with_what_they_need",
    "test_workers_cannot_exceed_virtual_workers",
    "test_sonic_joint_ppo_is_the_papers_188_workers_and_plans_on_a_small_machine",
}


def is_ray_test(nodeid: str) -> bool:
    path, _, name = nodeid.partition("::")
    test = name.split("::")[-1]
    if test in NOT_RAY_TESTS:
        return False
    return Path(path).name in RAY_MODULES or test.split("[")[0] in RAY_TESTS


#: where the tests' temporary directories go when the machine has a RAM-backed filesystem
RAM_TEMP = Path("/dev/shm")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    """The tests' ``tmp_path`` directories on a RAM-backed filesystem (``/dev/shm``) when there is one
    and neither ``--basetemp`` nor ``PYTEST_DEBUG_TEMPROOT`` says where. A run writes about 15,000
    files (run stores, checkpoints with replay memories, reports); on this machine's disk, deleting
    an earlier run's tree (pytest keeps three and deletes the oldest when a session ends) took a
    minute at about 4 ms a file while its writes were still being flushed. Only the root moves:
    each session still gets a numbered directory of its own there (``pytest-of-USER/pytest-N``), so
    sessions side by side never share one. Each passing test's directory is removed when it ends
    (``tmp_path_retention_policy``, pyproject.toml), so the RAM held is the failures' files and the
    session-wide fixtures'. Runs before pytest reads the root; xdist's workers get folders under it."""
    if config.option.basetemp or hasattr(config, "workerinput") or os.environ.get("PYTEST_DEBUG_TEMPROOT"):
        return
    if RAM_TEMP.is_dir() and os.access(RAM_TEMP, os.W_OK | os.X_OK):
        os.environ["PYTEST_DEBUG_TEMPROOT"] = str(RAM_TEMP)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup`` with the Ray tests as one group. Not by ``xdist_group`` marks: pytest-xdist
    3.8 writes a marked test's group into ``item._nodeid``, which pytest 9 no longer reads (its ids
    come from ``item._id``), so the marks grouped nothing and Ray tests ran on both workers."""
    if config.getoption("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class RayGroupScheduling(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return "ray" if is_ray_test(nodeid) else super()._split_scope(nodeid)

    return RayGroupScheduling(config, log)


@pytest.fixture(autouse=True)
def _forget_modules_imported_from_tmp_path(tmp_path_factory):
    """Modules a test imported from its temporary directories are dropped when it ends: a passing
    test's directory is removed (``tmp_path_retention_policy``), and a later test importing a module
    of the same name would otherwise get the cached one, whose data files next to it are gone."""
    yield
    base = str(tmp_path_factory.getbasetemp())
    for name in [
        name for name, module in sys.modules.items() if (getattr(module, "__file__", None) or "").startswith(base)
    ]:
        del sys.modules[name]


@pytest.fixture(autouse=True)
def _fresh_registry(monkeypatch):
    from benchgen import registry

    registry.reset_registry()
    monkeypatch.setenv("BENCHGEN_PLUGINS", "tests.fixture_plugins.toy_suite")
    yield
    registry.reset_registry()


def cli_in_process(capsys, *args) -> tuple[int, list[str]]:
    """``benchgen ARGS`` in this process: the exit code and the lines it wrote to stderr (never a
    traceback)."""
    from benchgen.cli import main

    capsys.readouterr()
    code = main([str(a) for a in args])
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    return code, [line for line in err.splitlines() if line.strip()]


def refused_in_process(capsys, fragment: str, *args) -> None:
    """``benchgen ARGS`` in this process is refused as bad input: exit 2, one line holding ``fragment``."""
    code, err = cli_in_process(capsys, *args)
    assert code == 2 and len(err) == 1 and err[0].startswith("benchgen: error: "), err
    assert fragment in err[0], err[0]
