"""Data-parallel training on Ray: workers that each own their environments and their data
(rollouts or replay) and average their gradients at every optimization step with
``torch.distributed`` (Nichol et al. 2018's joint PPO: 188 workers; joint Rainbow, Algorithm 2:
32 workers). :mod:`benchgen_agents.data_parallel.engine` holds the engine (the worker group,
its process group, restarts); an algorithm contributes a :class:`~benchgen_agents.data_parallel.engine.WorkerProgram`.
"""
