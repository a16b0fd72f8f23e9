"""Atari SABER suite (ale-py): the SABER protocol and world-record normalization.

Modules: ``env`` (the vector env and the protocol constants), ``protocols`` (the published
protocols as named presets), ``flavors`` and ``flavor_backend`` (game modes and difficulties),
``suite`` (the ``Suite``), ``scoring`` (baselines and normalization), ``tables`` (the data CSVs),
``hooks`` (the plugin's hook implementation, re-exported here because the entry point names this
package). The split files are in ``splits/``, the score tables in ``data/``.

From a training loop of your own (``benchgen.api``), a game as the protocol defines it:

>>> from benchgen import api
>>> env = api.make_env("atari_saber", "pong", num_envs=2, seed=0)
>>> env.single_action_space
Discrete(18)
>>> obs, _ = env.reset(seed=0)
>>> obs.shape
(2, 4, 84, 84)
>>> env.close()

and as a plain Gymnasium environment:

>>> import gymnasium
>>> ids = api.register_gymnasium_ids(["atari_saber"])
>>> single = gymnasium.make(api.gymnasium_id("atari_saber", "pong"))
>>> single.reset(seed=0)[0].shape
(4, 84, 84)
>>> single.close()
"""

from benchgen_atari_saber.hooks import benchgen_suites  # noqa: F401  (pluggy finds hooks on this module)
