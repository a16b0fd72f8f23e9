"""Every hook a benchgen plugin may implement.

Plugins are discovered through the entry-point group ``benchgen``. A plugin module (or object)
implements any of the hooks below with ``@benchgen.hookimpl``. First-party suites and agents use
exactly these hooks, through exactly that entry-point group: core never names a suite or agent.

The plugin author guide (``docs/plugin_authors.md``) is generated from these docstrings by
``python -m benchgen.docs``; edit the docstrings, not the guide.
"""

from __future__ import annotations

import pluggy

hookspec = pluggy.HookspecMarker("benchgen")


@hookspec
def benchgen_suites():
    """Contribute benchmark suites.

    Returns a list of :class:`benchgen.suite.Suite` instances (may be empty). Each suite names
    its tasks, its protocol parameters (the values that make two runs comparable), its budget
    unit and defaults, and makes the environments (see ``Suite.make_env``). Suite names must be
    unique across all installed plugins; a clash stops start-up.
    """


@hookspec
def benchgen_splits(suite):
    """Add named train/test splits to ``suite`` (a :class:`benchgen.suite.Suite`), any plugin's.

    A suite's own splits are not given here: ``Suite.splits`` reads them from the suite's
    ``splits/`` folder. This hook is for a plugin adding splits to a suite, e.g. another
    plugin's. Returns a list of :class:`benchgen.suite.Split` (an empty list for suites it adds
    nothing to), usually YAML files read with ``benchgen.suite.load_split_yaml``. Every task a
    split names must be one of the suite's tasks; a split name given twice within a suite (by
    the suite or by plugins) stops start-up.
    """


@hookspec(firstresult=True)
def benchgen_scorer(suite):
    """Return a :class:`benchgen.scoring.Scorer` for ``suite`` if it has none of its own, else None.

    The scorer turns raw per-task scores into normalized ones and aggregates them. A suite's
    own scorer (``Suite.scorer``, from its random scores and reference tables) comes first and
    this hook is not asked; otherwise the first plugin that returns a scorer wins, and a suite
    without one is scored raw (mean only).
    """


@hookspec
def benchgen_agents():
    """Contribute agents.

    Returns a list of :class:`benchgen.agent.AgentSpec`. An agent sees only the vector env the
    suite builds (plus the suite's agent-side wrappers) and a budget; it must run on any suite
    whose spaces it supports, and say clearly (``UsageError``) when it does not.
    """


@hookspec
def benchgen_add_commands(subparsers):
    """Add plugin-specific CLI sub-commands.

    ``subparsers`` is the ``argparse`` sub-parser collection of the ``benchgen`` command. Add a
    parser and set its default ``func`` to a callable taking the parsed ``args`` and returning an
    exit code, e.g. ``benchgen SUITE import-roms DIR`` for a suite whose games the user supplies.
    """


@hookspec
def benchgen_reference_scores(suite):
    """Add reference score tables to ``suite`` (a :class:`benchgen.suite.Suite`), any plugin's.

    A suite's own tables come from ``Suite.reference_scores``; this hook is for a plugin adding
    tables to a suite, e.g. published scores of its agent on another plugin's suite. Returns a
    list of :class:`benchgen.scoring.ReferenceScores` (per-task scores of a named agent or human
    baseline, possibly at several training checkpoints; an empty list for suites it adds nothing
    to), shown next to a run's numbers and usable as a reference agent (SABER eq. 2). A table
    name given twice within a suite stops start-up.
    """
