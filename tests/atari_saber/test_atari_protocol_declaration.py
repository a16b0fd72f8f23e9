"""The Atari protocol's parameters are declared once (issue 46, 2): the fields of ``AtariProtocol``,
their defaults SABER's values with their sources. What a protocol file may change, the run
record, the ``benchgen protocols`` table and ale-py's settings come from that declaration, and the
presets state only how they differ from their base, so a new parameter is one field (and its use
in the env)."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from benchgen.protocols import COMPARED, NOTE, RUN_DEFAULT, changeable, declared, notes, side_by_side
from benchgen_atari_saber import protocols
from benchgen_atari_saber.env import ale_settings
from benchgen_atari_saber.protocols import PRESETS, SABER, AtariProtocol
from benchgen_atari_saber.suite import AtariSaberSuite

FIELDS = dataclasses.fields(AtariProtocol)


def _other(value):
    """A value of the same type that differs from ``value``."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    return f"{value} (changed)"


def test_the_defaults_are_saber_and_each_of_its_values_has_its_declared_source():
    assert SABER == AtariProtocol() and protocols.DEFAULT == "saber"
    for f in FIELDS:
        if "source" in f.metadata:
            assert SABER.sources[f.name] == f.metadata["source"]
    assert set(AtariProtocol.CHANGEABLE) == {f.name for f in FIELDS if "check" in f.metadata}
    assert {"frameskip", "best_policy", "evaluation_epsilon"} <= set(AtariProtocol.CHANGEABLE)
    assert not {"name", "version", "task_score", "training_frames", "sources"} & set(AtariProtocol.CHANGEABLE)


def test_every_field_is_in_the_protocols_table_unless_declared_off_it():
    """The table's rows are the declared fields, in their order: a new field cannot be left out."""
    names, rows = side_by_side(AtariSaberSuite())
    assert names == list(PRESETS)
    shown = [f.name for f in FIELDS if f.metadata["role"] in (COMPARED, RUN_DEFAULT) and f.metadata.get("listed", True)]
    assert [param for param, _, _ in rows] == shown
    assert [f.name for f in FIELDS if not f.metadata.get("listed", True)] == ["tuned"]  # never shown
    assert {f.name for f in FIELDS if f.metadata["role"] == NOTE} == {"sources", "open_values"}
    assert len(shown) == len(FIELDS) - 4  # all but the name (the columns), tuned and the two notes


@pytest.mark.parametrize("name", [f.name for f in FIELDS if f.metadata["role"] == COMPARED])
def test_every_comparability_value_reaches_the_run_record(name):
    """Changing any comparability value changes the suite's ``protocol()``, so ``compare`` keeps
    runs of different protocols apart, for a field added later too."""
    before = AtariSaberSuite(SABER).protocol()
    after = AtariSaberSuite(dataclasses.replace(SABER, **{name: _other(getattr(SABER, name))})).protocol()
    assert after != before


@pytest.mark.parametrize("name", [f.name for f in FIELDS if f.metadata["role"] == RUN_DEFAULT])
def test_run_defaults_are_not_comparability_values(name):
    assert name not in SABER.parameters()
    changed = dataclasses.replace(SABER, **{name: _other(getattr(SABER, name))})
    assert AtariSaberSuite(changed).protocol() == AtariSaberSuite(SABER).protocol()


def test_the_ale_settings_come_from_the_declaration():
    from ale_py.vector_env import AtariVectorEnv

    accepted = inspect.signature(AtariVectorEnv).parameters
    declared_ale = {f.name: f.metadata["ale"] for f in FIELDS if "ale" in f.metadata}
    assert set(declared_ale) == {
        "sticky_action_probability",
        "frameskip",
        "full_action_space",
        "noop_max",
        "max_episode_frames",
    }
    for preset in PRESETS.values():
        settings = ale_settings(preset)
        for name, setting in declared_ale.items():
            assert setting in accepted and settings[setting] == getattr(preset, name)
    assert ale_settings(SABER, 18_000)["max_num_frames_per_episode"] == 18_000  # an evaluation cap


def test_each_preset_states_only_its_differences_each_with_its_source():
    for preset in PRESETS.values():
        for f in FIELDS:
            if f.name in ("name", "version") or f.metadata["role"] == NOTE or not f.metadata.get("listed", True):
                continue
            if getattr(preset, f.name) != getattr(SABER, f.name):
                assert f.name in preset.sources or f.name in preset.open_values, f"{preset.name}.{f.name}"
    # what a preset does not document of the values it keeps, the declaration does
    assert protocols.MACHADO2018.sources["evaluation_frames"] == "none: scores come from the training episodes"
    with pytest.raises(ValueError, match=r"states \['frameskip'\] at saber's values"):
        protocols._preset(SABER, name="x", version="1", frameskip=4)


def test_a_new_parameter_is_one_declaration(monkeypatch):
    """A field added to the declaration is in the table, the preset notes, the run record and
    the parameters a protocol file may change, with no other edit."""

    @dataclasses.dataclass(frozen=True)
    class WithNewRule(AtariProtocol):
        new_rule: int = declared(0, source="a paper, section 1", check=lambda name, value: value)
        """a parameter added after the others"""

    base = WithNewRule()
    other = dataclasses.replace(base, name="other", new_rule=3, sources={"new_rule": "another paper"})
    monkeypatch.setattr(protocols, "PRESETS", {"saber": base, "other": other})
    suite = AtariSaberSuite(base)
    _, rows = side_by_side(suite)
    assert ("new_rule", ["0", "3"], True) in rows
    assert ("new_rule", "0", "a paper, section 1") in notes(suite, "saber")
    assert ("new_rule", "3", "another paper") in notes(suite, "other")
    assert AtariSaberSuite(other).protocol()["new_rule"] == 3 and other.parameters()["new_rule"] == 3
    assert "new_rule" in changeable(WithNewRule) and base.changed({"new_rule": 5}).new_rule == 5
    assert AtariSaberSuite(base).with_protocol("other", {"new_rule": 4}).protocol_changes == {"new_rule": (3, 4)}
