"""Ape-X Rainbow-IQN: environment steps per second with 1 vs N actors, in the same run.

One process starts one local Ray instance (loopback only) and alternates rounds of the Ape-X
learner (``benchgen_agents.rainbow_iqn.apex.ApexLearner``) with 1 actor and with N actors on a
real Atari game of the ``atari_saber`` suite (the suite's env and agent wrappers, as
``ctx.remote_envs()`` builds them in a run). Each actor acts with its network copy, computes
the initial priorities of its transitions with the learner's loss, and ships them with the
chunk; the learner inserts them into its prioritized replay and records the episodes.

Rate = agent steps (transitions; 1 step = 4 frames) that reached the learner per second of wall
time, measured over ``--seconds`` after a warm-up (actor start-up and the first chunks are not
counted). Rounds alternate to share the machine's noise; medians are compared.

By default the learner only inserts (learning starts after the measured window), so the rate is
the acting side's: the point of Ape-X is that it grows with the actors while one learner
consumes the data. ``--learn`` also runs asynchronous learner updates (the learner then takes
CPU from the actors on a small machine).

    python benchmarks/bench_apex_actors.py --game pong --actors 2 --rounds 2 --seconds 40
    python benchmarks/bench_apex_actors.py --preset small   # a small network: closer to env-bound
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from benchgen.remote import EpisodeInbox, RemoteEnvFactory

REPO = Path(__file__).resolve().parents[1]

PRESETS = {
    # the paper's network and loss (SABER/IQN: hidden 512, N = N' = 64, K = 32)
    "paper": {},
    # a small IQN head: acting and priorities cost about as much as the emulator
    "small": dict(
        hidden_size=64, cosine_embedding_dim=16, num_tau_samples=8, num_tau_prime_samples=8, num_quantile_samples=8
    ),
}


class AtariActorEnvs(RemoteEnvFactory):
    """What ``ctx.remote_envs()`` returns in a run, without a run directory: the game's suite env
    under the episode collector under the suite's agent wrappers."""

    def __init__(self, key, game: str):
        super().__init__(key)
        self.game = game

    def _suite(self):
        from benchgen.registry import get_registry

        return get_registry().suite("atari_saber")

    def suite_env(self, num_envs: int, seed: int, worker: int = 0, workers: int = 1):
        return self._suite().make_env([self.game] * num_envs, seed=seed, mode="train")

    def agent_wrappers(self, env):
        from benchgen.registry import get_registry

        return self._suite().agent_wrappers(env, get_registry().agent("rainbow_iqn").needs)


def make_context(game: str, warmup: float, seconds: float):
    import ray

    from benchgen.agent import TrainingContext

    class TimedContext(TrainingContext):
        """Budget = wall time: ``finished`` once the measured window is over."""

        budget_steps = 10**12
        seed = 0
        unit_dir = Path(".")

        def __init__(self):
            self.inbox = EpisodeInbox()
            self.frames = 0
            self.arrivals: list[tuple[float, int]] = []  # (time, agent steps so far)
            self.episodes = 0
            self.t0 = None

        @property
        def steps_done(self) -> int:
            return self.frames // 4

        @property
        def finished(self) -> bool:
            return self.t0 is not None and time.perf_counter() > self.t0 + warmup + seconds

        def maybe_checkpoint(self) -> None:
            pass

        def log_scalar(self, tag, value) -> None:
            pass

        def remote_envs(self):
            return AtariActorEnvs(self.inbox.key, game)

        def report_remote_episodes(self, report):
            ends, frames = self.inbox.open(report)
            now = time.perf_counter()
            if self.t0 is None:
                self.t0 = now
            self.frames += frames
            self.episodes += len(ends)
            self.arrivals.append((now, self.steps_done))
            return ends

        def ray(self):
            return ray  # connected by main()

        def rate(self) -> float:
            """Steps per second between the first arrival after the warm-up and the last one."""
            window = [(t, s) for t, s in self.arrivals if t >= self.t0 + warmup]
            if len(window) < 2:
                return float("nan")
            (t_a, s_a), (t_b, s_b) = window[0], window[-1]
            return (s_b - s_a) / (t_b - t_a)

    return TimedContext()


