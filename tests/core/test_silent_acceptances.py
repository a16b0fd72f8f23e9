"""Input that was accepted and silently half used (issue 47, 15) is refused in one line."""

from __future__ import annotations

import pytest

from tests.conftest import refused_in_process


@pytest.mark.parametrize("flag", ["--config", "--protocol"])
def test_a_key_given_twice_in_a_yaml_file_is_refused(tmp_path, capsys, flag):
    """PyYAML keeps the last of two equal keys: the first value was silently dropped."""
    config = tmp_path / "twice.yaml"
    config.write_text("base: saber\nmax_episode_frames: 100\nmax_episode_frames: 200\n")
    refused_in_process(
        capsys,
        "gives the key 'max_episode_frames' twice (lines 2 and 3)",
        "run",
        "toy",
        "random",
        flag,
        config,
        "--plan",
    )
