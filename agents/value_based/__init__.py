"""Parts shared by the value-based agents (``dqn``, ``rainbow``, ``rainbow_iqn``).

* ``layers.py``: the Nature torso (or an MLP), noisy linear layers, plain or dueling streams;
* ``replay.py``: the frame-once n-step prioritized replay (uniform with priority exponent 0);
* ``head.py``: what a head and its loss provide (:class:`~.head.Head`); the heads themselves
  live with their algorithms, each in its folder's ``network.py``: ``dqn`` (Q values, Huber TD
  loss), ``rainbow`` (C51 projection, cross-entropy), ``rainbow_iqn`` (IQN, quantile Huber loss);
* ``agent.py``: the learner loop all three share (warm-up, exploration, updates, target copies,
  checkpoints); ``config.py``: the settings they share.

An agent module mixes one head into the learner and chooses its optimizer and exploration;
nothing here branches on which agent it serves.
"""
