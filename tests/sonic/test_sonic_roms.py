"""Missing and wrong ROMs give one-line errors; ``benchgen sonic import-roms``."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
import stable_retro.data as retro_data

from benchgen.errors import UsageError
from benchgen_sonic import roms
from benchgen_sonic.levels import GAMES, SONIC1
from benchgen_sonic.suite import SonicSuite
from benchgen_sonic.testing import AIRSTRIKER
from tests.conftest import run_cli


def airstriker_rom() -> Path:
    return Path(retro_data.get_romfile_path(AIRSTRIKER, retro_data.Integrations.STABLE))


@pytest.fixture
def custom_integrations(tmp_path, monkeypatch):
    """A custom stable-retro integration folder searched before the stable one (undone after)."""
    retro_data.DefaultIntegrations._init()
    monkeypatch.setattr(
        retro_data.DefaultIntegrations, "DEFAULT", retro_data.Integrations.STABLE | retro_data.Integrations.CUSTOM_ONLY
    )
    monkeypatch.setattr(retro_data.Integrations, "CUSTOM_PATHS", [str(tmp_path)], raising=False)
    return tmp_path


def test_missing_rom_is_one_line_naming_game_and_command():
    if roms.rom_status(SONIC1).ok:
        pytest.skip("a Sonic ROM is imported on this machine")
    with pytest.raises(UsageError) as err:
        SonicSuite().check_task_available("sonic1-GreenHillZone.Act2")
    message = str(err.value)
    assert "\n" not in message
    assert "Sonic The Hedgehog" in message and SONIC1 in message
    assert "benchgen sonic import-roms DIR" in message
    assert not SonicSuite().task_available("sonic1-GreenHillZone.Act2")


def test_wrong_rom_is_reported_with_its_checksum(custom_integrations):
    game_dir = custom_integrations / SONIC1
    game_dir.mkdir()
    fake = b"not the Sonic cartridge"
    (game_dir / "rom.md").write_bytes(fake)
    with pytest.raises(UsageError) as err:
        SonicSuite().check_task_available("sonic1-GreenHillZone.Act1")
    message = str(err.value)
    assert "\n" not in message
    assert hashlib.sha1(fake).hexdigest() in message
    assert "69e102855d4389c3fd1a8f3dc7d193f8eee5fe5b" in message  # the revision the levels need
    assert "import-roms" in message
    # stable-retro's own check agrees
    assert retro_data.verify_hash(SONIC1, retro_data.Integrations.DEFAULT) == [(SONIC1, "sha mismatch")]


def test_the_free_rom_passes_the_same_check():
    status = roms.rom_status(AIRSTRIKER)
    assert status.ok and status.sha1 in status.expected


def test_unknown_task_suggests_a_name():
    with pytest.raises(UsageError, match="did you mean 'sonic1-GreenHillZone.Act1'"):
        SonicSuite().check_task_available("sonic1-GreenHilZone.Act1")


def test_import_copies_a_matching_rom_and_reports_the_rest(tmp_path, monkeypatch):
    """Matching is by SHA-1 (stable-retro's); the target folder is redirected to tmp_path."""
    data = airstriker_rom().read_bytes()
    sha1 = hashlib.sha1(data).hexdigest()
    target = tmp_path / "integrations"
    (target / SONIC1).mkdir(parents=True)
    monkeypatch.setattr(retro_data, "get_known_hashes", lambda: {sha1: (SONIC1, ".md", str(target))})
    roms_dir = tmp_path / "roms"
    (roms_dir / "nested").mkdir(parents=True)
    (roms_dir / "nested" / "my sonic.md").write_bytes(data)
    (roms_dir / "other.bin").write_bytes(b"some other cartridge")
    (roms_dir / "notes.txt").write_text("not a ROM")
    report = roms.import_roms(roms_dir)
    assert report.scanned == 3
    assert report.imported == {SONIC1: str(roms_dir / "nested" / "my sonic.md")}
    assert (target / SONIC1 / "rom.md").read_bytes() == data
    assert report.unrecognized == [(str(roms_dir / "other.bin"), hashlib.sha1(b"some other cartridge").hexdigest())]


def test_import_reads_zip_archives(tmp_path, monkeypatch):
    import zipfile

    data = airstriker_rom().read_bytes()
    target = tmp_path / "integrations"
    (target / SONIC1).mkdir(parents=True)
    monkeypatch.setattr(
        retro_data, "get_known_hashes", lambda: {hashlib.sha1(data).hexdigest(): (SONIC1, ".md", str(target))}
    )
    with zipfile.ZipFile(tmp_path / "collection.zip", "w") as archive:
        archive.writestr("roms/sonic.bin", data)
    report = roms.import_roms(tmp_path)
    assert list(report.imported) == [SONIC1]


def test_import_roms_command_on_an_empty_folder(tmp_path):
    result = run_cli("sonic", "import-roms", tmp_path, plugins=None)
    lines = result.stdout.splitlines()
    assert f"scanned 0 file(s) in {tmp_path}" in lines
    assert "no Sonic ROM found" in lines
    for game in GAMES:
        assert any(line.strip().startswith(game) for line in lines)
    if not any(roms.rom_status(g).ok for g in GAMES):
        assert result.returncode == 1
        assert sum("not available: missing" in line for line in lines) == 3


def test_import_roms_command_on_a_missing_folder(tmp_path):
    result = run_cli("sonic", "import-roms", tmp_path / "nope", plugins=None)
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "is not a directory" in result.stderr


# import-roms reads only regular files, at most roms.MAX_ROM_BYTES each (issue 18, item 17)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_import_roms_does_not_wait_on_a_fifo(tmp_path):
    os.mkfifo(tmp_path / "x.bin")  # opening it for reading would block until a writer came
    result = run_cli("sonic", "import-roms", tmp_path, plugins=None, timeout=120)
    assert "Traceback" not in result.stderr, result.stderr
    assert f"skipped {tmp_path / 'x.bin'}: not a regular file (a FIFO, device or socket)" in result.stdout.splitlines()
    assert f"scanned 0 file(s) in {tmp_path}" in result.stdout.splitlines()


def test_import_roms_does_not_follow_a_link_to_a_large_file(tmp_path, monkeypatch):
    big = tmp_path / "elsewhere" / "huge.smd"
    big.parent.mkdir()
    with open(big, "wb") as handle:
        handle.truncate(256 * 2**20)  # sparse: costs no disk
    roms_dir = tmp_path / "roms"
    roms_dir.mkdir()
    (roms_dir / "sonic.smd").symlink_to(big)
    read = []
    groom = retro_data.groom_rom
    monkeypatch.setattr(retro_data, "groom_rom", lambda name, stream: read.append(name) or groom(name, stream))
    report = roms.import_roms(roms_dir)
    assert read == [] and report.scanned == 0
    assert report.skipped == [
        (str(roms_dir / "sonic.smd"), "a symbolic link, not followed; put the ROM itself in the folder")
    ]


def test_import_roms_skips_oversized_files_and_zip_members_with_a_message(tmp_path):
    import zipfile

    with open(tmp_path / "huge.bin", "wb") as handle:
        handle.truncate(roms.MAX_ROM_BYTES + 1)
    with zipfile.ZipFile(tmp_path / "pack.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("big.md", bytes(roms.MAX_ROM_BYTES + 1))  # a few KiB compressed
    (tmp_path / "small.md").write_bytes(b"a small cartridge")
    result = run_cli("sonic", "import-roms", tmp_path, plugins=None, timeout=120)
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stdout.splitlines()
    too_big = "larger than 8 MiB, which no Genesis ROM is"
    assert f"skipped {tmp_path / 'huge.bin'}: {too_big}" in lines
    assert f"skipped {tmp_path / 'pack.zip'}:big.md: {too_big}" in lines
    assert f"scanned 1 file(s) in {tmp_path}" in lines  # small.md, read and not recognized
    assert any(line.startswith(f"not a supported Sonic ROM: {tmp_path / 'small.md'}") for line in lines)
