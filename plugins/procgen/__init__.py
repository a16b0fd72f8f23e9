"""The ``procgen`` suite: Procgen's 16 procedurally generated games (Cobbe et al. 2020, "Leveraging
Procedural Generation to Benchmark Reinforcement Learning"), trained on a fixed set of levels and
tested on levels never trained on.

``benchgen run procgen ppo --tasks coinrun`` trains PPO with the paper's IMPALA CNN and settings
(``tuned/ppo.yaml``) on coinrun's 200 easy training levels and scores it on test levels at every
evaluation round. Modules: ``games`` (the package's games, modes and episode caps), ``protocols``
(the paper's ``easy200`` and ``hard500``), ``env`` (``ProcgenGym3Env`` behind the vector
interface, levels kept apart), ``scoring`` (normalization constants and openai's released runs),
``suite`` and ``hooks``. Importing it is cheap: the ``procgen`` package is imported only when an
environment is made, and its absence is a one-line error naming the install command.
"""

from .hooks import benchgen_suites  # noqa: F401  (pluggy finds hooks on this module)
