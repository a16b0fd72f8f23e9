"""Damaged checkpoints of the agents that do not save through torch (issue 47, 7): ``evaluate``
(and ``--from``, ``video``) load a checkpoint through the same wrapper as ``resume``, so a
truncated file, random bytes or broken JSON is one line, exit 2, and no evaluation run is made,
where each agent's own reader once raised its traceback (``UnicodeDecodeError``, ``BadZipFile``,
numpy's "pickled (object) data", ``JSONDecodeError``)."""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import refused_in_process, run_cli

#: the agents whose checkpoints are JSON and numpy files, with settings that train in seconds
AGENTS = {
    "random": (),
    "frame_random": (),
    "jerk": (),
    "brute": (),
    "sarsa": ("--set=features=basic", "--set=background_samples=200"),
    "uct": ("--set=simulations_per_action=2", "--set=max_depth_frames=8"),
}


def _damage(path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how == "random bytes":
        path.write_bytes(bytes(range(256)) * 4)
    else:  # broken JSON, or what a JSON reader finds in a file of another kind
        path.write_text('{"instances": [')


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """agent -> a finished tiny run of it on Pong."""
    root = tmp_path_factory.mktemp("trained")
    runs = {}
    for agent, settings in AGENTS.items():
        out = root / agent
        proc = run_cli(
            "run", "atari_saber", agent, "--tasks", "pong", "--frames", "800", "--num-envs", "1", "--out", out,
            "--no-progress", *settings, plugins=None,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-2000:]
        runs[agent] = out
    return runs


@pytest.mark.parametrize("how", ["truncated", "random bytes", "broken JSON"])
@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_a_damaged_checkpoint_is_one_line_in_evaluate(trained, tmp_path, capsys, agent, how):
    run = tmp_path / "run"
    shutil.copytree(trained[agent], run)
    last = max((run / "units" / "train-pong-s0" / "checkpoints").iterdir())
    files = [f for f in last.iterdir() if f.name != "checkpoint.json"]
    assert files
    for path in files:
        _damage(path, how)
    refused_in_process(capsys, "cannot be loaded", "evaluate", run, "--episodes", "1", "--no-progress")
    assert not (tmp_path / "run-eval").exists()
