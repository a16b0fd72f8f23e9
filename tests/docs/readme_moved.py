"""Check that nothing of an earlier README was lost when its sections moved into ``docs/``.

    python tests/docs/readme_moved.py REV     # e.g. adcff1e, the last README before the move

Every sentence and table row of the README at ``REV`` (headings aside; link targets ignored, as
the moved pages point at the same files from another folder) must appear, whitespace aside, in
today's README or in a committed page under ``docs/``; so must every number. Prints what is
missing and exits 1 if anything is. A one-off check for the move, not a test: the moved pages
go on changing after it.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NUMBER = re.compile(r"\d[\d,.]*\d|\d")


def _plain(text: str) -> str:
    """Markdown reduced to what a reader sees: links to their text, code ticks dropped, one space."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return " ".join(text.replace("`", "").split())


def _pieces(text: str) -> list[str]:
    """The sentences, table rows and code lines of ``text``, headings left out."""
    out, paragraph, fence = [], [], False

    def flush():
        out.extend(re.split(r"(?<=[.:;!?)])\s+(?=[A-Z(`*])", _plain(" ".join(paragraph))))
        paragraph.clear()

    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
            flush()
        elif fence or line.startswith("|"):
            out.append(line)
        elif line.startswith("#") or not line.strip():
            flush()
        else:
            paragraph.append(line)
    flush()
    return [_plain(p) for p in out if p.strip()]


def committed_docs() -> str:
    names = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "README.md", "docs/*.md"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    return "\n".join((REPO / n).read_text() for n in names.stdout.split())


def main(argv: list[str]) -> int:
    old = subprocess.run(["git", "show", f"{argv[0]}:README.md"], cwd=REPO, capture_output=True, text=True, check=True)
    new = committed_docs()
    flat = _plain(new)
    missing = [p for p in _pieces(old.stdout) if p not in flat]
    numbers = set(NUMBER.findall(old.stdout)) - set(NUMBER.findall(new))
    for piece in missing:
        print(f"missing: {piece[:160]}")
    if numbers:
        print(f"numbers missing: {sorted(numbers)}")
    print(f"{len(missing)} pieces and {len(numbers)} numbers of the README at {argv[0]} not found")
    return 1 if missing or numbers else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
