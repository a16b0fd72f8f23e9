"""Plugin discovery and the registry of suites, splits, scorers and agents.

Plugins are found through the entry-point group ``benchgen``. Discovery is strict, as pytest's:
a plugin that fails to import, or implements a hook that does not exist, stops start-up with an
error naming the plugin and its distribution (a silently missing split corrupts a benchmark).
``benchgen plugins`` still lists what loaded and what failed.

Set ``BENCHGEN_DISABLE_PLUGIN_AUTOLOAD=1`` to skip entry-point discovery (tests and embedding
applications then register plugins by hand with ``Registry(plugins=[...])``), and
``BENCHGEN_PLUGINS=pkg.module,other.module`` to load plugin modules by import name in addition
(like pytest's ``PYTEST_PLUGINS``).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import pluggy

from benchgen import hookspecs
from benchgen.agent import AgentSpec
from benchgen.errors import PluginError, UsageError, did_you_mean
from benchgen.scoring import ReferenceScores, Scorer
from benchgen.suite import Split, Suite, load_split_yaml

ENTRY_POINT_GROUP = "benchgen"
DISABLE_AUTOLOAD_ENV = "BENCHGEN_DISABLE_PLUGIN_AUTOLOAD"
EXTRA_PLUGINS_ENV = "BENCHGEN_PLUGINS"


@dataclass
class PluginInfo:
    """One discovered plugin: what ``benchgen plugins`` prints and each run records."""

    name: str
    distribution: str
    version: str
    module: str
    error: str | None = None


class Registry:
    """Loaded plugins and everything they contribute."""

    def __init__(self, plugins: Iterable[tuple[str, Any]] = (), autoload: bool | None = None, strict: bool = True):
        self.pm = pluggy.PluginManager("benchgen")
        self.pm.add_hookspecs(hookspecs)
        self.plugins: list[PluginInfo] = []
        if autoload is None:
            autoload = not os.environ.get(DISABLE_AUTOLOAD_ENV)
        if autoload:
            self._load_entry_points(strict)
        for module_name in filter(None, (m.strip() for m in os.environ.get(EXTRA_PLUGINS_ENV, "").split(","))):
            self._load_module(module_name, strict)
        for name, plugin in plugins:
            self.register(name, plugin, distribution="(registered by hand)", version="")
        self._check(strict)

    # -- discovery -----------------------------------------------------------------------
    def _load_entry_points(self, strict: bool) -> None:
        # pluggy's load_setuptools_entrypoints does not say which distribution failed: do it here.
        for dist in importlib.metadata.distributions():
            for ep in dist.entry_points:
                if ep.group != ENTRY_POINT_GROUP or self.pm.get_plugin(ep.name) is not None:
                    continue
                dist_name = dist.metadata["name"]
                info = PluginInfo(ep.name, dist_name, dist.version, ep.value)
                self.plugins.append(info)
                try:
                    plugin = ep.load()
                except (Exception, SystemExit) as exc:  # noqa: BLE001 - re-raised with the plugin named
                    # (a module calling sys.exit() at import would end every command, silently)
                    info.error = f"{type(exc).__name__}: {exc}"
                    if strict:
                        raise PluginError(
                            f"error importing plugin '{ep.name}' from distribution {dist_name} {dist.version}: "
                            f"{info.error}; fix or uninstall it (or set {DISABLE_AUTOLOAD_ENV}=1)"
                        ) from exc
                    continue
                self.pm.register(plugin, name=ep.name)

    def _load_module(self, module_name: str, strict: bool) -> None:
        info = PluginInfo(module_name, f"({EXTRA_PLUGINS_ENV})", "", module_name)
        self.plugins.append(info)
        try:
            plugin = importlib.import_module(module_name)
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - re-raised with the plugin named
            info.error = f"{type(exc).__name__}: {exc}"
            if strict:
                raise PluginError(
                    f"error importing plugin '{module_name}' named in {EXTRA_PLUGINS_ENV}: {info.error}"
                ) from exc
            return
        self.pm.register(plugin, name=module_name)

    def register(self, name: str, plugin: Any, distribution: str, version: str) -> None:
        """Register a plugin object by hand (tests, embedding applications)."""
        self.pm.register(plugin, name=name)
        self.plugins.append(PluginInfo(name, distribution, version, getattr(plugin, "__name__", repr(plugin))))

    def _check(self, strict: bool) -> None:
        try:
            self.pm.check_pending()
        except pluggy.PluginValidationError as exc:
            plugin_name = self.pm.get_name(exc.plugin) or repr(exc.plugin)
            info = next((p for p in self.plugins if p.name == plugin_name), None)
            dist = f" from distribution {info.distribution} {info.version}" if info else ""
            message = str(exc).splitlines()[0]
            if info:
                info.error = message
            if strict:
                raise PluginError(
                    f"plugin '{plugin_name}'{dist} implements an unknown hook ({message}); "
                    f"hooks are listed in benchgen.hookspecs"
                ) from None

    # -- calling the hooks ------------------------------------------------------------------
    def who(self, plugin_name: str) -> str:
        """A plugin as messages name it: its name and the distribution that installed it."""
        info = next((p for p in self.plugins if p.name == plugin_name), None)
        if info is None:
            dist = ""
        elif info.distribution.startswith("("):  # (named in BENCHGEN_PLUGINS, or registered by hand)
            dist = f" {info.distribution}"
        else:
            dist = f" from distribution {info.distribution} {info.version}".rstrip()
        return f"plugin '{plugin_name}'{dist}"

    def call_each(self, hook: str, **kwargs: Any) -> list[tuple[str, Any]]:
        """``(plugin name, result)`` of each plugin's implementation of ``hook``, in pluggy's order
        (the last registered first). Pluggy's own call would let a plugin's exception (or its
        ``sys.exit``) through as a traceback that does not name it: here it is one line naming the
        plugin and its distribution."""
        out = []
        for impl in reversed(getattr(self.pm.hook, hook).get_hookimpls()):
            try:
                result = impl.function(*(kwargs[name] for name in impl.argnames))
            except PluginError:
                raise
            except (Exception, SystemExit) as exc:  # noqa: BLE001 - re-raised with the plugin named
                first = (str(exc).strip().splitlines() or [""])[0][:200]
                raise PluginError(
                    f"{self.who(impl.plugin_name)} failed in its {hook} hook ({type(exc).__name__}: {first}); "
                    f"fix or uninstall it (or set {DISABLE_AUTOLOAD_ENV}=1)"
                ) from None
            out.append((impl.plugin_name, result))
        return out

    def contributions(self, hook: str, kind: type, **kwargs: Any) -> list[Any]:
        """Everything the plugins' ``hook`` returned: each a list (or None) of ``kind``; a plugin
        returning anything else (``[42]``, ``"abc"``) is one line naming it."""
        items = []
        for name, result in self.call_each(hook, **kwargs):
            if result is None:
                continue
            if not isinstance(result, (list, tuple)) or not all(isinstance(item, kind) for item in result):
                raise PluginError(
                    f"{self.who(name)}: its {hook} hook returned {_shown(result)}, not a list of {kind.__name__}; "
                    "fix or uninstall it"
                )
            items.extend(result)
        return items

    # -- what plugins contribute ---------------------------------------------------------
    @cached_property
    def suites(self) -> dict[str, Suite]:
        return _by_name([self.contributions("benchgen_suites", Suite)], "suite")

    @cached_property
    def agents(self) -> dict[str, AgentSpec]:
        return _by_name([self.contributions("benchgen_agents", AgentSpec)], "agent")

    def suite(self, name: str) -> Suite:
        if name not in self.suites:
            raise did_you_mean("suite", name, self.suites, hint="Is its plugin installed? (`benchgen plugins`)")
        return self.suites[name]

    def agent(self, name: str) -> AgentSpec:
        if name not in self.agents:
            raise did_you_mean("agent", name, self.agents, hint="Is its plugin installed? (`benchgen plugins`)")
        return self.agents[name]

    def random_play_agent(self) -> str | None:
        """The name of an agent that declares random play (``AgentSpec.random_play``), which smoke
        runs and a new plugin's tests run: the first by name where several do; None where none does."""
        return next((name for name, spec in sorted(self.agents.items()) if spec.random_play), None)

    def splits(self, suite: Suite) -> dict[str, Split]:
        """The suite's own splits (``Suite.splits``) and those plugins add (``benchgen_splits``)."""
        out: dict[str, Split] = {}
        known = set(suite.tasks())
        for split in [*suite.splits(), *self.contributions("benchgen_splits", Split, suite=suite)]:
            if split.name in out:
                raise PluginError(
                    f"split '{split.name}' of suite '{suite.name}' is defined twice (by the suite "
                    "or by plugins); rename one"
                )
            bad = [t for t in split.tasks if t not in known]
            if bad:
                raise PluginError(f"split '{split.name}' of suite '{suite.name}' names unknown tasks {bad[:5]}")
            out[split.name] = split
        return out

    def split(self, suite: Suite, name: str) -> Split:
        """A split by name, or a user's YAML file (a path ending in .yaml/.yml)."""
        if name.endswith((".yaml", ".yml")) or Path(name).is_file():
            split = load_split_yaml(name, suite=suite.name)
            self.check_tasks(suite, split.tasks)
            return split
        splits = self.splits(suite)
        if name not in splits:
            raise did_you_mean(f"split of suite '{suite.name}'", name, splits, hint="or pass a YAML split file")
        return splits[name]

    def check_tasks(self, suite: Suite, tasks: Iterable[str]) -> list[str]:
        known = suite.tasks()
        out = []
        for task in tasks:
            if task not in known:
                raise did_you_mean(
                    f"task of suite '{suite.name}'", task, known, listed_by=f"benchgen list {suite.name}"
                )
            out.append(task)
        return out

    def declared_scorer(self, suite: Suite) -> Scorer | None:
        """The suite's own scorer (``Suite.scorer``), else the first a plugin gives for it
        (``benchgen_scorer``); None if neither has one."""
        own = suite.scorer()
        if own is not None:
            return own
        for name, scorer in self.call_each("benchgen_scorer", suite=suite):  # (the first result counts)
            if scorer is None:
                continue
            if not isinstance(scorer, Scorer):
                raise PluginError(
                    f"{self.who(name)}: its benchgen_scorer hook returned {_shown(scorer)}, not a Scorer or None; "
                    "fix or uninstall it"
                )
            return scorer
        return None

    def scorer(self, suite: Suite) -> Scorer:
        """:meth:`declared_scorer`, or raw scoring (mean only) when there is none."""
        scorer = self.declared_scorer(suite)
        return scorer if scorer is not None else Scorer({}, {})

    def reference_scores(self, suite: Suite) -> dict[str, ReferenceScores]:
        """The suite's own reference tables (``Suite.reference_scores``) and those plugins add
        (``benchgen_reference_scores``), by name."""
        out: dict[str, ReferenceScores] = {}
        tables = [
            *suite.reference_scores(),
            *self.contributions("benchgen_reference_scores", ReferenceScores, suite=suite),
        ]
        known = set(suite.tasks()) if tables else set()  # once: a suite may list thousands of tasks
        for table in tables:
            if table.name in out:
                raise PluginError(
                    f"reference table '{table.name}' of suite '{suite.name}' is defined twice (by the "
                    "suite or by plugins); rename one"
                )
            _check_reference(suite, table, known)
            out[table.name] = table
        return out

    def plugin_versions(self) -> list[dict[str, Any]]:
        """Plugin -> distribution -> version, as recorded in every run's metadata."""
        return [vars(p).copy() for p in self.plugins]


