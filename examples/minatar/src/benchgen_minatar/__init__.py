"""benchgen-minatar: a third-party benchgen plugin, MinAtar's five games (Young and Tian 2019).

Installed, it registers through the entry-point group ``benchgen``::

    [project.entry-points.benchgen]
    minatar = "benchgen_minatar"

and this module implements the one hook it needs (see ``benchgen.hookspecs``). The suite lives in
``suite.py``, the vector env in ``env.py``, the agent-side wrappers in ``wrappers.py``; its split
files in ``splits/`` and its random scores in ``data/``. Importing it is cheap: the minatar
package (which imports matplotlib and seaborn) is loaded only when an environment is made.
"""

from __future__ import annotations

import benchgen
from benchgen_minatar.suite import MinAtarSuite

__version__ = "0.1.0"

SUITE = MinAtarSuite()


@benchgen.hookimpl
def benchgen_suites():
    return [SUITE]
