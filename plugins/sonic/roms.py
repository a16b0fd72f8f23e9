"""The Sonic ROMs: is each game importable here, and importing a user's copies.

stable-retro ships the integrations (RAM maps, save states, scenarios) of the three games but
not the commercial ROMs. A user imports their own copies; stable-retro's importer recognizes a
ROM by the SHA-1 listed in the integration's ``rom.sha`` and silently skips anything else.
This module wraps its data API (``get_known_hashes``, ``groom_rom``, ``verify_hash``) so that
``benchgen sonic import-roms DIR`` says what it imported and what it did not recognize, and so
that a missing or wrong ROM is a one-line error before any work starts.
"""

from __future__ import annotations

import functools
import hashlib
import io
import os
import stat
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from benchgen.errors import UsageError
from benchgen_sonic.levels import GAME_TITLES, GAMES

IMPORT_COMMAND = "benchgen sonic import-roms DIR"

#: file extensions under which Genesis ROMs are usually distributed
ROM_EXTENSIONS = (".md", ".bin", ".gen", ".smd", ".68k")

#: the most ``import-roms`` reads of one file or zip member; larger ones are skipped unread. The
#: largest of the three games (Sonic 3 & Knuckles) is 4 MiB, 512 bytes more as .smd, and no
#: Genesis cartridge exceeds 5 MiB. Zip archives themselves may be larger: only their members are read.
MAX_ROM_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class RomStatus:
    """Whether one game's ROM is usable here."""

    game: str
    status: str
    """``ok``, ``missing`` (not imported), ``mismatch`` (wrong SHA-1) or ``no_integration``."""
    path: str | None = None
    sha1: str | None = None
    expected: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def message(self) -> str:
        """One line saying what is wrong and how to fix it (empty when ok)."""
        title = GAME_TITLES.get(self.game, self.game)
        if self.status == "missing":
            return (
                f"the ROM of {title} is not imported ({self.game}); stable-retro ships the levels "
                f"but not the game: import your copy with `{IMPORT_COMMAND}`"
            )
        if self.status == "mismatch":
            return (
                f"the ROM imported for {self.game} ({self.path}) has SHA-1 {self.sha1}, not the "
                f"{title} revision stable-retro's levels are made for ({' or '.join(self.expected)}); "
                f"import a matching copy with `{IMPORT_COMMAND}`"
            )
        if self.status == "no_integration":
            return (
                f"this stable-retro has no integration for {self.game}; reinstall it with `pip install -U stable-retro`"
            )
        return ""


@functools.lru_cache(maxsize=16)
def _file_sha1(path: str, size: int, mtime: float) -> str:
    """SHA-1 of a file; size and mtime are in the cache key so a replaced ROM is hashed again."""
    with open(path, "rb") as handle:
        return hashlib.sha1(handle.read()).hexdigest()


def rom_status(game: str) -> RomStatus:
    """Look for ``game``'s ROM where stable-retro looks and check its SHA-1 like stable-retro's
    ``verify_hash`` does (Genesis ROMs are hashed whole)."""
    import stable_retro.data as retro_data

    sha_file = retro_data.get_file_path(game, "rom.sha", retro_data.Integrations.DEFAULT)
    if sha_file is None:
        return RomStatus(game, "no_integration")
    expected = tuple(Path(sha_file).read_text().split())
    try:
        path = retro_data.get_romfile_path(game, retro_data.Integrations.DEFAULT)
    except FileNotFoundError:
        return RomStatus(game, "missing", expected=expected)
    stat = os.stat(path)
    sha1 = _file_sha1(path, stat.st_size, stat.st_mtime)
    if sha1 not in expected:
        return RomStatus(game, "mismatch", path, sha1, expected)
    return RomStatus(game, "ok", path, sha1, expected)


def check_level_files(game: str, state: str) -> None:
    """Raise ``UsageError`` if ``game``'s ROM is missing or wrong, or the save state is absent."""
    import stable_retro.data as retro_data

    status = rom_status(game)
    if not status.ok:
        raise UsageError(status.message())
    if retro_data.get_file_path(game, f"{state}.state", retro_data.Integrations.DEFAULT) is None:
        raise UsageError(
            f"this stable-retro has no save state {state} for {game}; reinstall it with `pip install -U stable-retro`"
        )


@dataclass
class ImportReport:
    """What ``import_roms`` found."""

    scanned: int = 0
    """Files (and zip members) read."""
    imported: dict[str, str] = field(default_factory=dict)
    """game -> the file it was imported from."""
    unrecognized: list[tuple[str, str]] = field(default_factory=list)
    """(file, SHA-1) of files that look like Genesis ROMs but match none of the games."""
    skipped: list[tuple[str, str]] = field(default_factory=list)
    """(file, why) of files and zip members passed over: links, FIFOs, devices, files over
    ``MAX_ROM_BYTES``, unreadable or damaged ones, contents stable-retro refuses."""