def one_round(args, actors: int) -> tuple[float, dict]:
    from benchgen.registry import get_registry
    from benchgen_agents.rainbow_iqn import RainbowIQNConfig
    from benchgen_agents.rainbow_iqn.apex import ApexLearner

    settings = dict(
        PRESETS[args.preset],
        actors=actors,
        actor_envs=args.actor_envs,
        actor_chunk_steps=args.chunk_steps,
        replay_capacity=args.replay_capacity,
        learning_starts_frames=4 if args.learn else args.replay_capacity * 4,
        synchronized=False,
        device="cpu",
        torch_threads=args.learner_threads,
    )
    config = RainbowIQNConfig(**settings)
    suite, spec = get_registry().suite("atari_saber"), get_registry().agent("rainbow_iqn")
    env = suite.agent_wrappers(suite.make_env([args.game], seed=0), spec.needs)
    agent = spec.factory(config, spec.environment(suite, env))
    agent._build(0)
    agent.counters["seeded"] = True
    agent.counters["updates"] = 1  # an agent that has learned: actors act with their networks, no random warm-up
    ctx = make_context(args.game, args.warmup, args.seconds)
    learner = ApexLearner(agent, env, ctx)
    try:
        learner.start()
        t0 = time.perf_counter()
        learner.run()
        learner.elapsed = time.perf_counter() - t0
    finally:
        learner.stop()
        env.close()
    s = learner.stats
    acting = s["act_seconds"] + s["priority_seconds"]
    info = {
        "updates": agent.counters["updates"],
        "episodes": ctx.episodes,
        "learner_busy": (s["insert_seconds"] + s["update_seconds"]) / max(learner.elapsed, 1e-9),
        "priority_share": s["priority_seconds"] / acting if acting else float("nan"),
        "steps_per_actor": s["steps"],
    }
    return ctx.rate(), info


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="pong")
    parser.add_argument("--actors", type=int, default=2, help="N, compared with 1")
    parser.add_argument("--actor-envs", type=int, default=1)
    parser.add_argument("--chunk-steps", type=int, default=50)
    parser.add_argument("--preset", choices=sorted(PRESETS), default="paper")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--warmup", type=float, default=10.0, help="seconds after the first chunk not measured")
    parser.add_argument("--seconds", type=float, default=40.0, help="measured seconds per round")
    parser.add_argument("--replay-capacity", type=int, default=100_000)
    parser.add_argument("--learn", action="store_true", help="also run asynchronous learner updates")
    parser.add_argument("--learner-threads", type=int, default=1)
    args = parser.parse_args()

    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    import ray

    from benchgen.run.execution.ray_connect import connect

    connect(None, 0, 0)  # a local instance on 127.0.0.1
    print(
        f"{args.game}, preset={args.preset}, actor_envs={args.actor_envs}, chunk={args.chunk_steps}, "
        f"learner {'updating' if args.learn else 'inserting only'}; {os.cpu_count()} cores, "
        f"Ray CPUs {ray.cluster_resources().get('CPU', 0):g}",
        flush=True,
    )
    rates: dict[int, list[float]] = {1: [], args.actors: []}
    try:
        for r in range(args.rounds):
            for n in (1, args.actors):
                rate, info = one_round(args, n)
                rates[n].append(rate)
                print(
                    f"round {r + 1}: {n} actor(s): {rate:8.1f} env steps/s ({4 * rate:8.1f} frames/s); "
                    f"per actor {info['steps_per_actor']}, episodes {info['episodes']}, updates {info['updates']}, "
                    f"priorities {100 * info['priority_share']:.0f}% of actor time, "
                    f"learner busy {100 * info['learner_busy']:.0f}%; load average {os.getloadavg()[0]:.2f}",
                    flush=True,
                )
    finally:
        ray.shutdown()
    one, many = statistics.median(rates[1]), statistics.median(rates[args.actors])
    print(
        f"median: 1 actor {one:.1f} steps/s, {args.actors} actors {many:.1f} steps/s; "
        f"ratio {args.actors} vs 1: {many / one:.2f}x"
    )
    print(
        "(the load average counts this benchmark's own processes too: about 1 + actors while it runs; "
        "more means other programs shared the cores)"
    )


if __name__ == "__main__":
    sys.exit(main())
