"""Joint PPO's data-parallel scaling on this machine: agent steps per second with 1 and 2 workers.

Each worker (a Ray actor, one CPU, one torch thread) plays its own Atari game (``atari_saber``'s
SABER protocol: Pong for rank 0, Breakout for rank 1) with one sub-environment, collects a
rollout of ``--n-steps`` steps and takes ``--epochs`` PPO epochs with one minibatch of the whole
rollout (the paper's horizon = minibatch), averaging gradients over the workers with one flat
all-reduce per optimizer step (gloo). The per-worker work is the same in both settings, so ideal
scaling doubles the steps per second (weak scaling, as adding workers does in the paper).

Printed: steps per second with 1 and 2 workers and their ratio (ideal 2.0); the communication
share of a round (seconds in all-reduce calls, waiting for the slower worker included, over the
round's seconds) and of an optimizer step; the measured figures a 188-worker run is sized from:
gradient bytes per step, all-reduce time per step, a worker's peak memory and its rollout
buffer, extrapolated to the paper's rollout of 8192 steps.

    python benchmarks/bench_data_parallel_ppo.py --n-steps 256 --rounds 3
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from benchgen.agent import AgentEnvironment, AgentNeeds
from benchgen.remote import EpisodeCollector, EpisodeInbox, RemoteEnvFactory

GAMES = ("pong", "breakout")
#: the paper's per-worker rollout (Nichol et al. 2018, PPO hyperparameters: horizon 8192)
PAPER_N_STEPS = 8192
PAPER_WORKERS = 188


class AtariFactory(RemoteEnvFactory):
    """Rank r's environment: one sub-environment of ``GAMES[r]`` under the suite's agent wrappers."""

    def _suite(self):
        from benchgen.registry import get_registry

        return get_registry().suite("atari_saber")

    def suite_env(self, num_envs, seed, worker=0, workers=1):
        return self._suite().make_env([GAMES[worker % len(GAMES)]] * num_envs, seed=seed)

    def agent_wrappers(self, env):
        return self._suite().agent_wrappers(env, AgentNeeds())

    def __call__(self, num_envs, seed, worker=0, workers=1):
        collector = EpisodeCollector(self.suite_env(num_envs, seed, worker, workers), self.key, worker)
        return self.agent_wrappers(collector), collector


def measure(ray, workers: int, n_steps: int, epochs: int, rounds: int) -> dict[str, float]:
    from benchgen_agents.data_parallel.engine import DataParallelGroup, RoundPlan
    from benchgen_agents.ppo.agent import PPOAgent
    from benchgen_agents.ppo.config import PPOConfig
    from benchgen_agents.ppo.data_parallel import PPOWorkerProgram, cpu_copy

    factory = AtariFactory(EpisodeInbox().key)
    env, _ = factory(1, seed=0)
    environment = AgentEnvironment(env.single_observation_space, env.single_action_space, 4)
    env.close()
    config = PPOConfig(
        policy="CnnPolicy", n_steps=n_steps, batch_size=n_steps, n_epochs=epochs, device="cpu", workers=workers
    )
    policy = PPOAgent(config, environment)._new_policy()
    state = {
        "policy": cpu_copy(policy.state_dict()),
        "optimizer": cpu_copy(policy.optimizer.state_dict()),
        "n_updates": 0,
    }
    group = DataParallelGroup(
        ray,
        factory,
        PPOWorkerProgram(config, environment, PPOAgent),
        workers=workers,
        envs_per_worker=1,
        unit_seed=0,
        worker_cpus=1,
    )
    group.start(state, steps_done=0)
    try:
        group.play_round(RoundPlan(n_steps, True, 0, 10**9))  # warm-up: first forward/backward passes
        walls, shares, comms = [], [], []
        for _ in range(rounds):
            start = time.perf_counter()
            result = group.play_round(RoundPlan(n_steps, True, 0, 10**9))
            walls.append(time.perf_counter() - start)
            shares.append(np.mean([s["communication_seconds"] / s["round_seconds"] for s in result.stats]))
            comms.append(np.mean([s["communication_seconds"] for s in result.stats]))
        memory = max(ray.get([a.peak_memory_bytes.remote() for a in group.actors]))
    finally:
        group.stop()
    params = sum(p.numel() for p in policy.parameters())
    obs_bytes = int(np.prod(environment.observation_space.shape))  # the workers keep uint8 frames
    return {
        "steps_per_second": workers * n_steps / statistics.median(walls),
        "communication_share": float(statistics.median(shares)),
        "allreduce_seconds_per_step": float(statistics.median(comms)) / epochs,
        "gradient_bytes": params * 4,
        "peak_memory_bytes": memory,
        "rollout_buffer_bytes": n_steps * obs_bytes,
        "obs_bytes": obs_bytes,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-steps", type=int, default=256, help="rollout steps per worker (one minibatch)")
    parser.add_argument("--epochs", type=int, default=4, help="PPO epochs per rollout (paper: 4)")
    parser.add_argument("--rounds", type=int, default=3, help="measured rounds per setting (after one warm-up)")
    args = parser.parse_args()

    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _node_ip_address="127.0.0.1")
    try:
        one = measure(ray, 1, args.n_steps, args.epochs, args.rounds)
        two = measure(ray, 2, args.n_steps, args.epochs, args.rounds)
    finally:
        ray.shutdown()
    mb = 1024**2
    print(f"joint PPO, {args.n_steps} steps x {args.epochs} epochs per round, Atari CNN, 1 CPU per worker")
    print(f"  1 worker : {one['steps_per_second']:8.1f} agent steps/s")
    print(f"  2 workers: {two['steps_per_second']:8.1f} agent steps/s")
    print(
        f"  scaling ratio (2 workers / 1 worker): {two['steps_per_second'] / one['steps_per_second']:.2f} (ideal 2.00)"
    )
    print(f"  communication share of a round with 2 workers: {two['communication_share']:.1%}")
    step = two["allreduce_seconds_per_step"]
    print(
        f"  all-reduce per optimizer step: {step * 1000:.1f} ms for {two['gradient_bytes'] / mb:.1f} MiB of gradients"
    )
    # A ring all-reduce sends and receives 2 (W - 1) / W times the gradient bytes per worker.
    ring = 2 * (PAPER_WORKERS - 1) / PAPER_WORKERS * two["gradient_bytes"]
    rollout = PAPER_N_STEPS * two["obs_bytes"]
    worker = two["peak_memory_bytes"] - two["rollout_buffer_bytes"] + rollout
    print(f"sizing {PAPER_WORKERS} workers of {PAPER_N_STEPS} steps (from the figures above):")
    print(f"  per worker: about {worker / mb:,.0f} MiB resident ({rollout / mb:,.0f} MiB of it the uint8 rollout)")
    print(f"  per optimizer step: {ring / mb:.1f} MiB sent and received per worker (ring all-reduce)")
    print(f"  in all: about {PAPER_WORKERS * worker / 1024**3:,.0f} GiB of memory, {PAPER_WORKERS} CPUs")


if __name__ == "__main__":
    main()