class _Skip(Exception):
    """A file ``import-roms`` does not read; the message says why."""


_TOO_BIG = f"larger than {MAX_ROM_BYTES // 2**20} MiB, which no Genesis ROM is"


def _open_regular(path: str) -> io.BufferedReader:
    """Open ``path`` for reading if it is a regular file, never following a link or blocking."""
    try:
        if stat.S_ISLNK(os.lstat(path).st_mode):
            raise _Skip("a symbolic link, not followed; put the ROM itself in the folder")
        # O_NOFOLLOW and O_NONBLOCK: a file swapped for a link or a FIFO after the lstat above is
        # neither followed nor waited on (opening a FIFO blocks until a writer appears)
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
        fd = os.open(path, flags)
    except OSError as exc:
        raise _Skip(f"cannot be read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise _Skip("not a regular file (a FIFO, device or socket)")
    return os.fdopen(fd, "rb")


def _read_capped(stream) -> bytes:
    data = stream.read(MAX_ROM_BYTES + 1)  # capped even if the file grows after its size was checked
    if len(data) > MAX_ROM_BYTES:
        raise _Skip(_TOO_BIG)
    return data


def _zip_members(path: str, handle: io.BufferedReader, skipped: list) -> Iterator[tuple[str, bytes]]:
    try:
        with zipfile.ZipFile(handle) as archive:
            for member in archive.infolist():
                name = f"{path}:{member.filename}"
                if member.is_dir():
                    continue
                if member.file_size > MAX_ROM_BYTES:
                    skipped.append((name, _TOO_BIG))
                    continue
                try:
                    with archive.open(member) as stream:
                        data = _read_capped(stream)
                except _Skip as why:
                    skipped.append((name, str(why)))
                    continue
                except (zipfile.BadZipFile, RuntimeError, NotImplementedError, OSError) as exc:
                    # damaged, encrypted (RuntimeError) or compressed in a way zipfile lacks
                    skipped.append((name, f"cannot be extracted ({exc})"))
                    continue
                yield name, data
    except (zipfile.BadZipFile, OSError) as exc:
        skipped.append((path, f"a damaged zip archive ({exc})"))


def _candidates(directory: Path, skipped: list) -> Iterator[tuple[str, bytes]]:
    """The content of every regular file under ``directory`` up to ``MAX_ROM_BYTES``, and of every
    member of zip archives, as (name, bytes); what is not read is added to ``skipped``."""
    for root, _dirs, files in os.walk(directory):  # does not descend into linked folders
        for name in sorted(files):
            path = os.path.join(root, name)
            try:
                handle = _open_regular(path)
            except _Skip as why:
                skipped.append((path, str(why)))
                continue
            with handle:
                try:
                    if zipfile.is_zipfile(handle):
                        handle.seek(0)
                        yield from _zip_members(path, handle, skipped)
                        continue
                    handle.seek(0)
                    if os.fstat(handle.fileno()).st_size > MAX_ROM_BYTES:
                        raise _Skip(_TOO_BIG)
                    data = _read_capped(handle)
                except _Skip as why:
                    skipped.append((path, str(why)))
                    continue
                except OSError as exc:
                    skipped.append((path, f"cannot be read ({exc.strerror or exc})"))
                    continue
            yield path, data


def import_roms(directory: str | Path, games: tuple[str, ...] = GAMES) -> ImportReport:
    """Copy the ROMs of ``games`` found under ``directory`` into stable-retro's data folder.

    Matching is stable-retro's: the SHA-1 of the (groomed) ROM must be listed in the game's
    ``rom.sha``. Raises ``UsageError`` if ``directory`` does not exist or stable-retro's data
    folder is not writable.
    """
    import stable_retro.data as retro_data

    directory = Path(directory)
    if not directory.is_dir():
        raise UsageError(f"{directory} is not a directory; pass the folder that holds your ROM files")
    wanted = {sha: entry for sha, entry in retro_data.get_known_hashes().items() if entry[0] in games}
    report = ImportReport()
    for name, content in _candidates(directory, report.skipped):
        report.scanned += 1
        try:
            data, sha1 = retro_data.groom_rom(name, io.BytesIO(content))
        except ValueError as exc:  # stable-retro refuses the content
            report.skipped.append((name, f"not a readable ROM ({exc})"))
            continue
        if sha1 in wanted:
            game, ext, integrations_dir = wanted[sha1]
            target = Path(integrations_dir) / game / f"rom{ext}"
            try:
                target.write_bytes(data)
            except OSError as exc:
                raise UsageError(
                    f"cannot write {target} ({exc.strerror}); stable-retro keeps ROMs in its "
                    f"own data folder: run with permission to write there"
                ) from None
            report.imported[game] = name
        elif name.lower().endswith(ROM_EXTENSIONS):
            report.unrecognized.append((name, sha1))
    return report
