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
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from benchgen.errors import UsageError, did_you_mean
from benchgen.inputs import read_yaml
from benchgen.suite import Suite

#: keys of a preset's description that are notes about it, not protocol parameters
NOTE_KEYS = ("sources", "open_values")


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
