"""A protocol dataclass declared once (``benchgen.protocols.declared``): what a protocol file may
change, the run record, the ``benchgen protocols`` rows and the sources of the values a preset
keeps are read from the fields, so a field added to the declaration is in all of them."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import pytest

from benchgen.errors import UsageError
from benchgen.protocols import (
    COMPARED,
    IDENTITY,
    NOTE,
    RUN_DEFAULT,
    changeable,
    declared,
    declared_sources,
    declared_values,
    described,
    recorded,
)


def _whole(name, value):
    if not isinstance(value, int):
        raise UsageError(f"{name} must be a whole number")
    return value


@dataclasses.dataclass(frozen=True)
class Toy:
    """A toy protocol: its defaults are the base preset's."""

    name: str = declared("base", IDENTITY)
    """the preset's name"""
    repeat: int = declared(4, source="base paper, Table 1", check=_whole)
    """actions repeated"""
    rule: bool = declared(True, source="base paper, section 2", record=lambda v: {"rule": "on" if v else None})
    """a rule recorded under a description"""
    budget: int = declared(100, RUN_DEFAULT)
    """a run's default budget"""
    folder: str = declared("", RUN_DEFAULT, listed=False)
    """a default kept off the table"""
    sources: Mapping[str, str] = declared(dict, NOTE)
    """parameter -> source"""
    open_values: Mapping[str, str] = declared(dict, NOTE)
    """parameter -> what is open"""


def test_the_lists_come_from_the_fields():
    other = Toy(name="other", repeat=5, rule=False, budget=7, folder="x", sources={"repeat": "other paper"})
    assert list(changeable(Toy)) == ["repeat"] and changeable(Toy)["repeat"]("repeat", 3) == 3
    assert declared_values(other, COMPARED) == {"repeat": 5, "rule": False}
    assert declared_values(other, RUN_DEFAULT) == {"budget": 7, "folder": "x"}
    assert recorded(Toy()) == {"repeat": 4, "rule": "on"} and recorded(other) == {"repeat": 5, "rule": None}
    assert described(other) == {
        "repeat": 5,
        "rule": False,
        "budget": 7,
        "sources": {"repeat": "other paper"},
        "open_values": {},
    }
    assert Toy().sources is not other.sources  # each preset its own notes


def test_a_kept_value_takes_the_declared_source_unless_the_preset_documents_it():
    assert declared_sources(Toy()) == {"repeat": "base paper, Table 1", "rule": "base paper, section 2"}
    # a changed value never takes the base's source; one the preset documents or leaves open keeps its own
    changed = Toy(name="c", repeat=5, sources={"rule": "c's paper"})
    assert declared_sources(changed) == {"rule": "c's paper"}
    assert declared_sources(Toy(name="o", open_values={"rule": "not stated"})) == {"repeat": "base paper, Table 1"}
    with pytest.raises(UsageError):
        changeable(Toy)["repeat"]("repeat", "four")
