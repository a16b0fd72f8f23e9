"""The worked-example split files of the repository's top-level ``splits/`` (splits/README.md):
each resolves as ``--split FILE`` reads it, is no copy of a split its suite already owns, is
described in the folder's README, and plans the run the README shows for it."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml

from benchgen.registry import get_registry
from tests.conftest import REPO, run_cli

FOLDER = REPO / "splits"
FILES = sorted(FOLDER.glob("*.yaml"))
README = (FOLDER / "README.md").read_text()
# the README's example commands, by the split file they pass
COMMANDS = {
    Path(m.group(2)).name: shlex.split(m.group(1))
    for m in re.finditer(r"^benchgen (run .*--split (splits/\S+\.yaml).*)$", README, re.MULTILINE)
}


def test_the_folder_holds_split_files():
    assert FILES, "splits/ has no split file"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_a_split_file_resolves_as_its_suite_reads_it(path):
    registry = get_registry()
    suite = registry.suite(yaml.safe_load(path.read_text())["suite"])
    split = registry.split(suite, str(path.relative_to(REPO)))  # what `--split splits/FILE.yaml` resolves
    assert split.name == path.stem and split.description
    owned = {name: (s.train, s.test) for name, s in registry.splits(suite).items()}
    assert split.name not in owned, f"{path.name} takes the name of a split suite '{suite.name}' owns"
    copies = [name for name, tasks in owned.items() if tasks == (split.train, split.test)]
    assert not copies, f"{path.name} repeats suite '{suite.name}''s own split(s) {copies}: pass them by name"
    assert f"`{path.name}`" in README, f"splits/README.md does not describe {path.name}"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_readmes_command_plans_the_splits_tasks(path, monkeypatch):
    assert path.name in COMMANDS, f"splits/README.md shows no `benchgen run ... --split splits/{path.name}`"
    args = COMMANDS[path.name]
    split = get_registry().split(get_registry().suite(args[1]), str(path))
    suite_class = type(get_registry().suite(args[1]))
    monkeypatch.setattr(suite_class, "check_task_available", lambda self, task: None)  # no ROMs needed to plan
    done = run_cli(*args, "--plan", cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    phases = "joint" if split.test else "train"
    assert re.search(rf"^\s+{phases}\s+\d+ units? x .*\({len(split.train)} tasks", done.stdout, re.MULTILINE), (
        done.stdout
    )
    if split.test and "--finetune" in args:
        assert re.search(rf"^\s+finetune\s+{len(split.test)} units? x ", done.stdout, re.MULTILINE), done.stdout
