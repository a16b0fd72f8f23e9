"""``benchgen ARGS`` run by :func:`benchgen.cli.main` in the test process, as a fresh
``python -m benchgen ARGS`` would run it, without paying for a new interpreter and its imports.

What a subprocess would see is set up for the call and put back afterwards: the environment
(so child processes the command starts inherit it), the working directory, ``sys.argv`` (a
run records its command line), the plugin registry (rebuilt from ``BENCHGEN_PLUGINS``), the
SIGINT/SIGTERM handlers and stop flag that ``run``/``resume`` install, ``threading.excepthook``,
torch's thread count, the random generators, Python's default warning filters (a warning is
printed to stderr, not recorded by pytest) and logging's last-resort handler (pytest's handlers
are set aside). Output is captured at the file-descriptor level, so what C libraries and the
command's child processes write lands in ``stdout``/``stderr`` too. An exception that escapes
``main`` is printed as a traceback with exit status 1, as the interpreter does; ``SystemExit``
gives its code.

Tests of the process boundary itself (signals, kills, imports made at start-up, a Ray instance
the command starts and stops itself) start a real interpreter instead
(``tests.conftest.run_cli_subprocess``, ``start_cli``); a command whose units' workers join an
already connected Ray (``tests/agents/conftest.py``'s ``local_ray``) runs here.
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import traceback
import warnings
from collections.abc import Iterator
from pathlib import Path

#: the filters a fresh interpreter starts with (``python -W`` unset, not a debug build)
_DEFAULT_FILTERS = (
    ("default", DeprecationWarning, "__main__"),
    ("ignore", DeprecationWarning, None),
    ("ignore", PendingDeprecationWarning, None),
    ("ignore", ImportWarning, None),
    ("ignore", ResourceWarning, None),
)


def run_main(argv: list[str], env: dict[str, str], cwd: Path, timeout: float | None) -> subprocess.CompletedProcess:
    """``main(argv)`` under ``env`` in ``cwd``; the result a subprocess run would give. A call
    past ``timeout`` seconds raises :class:`subprocess.TimeoutExpired`, as ``subprocess.run`` does."""
    import benchgen

    command = [sys.executable, "-m", "benchgen", *argv]
    main_py = str(Path(benchgen.__file__).with_name("__main__.py"))
    with _captured_fds() as output, _process_state(env, cwd, [main_py, *argv]), _deadline(command, timeout):
        code = _call_main(argv)
    return subprocess.CompletedProcess(command, code, output["stdout"], output["stderr"])


def _call_main(argv: list[str]) -> int:
    try:
        from benchgen.cli import main

        return int(main(list(argv)) or 0)
    except SystemExit as exc:
        if exc.code is None:
            return 0
        if isinstance(exc.code, int):
            return exc.code
        print(exc.code, file=sys.stderr)
        return 1
    except subprocess.TimeoutExpired:
        raise
    except BaseException:  # noqa: BLE001 - what the interpreter does with an uncaught exception
        traceback.print_exc()
        return 1


@contextlib.contextmanager
def _captured_fds() -> Iterator[dict[str, str]]:
    """Point file descriptors 1 and 2, and ``sys.stdout``/``sys.stderr`` over them, at temporary
    files; on exit put everything back and fill the dict with what was written."""
    output: dict[str, str] = {}
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    saved_fds = {fd: os.dup(fd) for fd in (1, 2)}
    files = {fd: tempfile.TemporaryFile() for fd in (1, 2)}
    saved_streams = sys.stdout, sys.stderr
    try:
        for fd, file in files.items():
            os.dup2(file.fileno(), fd)
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115 - closed below
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False, buffering=1)  # noqa: SIM115
        yield output
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
                stream.close()
        sys.stdout, sys.stderr = saved_streams
        for fd, saved in saved_fds.items():
            os.dup2(saved, fd)
            os.close(saved)
        for fd, name in ((1, "stdout"), (2, "stderr")):
            files[fd].seek(0)
            output[name] = files[fd].read().decode("utf-8", errors="replace")
            files[fd].close()


@contextlib.contextmanager
def _process_state(env: dict[str, str], cwd: Path, argv: list[str]) -> Iterator[None]:
    from benchgen import registry
    from benchgen.run.execution.signals import STOP

    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    saved_argv = sys.argv
    main_thread = threading.current_thread() is threading.main_thread()  # handlers are set there only
    saved_handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)} if main_thread else {}
    saved_excepthook = threading.excepthook
    saved_affinity = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    saved_random = random.getstate()
    numpy = sys.modules.get("numpy")
    saved_numpy = numpy.random.get_state() if numpy else None
    torch = sys.modules.get("torch")
    saved_torch = (torch.get_num_threads(), torch.get_rng_state()) if torch else None
    root = logging.getLogger()
    saved_logging = root.handlers[:], root.level, logging.root.manager.disable
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    sys.argv = argv
    STOP.requested = False
    registry.reset_registry()
    root.handlers = []
    root.setLevel(logging.WARNING)
    logging.disable(logging.NOTSET)
    try:
        with warnings.catch_warnings():
            warnings.resetwarnings()
            for action, category, module in reversed(_DEFAULT_FILTERS):
                warnings.filterwarnings(action, category=category, module=module or "")
            warnings.showwarning = _print_warning
            yield
    finally:
        registry.reset_registry()
        STOP.requested = False
        root.handlers, level, disabled = saved_logging
        root.setLevel(level)
        logging.disable(disabled)
        threading.excepthook = saved_excepthook
        for sig, handler in saved_handlers.items():
            signal.signal(sig, handler)
        sys.argv = saved_argv
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        if saved_affinity is not None:
            os.sched_setaffinity(0, saved_affinity)
        random.setstate(saved_random)
        if saved_numpy is not None:
            numpy.random.set_state(saved_numpy)
        torch = sys.modules.get("torch")
        if torch is not None:
            # torch imported by the call starts with the thread count a fresh process would
            # (OMP_NUM_THREADS of the environment put back); one imported before keeps its own
            threads, rng = saved_torch or (int(os.environ.get("OMP_NUM_THREADS") or torch.get_num_threads()), None)
            torch.set_num_threads(threads)
            if rng is not None:
                torch.set_rng_state(rng)


def _print_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Python's own output of a warning: to stderr."""
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


@contextlib.contextmanager
def _deadline(command: list[str], timeout: float | None) -> Iterator[None]:
    """Raise :class:`subprocess.TimeoutExpired` in the main thread after ``timeout`` seconds."""
    if not timeout or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum, frame):
        raise subprocess.TimeoutExpired(command, timeout)

    saved = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, saved)
