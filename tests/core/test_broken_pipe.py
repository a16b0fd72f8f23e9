"""A reader that stops early (`benchgen settings ppo | head -1`) ends benchgen quietly, as it ends a
Unix tool: no traceback, the exit status of a process killed by SIGPIPE."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO, cli_env


def test_output_into_a_closed_pipe_is_no_traceback():
    # a small pipe, so that benchgen's output does not fit in it before the reader leaves
    reader = subprocess.Popen(["head", "-c", "1"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, pipesize=4096)
    writer = subprocess.run(
        [sys.executable, "-m", "benchgen", "settings", "ppo"],
        stdout=reader.stdin,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(None),
        cwd=REPO,
        timeout=120,
    )
    reader.stdin.close()
    reader.wait(timeout=30)
    assert "Traceback" not in writer.stderr and writer.stderr.strip() == "", writer.stderr
    assert writer.returncode in (0, 141)  # 0 when the whole output fit in the pipe before head left
