"""``benchgen new-plugin`` / ``new-agent`` refuse, in one line and before writing anything, a name
that would shadow an installed package (issue 27 item 10): a shipped plugin's entry point
(``agents``, ``sonic``, ``atari_saber``, ``gymnasium``), an importable ``benchgen_<name>``, or a
suite already installed."""

from __future__ import annotations

import pytest


def _refused(capsys, fragment: str, *args) -> None:
    from benchgen.cli import main

    capsys.readouterr()
    code = main(list(args))
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == 2 and len(err) == 1 and err[0].startswith("benchgen: error: "), err
    assert fragment in err[0], err[0]


@pytest.mark.parametrize("command", ["new-plugin", "new-agent"])
@pytest.mark.parametrize("name", ["agents", "sonic", "atari_saber", "gymnasium"])
def test_a_name_shadowing_a_shipped_plugin_is_refused(command, name, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _refused(capsys, f"'{name}' is the name of an installed plugin", command, name)
    assert not any(tmp_path.iterdir())


def test_an_import_name_already_taken_is_refused(tmp_path, monkeypatch, capsys):
    (tmp_path / "benchgen_corridors").mkdir()
    (tmp_path / "benchgen_corridors" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    _refused(capsys, "import name benchgen_corridors of 'corridors' is already taken", "new-plugin", "corridors")
    assert [p.name for p in tmp_path.iterdir()] == ["benchgen_corridors"]


def test_a_suite_name_already_installed_is_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _refused(capsys, "a suite named 'toy' is already installed", "new-plugin", "toy")
    assert not any(tmp_path.iterdir())


def test_a_free_name_is_written(tmp_path, monkeypatch, capsys):
    from benchgen.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["new-plugin", "corridors"]) == 0
    assert (tmp_path / "benchgen-corridors" / "pyproject.toml").is_file()
