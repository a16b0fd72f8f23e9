"""The ``gymnasium`` suite: registered Gymnasium environments with discrete actions as benchgen tasks.

``benchgen run gymnasium dqn --tasks CartPole-v1,Acrobot-v1`` trains on two of them. Modules:
``catalog`` (which registered ids are tasks here, probed once per process), ``observations``
(how observations reach the suite env as ``uint8`` and agents as the env's own values), ``env``
(the vector env: gymnasium's ``SyncVectorEnv`` with episodes recorded), ``wrappers`` (the
agent-side decoding), ``suite`` (the ``Suite``: protocol, splits, scoring) and ``hooks`` (the
hook implementation, re-exported here because the entry point names this package). Importing it
is cheap: no environment is made until the suite's tasks are asked for.
"""

from .hooks import benchgen_suites  # noqa: F401  (pluggy finds hooks on this module)
