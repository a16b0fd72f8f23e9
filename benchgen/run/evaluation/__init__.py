"""Evaluating a unit's agent: the protocol's evaluation rounds played at their checkpoints
(:mod:`.rounds`), the best policy's re-evaluation (:mod:`.best_policy`), and videos of a run's
agents (:mod:`.video`)."""
