"""Choosing a suite's protocol: a named preset, or a custom one from a YAML file.

A suite that implements several published protocols lists them in ``Suite.protocol_presets()``
and builds itself under one with ``Suite.with_protocol()``; this module turns what a user typed
(``--protocol NAME`` or ``--protocol FILE.yaml``) into that call, and prints presets side by side.

A custom protocol file names the preset it starts from and the parameters it changes::

    base: machado2018
    frameskip: 5
    noop_max: 30

The run records the choice as data (``run.json``: ``protocol_choice``), not as a path, so a
resumed run or a worker rebuilds the same suite even if the file has changed or gone since.

A suite's protocol dataclass may declare its parameters once with :func:`declared` fields, whose
defaults are the base protocol's values and whose metadata say what each is for; the helpers
below derive from that declaration what a protocol file may change (:func:`changeable`), the run
record's entries (:func:`recorded`), the ``benchgen protocols`` table (:func:`described`) and the
sources of the values a preset keeps from the base (:func:`declared_sources`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from benchgen.errors import UsageError, did_you_mean
from benchgen.inputs import read_yaml
from benchgen.suite import Suite

#: keys of a preset's description that are notes about it, not protocol parameters
NOTE_KEYS = ("sources", "open_values")

#: the roles of a protocol dataclass's :func:`declared` fields (``metadata["role"]``): a value two
#: runs must share to be compared (the run record); a default a run takes unless told, which the
#: run records as what it ran (its budget, its tasks), not as a comparability value; the notes
#: documenting a preset's values (``NOTE_KEYS``); the preset's name
COMPARED, RUN_DEFAULT, NOTE, IDENTITY = "compared", "run default", "note", "identity"


def declared(default: Any, role: str = COMPARED, **metadata: Any) -> Any:
    """A field of a protocol dataclass: its ``default`` (the base protocol's value), its ``role``
    and its ``metadata``: ``source`` of the default (it documents every preset that keeps the
    value and says nothing of it itself, :func:`declared_sources`); ``check(name, value)``, the
    check of a protocol file's value (the parameter is then changeable, :func:`changeable`);
    ``record(value)``, its entries in the run record (default ``{name: value}``); ``listed=False``
    keeps it off the ``benchgen protocols`` table; a suite may add keys of its own. A ``NOTE``
    field's ``default`` makes its empty value (``dict``), a fresh one for every preset."""
    if role == NOTE:
        return dataclasses.field(default_factory=default, metadata={"role": role, **metadata})
    return dataclasses.field(default=default, metadata={"role": role, **metadata})


def declared_values(protocol: Any, role: str) -> dict[str, Any]:
    """``protocol``'s values of the fields declared with ``role``, in declaration order."""
    return {f.name: getattr(protocol, f.name) for f in dataclasses.fields(protocol) if f.metadata["role"] == role}


def changeable(cls: type) -> dict[str, Callable[[str, Any], Any]]:
    """Parameter -> its check, for the fields of ``cls`` declared with one: what a protocol file
    may change."""
    return {f.name: f.metadata["check"] for f in dataclasses.fields(cls) if "check" in f.metadata}


def recorded(protocol: Any) -> dict[str, Any]:
    """``protocol``'s comparability values as the run record writes them: each under its own name
    unless its declaration's ``record`` gives its entries."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(protocol):
        if f.metadata["role"] == COMPARED:
            value = getattr(protocol, f.name)
            out.update(f.metadata["record"](value) if "record" in f.metadata else {f.name: value})
    return out


def described(protocol: Any) -> dict[str, Any]:
    """A preset as ``Suite.protocol_presets()`` gives it: its comparability values, the defaults a
    run takes unless told (all but those declared ``listed=False``), then its notes."""
    shown = {
        f.name: getattr(protocol, f.name)
        for f in dataclasses.fields(protocol)
        if f.metadata["role"] in (COMPARED, RUN_DEFAULT) and f.metadata.get("listed", True)
    }
    return {**shown, **{key: dict(getattr(protocol, key)) for key in NOTE_KEYS}}


def declared_sources(protocol: Any) -> dict[str, str]:
    """``protocol.sources`` with the declaration's ``source`` of each value the preset keeps at its
    default and documents in neither its ``sources`` nor its ``open_values``."""
    kept = {
        f.name: f.metadata["source"]
        for f in dataclasses.fields(protocol)
        if "source" in f.metadata
        and getattr(protocol, f.name) == f.default
        and f.name not in protocol.sources
        and f.name not in protocol.open_values
    }
    return {**kept, **protocol.sources}


def parse_choice(text: str | None) -> dict[str, Any] | None:
    """``--protocol`` as data: ``{"preset": NAME, "changes": {...}}``, or None for the suite's
    default. A value ending in ``.yaml``/``.yml`` is a custom protocol file."""
    if text is None:
        return None
    if not text.endswith((".yaml", ".yml")):
        return {"preset": text, "changes": {}}
    data = read_yaml(Path(text), "protocol file")
    if not isinstance(data, Mapping) or not isinstance(data.get("base"), str):
        raise UsageError(f"protocol file {text}: give `base: PRESET` and then the parameters it changes")
    return {"preset": data["base"], "changes": {k: v for k, v in data.items() if k != "base"}}


def apply_choice(suite: Suite, choice: Mapping[str, Any] | None) -> Suite:
    """``suite`` under the chosen protocol (itself when ``choice`` is None)."""
    if choice is None:
        return suite
    presets = suite.protocol_presets()
    if not presets:
        raise UsageError(f"suite '{suite.name}' has a single protocol; run it without --protocol")
    _check_known(suite, choice["preset"], presets)
    return suite.with_protocol(choice["preset"], dict(choice["changes"]))


def changed_parameters(preset: Any, custom: Any, names: Iterable[str]) -> dict[str, tuple[Any, Any]]:
    """``Suite.protocol_changes`` of a suite built under ``custom``, a preset's protocol object with
    a protocol file's changes applied: parameter -> (preset value, value used), for the ``names``
    the file gave whose value differs from the preset's (a value equal to it changes nothing)."""
    return {k: (getattr(preset, k), getattr(custom, k)) for k in names if getattr(preset, k) != getattr(custom, k)}


def protocol_budget(suite: Suite, choice: Mapping[str, Any] | None) -> int:
    """The budget a run under ``choice`` must reach to be protocol-length: ``default_budget`` of
    ``suite`` under that protocol (Atari 100K: 400K frames, not SABER's 200M). A run whose preset is
    no longer shipped is held to the suite's own budget."""
    try:
        return apply_choice(suite, choice).default_budget
    except UsageError:
        return suite.default_budget


def protocol_label(protocol: Mapping[str, Any]) -> str | None:
    """How a run's recorded ``protocol()`` names its protocol: ``NAME``, ``custom (from BASE)``,
    or None for a suite without named protocols; a preset past its first version says which
    (``dqn2015 v2``), so that a run of an earlier one is told apart."""
    name = protocol.get("protocol")
    version = str(protocol.get("protocol_version", "1"))
    shown = f"{protocol.get('protocol_base')}" if name == "custom" else name
    if name and version != "1":
        shown = f"{shown} v{version}"
    return f"custom (from {shown})" if name == "custom" else shown


def side_by_side(suite: Suite, names: list[str] | None = None) -> tuple[list[str], list[tuple[str, list[str], bool]]]:
    """The presets ``names`` (default all) as columns: ``(names, rows)``, each row ``(parameter,
    values, differs)``; ``differs`` marks a parameter whose values are not all equal."""
    presets = suite.protocol_presets()
    if not presets:
        raise UsageError(f"suite '{suite.name}' has a single protocol; `benchgen list {suite.name}` shows it")
    names = names or list(presets)
    for name in names:
        _check_known(suite, name, presets)
    params = [k for k in dict.fromkeys(k for n in names for k in presets[n]) if k not in NOTE_KEYS]
    rows = []
    for param in params:
        values = [_shown(presets[n].get(param)) for n in names]
        rows.append((param, values, len(set(values)) > 1))
    return names, rows


def notes(suite: Suite, name: str) -> list[tuple[str, str, str]]:
    """One preset's ``(parameter, value, source or what benchgen chose)`` rows."""
    presets = suite.protocol_presets()
    _check_known(suite, name, presets)
    preset = presets[name]
    sources, open_values = preset.get("sources", {}), preset.get("open_values", {})
    rows = []
    for param, value in preset.items():
        if param in NOTE_KEYS:
            continue
        note = sources.get(param, "")
        if param in open_values:
            note = (note + "; " if note else "") + "open: " + open_values[param]
        rows.append((param, _shown(value), note))
    return rows


def _check_known(suite: Suite, name: str, presets: Mapping[str, Any]) -> None:
    """A did-you-mean ``UsageError`` unless ``name`` is one of the suite's presets."""
    if name not in presets:
        raise did_you_mean(f"{suite.name} protocol", name, presets, listed_by=f"benchgen protocols {suite.name}")


def _shown(value: Any) -> str:
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={_shown(v)}" for k, v in value.items())
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return "-" if value is None else str(value)
