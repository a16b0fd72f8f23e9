"""benchgen's built-in commands: a built-in plugin, like pytest's.

Each module here adds its commands through the ``benchgen_add_commands`` hook, the hook a
third-party plugin implements for its own (``benchgen SUITE import-roms``): ``benchgen.cli``
gives every module of :data:`BUILTIN` the sub-parsers, then the installed plugins. One module per
family of commands:

- :mod:`~benchgen.commands.info`: ``list``, ``settings``, ``protocols``, ``plugins``;
- :mod:`~benchgen.commands.run`: ``run``, ``evaluate``, ``resume`` (over :mod:`benchgen.run.lifecycle`);
- :mod:`~benchgen.commands.results`: ``video``, ``score``, ``export``, ``report``, ``compare``;
- :mod:`~benchgen.commands.scaffold`: ``new-plugin``, ``new-agent``;
- :mod:`~benchgen.commands.references`: ``references``, ``selfcheck``.

:mod:`~benchgen.commands.arguments` holds what their arguments share. A command's heavy imports
(torch, the run engine, matplotlib) wait inside the function that runs it: building the parser
imports none of them.
"""

from __future__ import annotations

import pluggy

from benchgen import hookspecs
from benchgen.commands import info, references, results, run, scaffold

#: the built-in command modules, in the order ``benchgen --help`` lists their commands
BUILTIN = (info, run, results, scaffold, references)


def builtin_plugins() -> pluggy.PluginManager:
    """A plugin manager holding the built-in commands (no installed plugin: they work with a
    broken one installed)."""
    pm = pluggy.PluginManager("benchgen")
    pm.add_hookspecs(hookspecs)
    for module in reversed(BUILTIN):  # pluggy calls the last registered first
        pm.register(module, name=f"benchgen.commands.{module.__name__.rsplit('.', 1)[-1]}")
    return pm