def _check_reference(suite: Suite, table: ReferenceScores, known: set[str] | None = None) -> None:
    """A reference table names the suite's tasks (``known``: ``suite.tasks()``, given when several
    tables are checked) and one of its score views (``PluginError``)."""
    views = ("score", *suite.score_views)
    if table.view not in views:
        raise PluginError(
            f"reference table '{table.name}' of suite '{suite.name}' is in view '{table.view}', which the "
            f"suite does not declare ({', '.join(views)})"
        )
    known = set(suite.tasks()) if known is None else known
    named = set(table.scores) | {t for scores in table.by_checkpoint.values() for t in scores} | set(table.spread)
    named |= set(table.runs)
    unknown = sorted(named - known)
    if unknown:
        raise PluginError(f"reference table '{table.name}' of suite '{suite.name}' names unknown tasks {unknown[:5]}")
    empty = sorted(t for t, runs in table.runs.items() if not len(runs))
    if empty:
        raise PluginError(f"reference table '{table.name}' of suite '{suite.name}' has no runs for tasks {empty[:5]}")


def _shown(value: Any) -> str:
    """A hook's result as a message shows it (short)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


_default: Registry | None = None


def _by_name(contributions: Iterable[list | None], what: str) -> dict[str, Any]:
    """Every plugin's contributions (suites or agent specs) by name; a name twice stops start-up."""
    out: dict[str, Any] = {}
    for items in contributions:
        for item in items or []:
            if item.name in out:
                raise PluginError(f"two plugins define {what} '{item.name}'; uninstall one of them")
            out[item.name] = item
    return out


def get_registry() -> Registry:
    """The process-wide registry (built on first use)."""
    global _default
    if _default is None:
        _default = Registry()
    return _default


def reset_registry() -> None:
    """Forget the process-wide registry (tests)."""
    global _default
    _default = None


def inventory(strict: bool = False) -> tuple[Registry | None, list[PluginInfo], str | None]:
    """For ``benchgen plugins``: load non-strictly so failures are listed, not raised."""
    try:
        reg = Registry(strict=False)
    except UsageError as exc:  # pragma: no cover - non-strict loading does not raise
        return None, [], str(exc)
    return reg, reg.plugins, None
