"""A unit's remote environments (``ctx.remote_envs()``) on a named suite without a run directory,
for driving data-parallel workers in tests: worker w plays ``tasks[w % T]``."""

from __future__ import annotations

from benchgen.agent import AgentNeeds
from benchgen.remote import EpisodeCollector, RemoteEnvFactory
from benchgen_agents.rainbow.agent import RainbowAgent
from benchgen_agents.rainbow.data_parallel import RainbowWorkerProgram


class SuiteFactory(RemoteEnvFactory):
    """A unit's remote environments without a run directory: worker w plays ``tasks[w % T]``."""

    def __init__(self, key, suite_spec: str, tasks: list[str]):
        super().__init__(key)
        self.suite_spec, self.tasks = suite_spec, tasks

    def suite(self):
        if self.suite_spec == "chain":
            from tests.fixture_plugins.vector_suite import SUITE

            return SUITE
        if self.suite_spec == "airstriker":
            from tests.sonic.airstriker_plugin import benchgen_suites

            return benchgen_suites()[0]
        from benchgen.registry import get_registry

        return get_registry().suite(self.suite_spec)

    def suite_env(self, num_envs: int, seed: int, worker: int = 0, workers: int = 1):
        task = self.tasks[worker % len(self.tasks)]
        return self.suite().make_env([task] * num_envs, seed=seed)

    def agent_wrappers(self, env):
        return self.suite().agent_wrappers(env, AgentNeeds())

    def __call__(self, num_envs: int, seed: int, worker: int = 0, workers: int = 1):
        collector = EpisodeCollector(self.suite_env(num_envs, seed, worker, workers), self.key, worker)
        return self.agent_wrappers(collector), collector


class QuietRainbowProgram(RainbowWorkerProgram):
    """Algorithm 2's worker with NoisyNet noise off (the means only), so that a test can replay a
    worker's update in one process: noise samples are per worker and not in the batch."""

    def __init__(self, config, environment):
        super().__init__(config, environment, RainbowAgent)

    def setup(self, env, rank, world_size, averager, state, seed):
        super().setup(env, rank, world_size, averager, state, seed)
        self.agent.online.set_noise(False)
        self.agent.target.set_noise(False)
