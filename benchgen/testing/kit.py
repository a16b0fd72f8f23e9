"""What the suite kit (:mod:`benchgen.testing.checks`) and the agent kit
(:mod:`benchgen.testing.agent_checks`) share: the error they raise, the registries they build and
the per-episode columns the core stores itself."""

from __future__ import annotations

import contextlib
import importlib.metadata
import os
from collections.abc import Iterator
from typing import Any

from benchgen.registry import ENTRY_POINT_GROUP, EXTRA_PLUGINS_ENV, Registry
from benchgen.suite import Suite

#: per-episode columns the core stores itself; ``episode_fields`` must not reuse them
CORE_EPISODE_COLUMNS = frozenset(
    {
        "id",
        "unit_id",
        "phase",
        "seed",
        "task",
        "episode",
        "env_index",
        "frames_total",
        "length_frames",
        "score",
        "end_reason",
        "extras",
        "events",
    }
)


class ConformanceError(AssertionError):
    """A plugin (a suite or an agent) breaks its contract; the message says how to fix it."""


def suite_failure(suite: Suite | str, message: str) -> ConformanceError:
    """A :class:`ConformanceError` naming ``suite``."""
    name = suite if isinstance(suite, str) else suite.name
    return ConformanceError(f"suite '{name}': {message}")


def first_party_agent_plugins() -> list[tuple[str, Any]]:
    """The plugins of benchgen's own distribution that contribute agents and no suites, as
    ``(module name, module)``: found through the distribution's entry points, so that the kit
    names no agent package."""
    found = []
    for ep in importlib.metadata.distribution("benchgen").entry_points:
        if ep.group != ENTRY_POINT_GROUP:
            continue
        try:
            module = ep.load()
        except ImportError:  # pragma: no cover - benchgen ships them
            continue
        if hasattr(module, "benchgen_agents") and not hasattr(module, "benchgen_suites"):
            found.append((ep.value, module))
    return found


# -- registries --------------------------------------------------------------------------------
def build_registry(plugins: Any = None, include_agents: bool = True) -> Registry:
    """A registry for the plugin under test.

    ``plugins`` is a plugin module (or object with ``@benchgen.hookimpl`` functions), a list of
    them, or None for the installed plugins (entry points plus ``BENCHGEN_PLUGINS``). Hand-given
    plugins are registered alone (``BENCHGEN_PLUGINS`` is ignored while building it), plus the
    first-party agents (``benchgen_agents``, part of the ``benchgen`` distribution) unless
    ``include_agents`` is false, so an agent of random play can run on the suite.
    """
    if plugins is None:
        return Registry()
    if not isinstance(plugins, (list, tuple)):
        plugins = [plugins]
    named = [(getattr(p, "__name__", None) or repr(p), p) for p in plugins]
    if include_agents:
        given = {id(p) for _, p in named}
        named += [(name, p) for name, p in first_party_agent_plugins() if id(p) not in given]
    saved = os.environ.pop(EXTRA_PLUGINS_ENV, None)
    try:
        return Registry(plugins=named, autoload=False)
    finally:
        if saved is not None:
            os.environ[EXTRA_PLUGINS_ENV] = saved


@contextlib.contextmanager
def use_registry(registry: Registry) -> Iterator[Registry]:
    """Make ``registry`` the process-wide one (what the CLI and reports use) for a while."""
    from benchgen import registry as registry_module

    saved = registry_module._default
    registry_module._default = registry
    try:
        yield registry
    finally:
        registry_module._default = saved
