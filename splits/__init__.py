"""Split definitions (YAML) shipped with the first-party suites, one folder per suite."""
from pathlib import Path

#: folder holding ``<suite>/<split>.yaml``
ROOT = Path(__file__).resolve().parent


def split_files(suite: str) -> list[Path]:
    """The YAML split files shipped for ``suite``."""
    return sorted((ROOT / suite).glob("*.yaml"))
