"""Every folder of the first-party packages that holds modules or data files (splits, tuned
settings, score tables, templates) is a package that pyproject.toml lists, so a wheel or a
non-editable install carries what an editable install finds in the source tree (the list is
explicit because the repository's folders are installed under other names)."""

from __future__ import annotations

from pathlib import Path

import tomllib

REPO = Path(__file__).resolve().parents[2]
PACKAGED_SUFFIXES = {".py", ".yaml", ".csv", ".json", ".tmpl", ".in"}


def test_every_module_and_data_folder_is_a_listed_package():
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    missing = []
    for package, folder in config["package-dir"].items():
        root = REPO / folder
        for path in root.rglob("*"):
            if path.suffix not in PACKAGED_SUFFIXES or "__pycache__" in path.parts:
                continue
            dotted = ".".join([package, *path.parent.relative_to(root).parts])
            if dotted not in listed:
                missing.append(str(path.relative_to(REPO)))
    assert not missing, f"files a wheel would leave out (add their folders to [tool.setuptools] packages): {missing}"
