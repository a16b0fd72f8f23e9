"""Parts shared by the value-based agents (``dqn``, ``rainbow``, ``rainbow_iqn``).

* ``layers.py``: the Nature torso (or an MLP), noisy linear layers, plain or dueling streams;
* ``replay.py``: the frame-once n-step prioritized replay (uniform with priority exponent 0);
* one module per head and its loss, each a :class:`~.head.Head`: ``expected_value.py`` (Q
  values, Huber TD loss), ``categorical.py`` (C51 projection, cross-entropy),
  ``implicit_quantiles.py`` (IQN, quantile Huber loss);
* ``agent.py``: the learner loop all three share (warm-up, exploration, updates, target copies,
  checkpoints); ``config.py``: the settings they share.

An agent module mixes one head into the learner and chooses its optimizer and exploration;
nothing here branches on which agent it serves.
"""
