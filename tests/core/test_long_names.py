"""Names near and past the file system's limit of 255 bytes per path component (issue 47, 13):
a name past it is one line in every command (it was an ENAMETOOLONG traceback), and a valid
245-byte run name works, where the temporary name beside it was longer than the limit."""

from __future__ import annotations

import pytest

from tests.conftest import cli_in_process, refused_in_process

RUN = ("run", "toy", "random", "--tasks", "count-20", "--frames", "500", "--no-progress", "--out")


@pytest.mark.parametrize(
    "command", [RUN, ("report",), ("export",), ("resume", "--no-progress"), ("compare",), ("evaluate",)]
)
def test_a_name_past_the_limit_is_one_line(tmp_path, capsys, command):
    long = tmp_path / ("a" * 300)
    refused_in_process(capsys, "longer than the file system allows", *command, long)


def test_a_long_valid_name_is_run_and_evaluated(tmp_path, capsys):
    name = tmp_path / ("b" * 245)
    code, err = cli_in_process(capsys, *RUN, name)
    assert code == 0, err
    code, err = cli_in_process(capsys, "evaluate", name, "--episodes", "1", "--no-progress")
    assert code == 0, err
    assert (tmp_path / ("b" * 245 + "-eval") / "report" / "report.md").is_file()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary name left
