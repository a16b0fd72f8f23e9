"""Training-loop cost of dqn, rainbow and rainbow_iqn against the sum of its parts, on real Atari.

What is compared, in the same run, per agent: the time per agent step of the agent's own
training loop (``ValueBasedAgent.learn``) against the sum of its parts measured alone::

    parts per step = env step + act + (update time) x (updates in the window / steps in it)

* env step: the same SABER env (``atari_saber`` suite, one sub-environment, ``--game``; the
  suite's agent wrappers, none on Atari) stepped with uniformly random actions;
* act: one ``explore_actions`` call on a real observation (the acting forward pass at batch 1
  with the network's current noise, plus the agent's epsilon-greedy choice for dqn). It is
  counted as a part, not as overhead: it is the network's inference, which any loop must run;
* update: ``update(beta)`` on the replay the loop filled (sampling, the learner step, the
  priority update), timed one after another (with the target copy after each for an agent that
  copies it at every update, DrQ(epsilon), as its loop does); the loop runs one every ``update_period_steps`` (4;
  1 for the Atari 100K variants ``rainbow:der`` and ``dqn:drq_eps``) agent steps, and the parts
  charge the updates the loop actually ran in the window.

What the parts leave out, and the ratio charges to the pipeline: writing each transition into
the replay, the noisy nets' noise draws, the Python loop and its bookkeeping, target-network
copies, and the cache and memory interference between env, acting and learning. To tell
these apart, env.step, explore_actions and update are also timed as they run inside the loop
(thin timing wrappers): the last lines show each against its time alone, and the rest of the
loop (replay writes, noise draws, Python).

Setup: paper defaults (a variant's, for ``agent:variant``), float32, CPU, ``--threads`` torch
threads (0: the agents' default, every core but the emulator's); only the replay's size and
the learning start (``--learning-starts`` agent steps, random actions until then) are set. A
warm-up ``learn`` runs past the learning start and a few updates; then ``--rounds`` rounds, each:
env alone, act alone, updates alone, then the loop (``learn`` continued for
``update_period_steps x --updates`` more steps; its window runs from its first step's end to its
last, so the env reset at the start of each ``learn`` call is not in it). Totals over the
rounds give the ratio; the median of the rounds' own ratios is printed beside it.

Target: loop time / parts <= 1.10 per agent (the pipeline costs at most 10% over its parts).

Usage (about two minutes on 2 cores):
    python benchmarks/bench_value_e2e.py [--agents dqn,rainbow,rainbow_iqn] [--game breakout]
        [--rounds 3] [--updates N] [--learning-starts 500] [--threads 0] [--clock wall|cpu]
``--updates`` (updates per round in the loop and alone) defaults per agent: dqn 120, rainbow 60,
rainbow_iqn 8. On a machine other processes keep busy, ``--threads 1 --clock cpu`` times every
part and the loop with the process's CPU time (the emulator's thread included) instead of
elapsed time: immune to the core being taken away; one torch thread only, since idle OpenMP
threads spin (libgomp's default, the header shows ``OMP_WAIT_POLICY``; spinning workers also
take the emulator thread's core, so try ``OMP_WAIT_POLICY=PASSIVE`` with several threads).
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

import numpy as np
from value_bench_common import (
    AGENTS,
    add_clock_argument,
    busy_warning,
    clock,
    load_average,
    make_value_agent,
    omp_wait_policy,
    parse_agents,
    resolve_threads,
)

from benchgen.agent import TrainingContext

DEFAULT_UPDATES = {"dqn": 120, "rainbow": 60, "rainbow_iqn": 8, "rainbow:der": 200, "dqn:drq_eps": 80}
TARGET = 1.10
BETA = 0.4


class Stopwatch:
    """Seconds spent inside chosen methods (``wrap``: an instance attribute that times the call),
    so that the loop's time can be split into its parts as they ran inside it."""

    def __init__(self, timer):
        self.timer = timer
        self.totals = {"env": 0.0, "act": 0.0, "update": 0.0}

    def wrap(self, obj, method: str, key: str) -> None:
        inner = getattr(obj, method)

        def timed(*args, **kwargs):
            start = self.timer()
            try:
                return inner(*args, **kwargs)
            finally:
                self.totals[key] += self.timer() - start

        setattr(obj, method, timed)


class TimedContext(TrainingContext):
    """The runner's side of ``learn``: counts agent steps, and records the time, the agent's
    update count and the stopwatch's totals after each step (``maybe_checkpoint`` is called
    once per vector step)."""

    def __init__(self, env, agent, stopwatch: Stopwatch, seed: int = 0):
        self.env, self.agent, self.stopwatch, self.seed, self.unit_dir = env, agent, stopwatch, seed, Path(".")
        self.budget_steps = 0
        self.steps = 0
        self.marks: list[tuple[float, int, int, dict]] = []

    @property
    def steps_done(self) -> int:
        return self.steps

    def maybe_checkpoint(self) -> None:
        self.steps += self.env.num_envs
        watch = self.stopwatch
        self.marks.append((watch.timer(), self.steps, self.agent.counters["updates"], dict(watch.totals)))

    def log_scalar(self, tag: str, value: float) -> None:
        pass

    def run(self, steps: int) -> dict:
        """``learn`` for ``steps`` more agent steps; the seconds, steps and updates of its window
        (from the end of its first step to the end of its last) and the seconds spent inside
        env.step, explore_actions and update in that window."""
        self.budget_steps = self.steps + steps
        self.marks = []
        self.agent.learn(self.env, self)
        (t0, s0, u0, w0), (t1, s1, u1, w1) = self.marks[0], self.marks[-1]
        inside = {key: w1[key] - w0[key] for key in w0}
        return {"seconds": t1 - t0, "steps": s1 - s0, "updates": u1 - u0, **{f"in_{k}": v for k, v in inside.items()}}


def time_env(env, steps: int, rng: np.random.Generator, timer) -> tuple[float, np.ndarray]:
    """Seconds per step of ``env`` alone (uniformly random actions) and its last observations."""
    actions = rng.integers(0, env.single_action_space.n, (steps, env.num_envs))
    obs = None
    start = timer()
    for row in actions:
        obs, *_ = env.step(row)
    return (timer() - start) / steps, obs


def time_act(agent, obs: np.ndarray, calls: int, timer) -> float:
    start = timer()
    for _ in range(calls):
        agent.explore_actions(obs)
    return (timer() - start) / calls


def time_updates(agent, updates: int, timer) -> float:
    """Seconds per update; an agent whose target net is copied after every update (DrQ(epsilon))
    gets that copy here as in its loop, where the next update then takes one pass for both nets."""
    every_update = agent.config.target_update_steps == agent.config.update_period_steps == 1
    start = timer()
    for _ in range(updates):
        agent.update(BETA)
        if every_update:
            agent.copy_target()
    return (timer() - start) / updates


def bench_agent(name: str, args, threads: int, timer) -> dict:
    from benchgen.registry import Registry

    registry = Registry(autoload=True)
    suite, spec = registry.suite("atari_saber"), registry.agent(name.partition(":")[0])
    env = suite.agent_wrappers(suite.make_env([args.game], seed=args.seed), spec.needs)
    updates = args.updates or DEFAULT_UPDATES[name]
    period = make_value_agent(name, threads, 1000, 0).config.update_period_steps  # 4; DER and DrQ: 1
    warm_steps = args.learning_starts + 4 * period
    loop_steps = period * updates
    capacity = warm_steps + args.rounds * (loop_steps + 8) + 1000
    agent = make_value_agent(name, threads, capacity, args.learning_starts, spec.environment(suite, env))
    watch = Stopwatch(timer)
    watch.wrap(env, "step", "env")
    watch.wrap(agent, "explore_actions", "act")
    watch.wrap(agent, "update", "update")
    ctx = TimedContext(env, agent, watch, seed=args.seed)
    rng = np.random.default_rng(args.seed)
    try:
        ctx.run(warm_steps)  # random actions until the learning start, then a few updates (warm-up)
        env_t, act_t, upd_t, loops = [], [], [], []
        for _ in range(args.rounds):
            seconds, obs = time_env(env, max(loop_steps, 400), rng, timer)
            env_t.append(seconds)
            act_t.append(time_act(agent, obs, min(loop_steps, 200), timer))
            upd_t.append(time_updates(agent, updates, timer))
            loops.append(ctx.run(loop_steps))
    finally:
        env.close()
    parts = [
        loop["steps"] * (e + a) + loop["updates"] * u for e, a, u, loop in zip(env_t, act_t, upd_t, loops, strict=True)
    ]
    total = {key: sum(loop[key] for loop in loops) for key in loops[0]}
    return {
        "period": period,
        "env": statistics.fmean(env_t),
        "act": statistics.fmean(act_t),
        "update": statistics.fmean(upd_t),
        "steps": total["steps"],
        "updates": total["updates"],
        "loop_per_step": total["seconds"] / total["steps"],
        "parts_per_step": sum(parts) / total["steps"],
        "ratio": total["seconds"] / sum(parts),
        "round_ratios": [loop["seconds"] / p for loop, p in zip(loops, parts, strict=True)],
        "inside": {key: total[f"in_{key}"] / total["steps"] for key in ("env", "act", "update")},
        "inside_update": total["in_update"] / max(1, total["updates"]),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", default=",".join(AGENTS), help=f"comma-separated: {','.join(AGENTS)}")
    parser.add_argument("--game", default="breakout")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--updates", type=int, default=0, help="updates per round, loop and alone (0: per agent)")
    parser.add_argument("--learning-starts", type=int, default=500, help="agent steps of random actions first")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: the agents' default)")
    parser.add_argument("--seed", type=int, default=0)
    add_clock_argument(parser)
    args = parser.parse_args(argv)
    names = parse_agents(args.agents)
    threads = resolve_threads(args.threads)
    timer = clock(args.clock, threads)
    print(f"start: {load_average()}", flush=True)
    busy_warning(threads, args.clock)
    results = {}
    for name in names:
        results[name] = bench_agent(name, args, threads, timer)
        print(f"  {name} done: {load_average()}", flush=True)
    print(
        f"atari_saber {args.game}, 1 sub-environment, cpu, {threads} threads ({omp_wait_policy()}), {args.clock} clock, float32, {args.rounds} rounds; "
        "times per agent step in ms (update: per update)"
    )
    print(
        f"{'agent':<12} {'steps':>6} {'updates':>7} {'env':>7} {'act':>7} {'update':>8} {'upd/step':>8} "
        f"{'parts':>8} {'loop':>8} {'ratio':>6} {'(median)':>8}  target"
    )
    for name in names:
        r = results[name]
        per_step_updates = r["update"] * r["updates"] / r["steps"]
        verdict = f"<= {TARGET:.2f}: {'met' if r['ratio'] <= TARGET else 'NOT met'}"
        print(
            f"{name:<12} {r['steps']:6d} {r['updates']:7d} {r['env'] * 1e3:7.3f} {r['act'] * 1e3:7.3f} "
            f"{r['update'] * 1e3:8.2f} {per_step_updates * 1e3:8.3f} {r['parts_per_step'] * 1e3:8.3f} "
            f"{r['loop_per_step'] * 1e3:8.3f} {r['ratio']:6.3f} {statistics.median(r['round_ratios']):8.3f}  {verdict}"
        )
    print(
        "parts = env + act + upd/step (update time x updates run / steps); loop = learn's time per step; "
        "ratio = loop / parts over all rounds (median: of the rounds' own ratios)"
    )
    print(
        "inside the loop (ms per agent step; update: ms per update), and the rest (replay writes, noise draws, Python):"
    )
    for name in names:
        r = results[name]
        inside = r["inside"]
        rest = r["loop_per_step"] - sum(inside.values())
        print(
            f"  {name:<12} env {inside['env'] * 1e3:.3f} ({inside['env'] / r['env']:.2f} x alone), "
            f"act {inside['act'] * 1e3:.3f} ({inside['act'] / r['act']:.2f} x alone), "
            f"update {r['inside_update'] * 1e3:.2f} ({r['inside_update'] / r['update']:.2f} x alone), "
            f"rest {rest * 1e3:.3f} ({rest / r['loop_per_step']:.1%} of the loop)"
        )
    for name in names:
        if results[name]["period"] == 1:  # the Atari 100K variants
            print(atari100k_projection(name, results[name]["loop_per_step"]))
    print(f"end: {load_average()}")


#: Atari 100K (Kaiser et al. 2020): agent steps of training per game, games in the table
ATARI100K_STEPS, ATARI100K_GAMES = 100_000, 26
#: issue 26's aim for the 26-game table of one seed on this machine, in hours
ATARI100K_TABLE_AIM_HOURS = 12.0


def atari100k_projection(name: str, loop_per_step: float) -> str:
    """What the measured loop time per step makes of Atari 100K: one game's training (every step
    at the loop's time; the 1,600 warm-up steps without updates are cheaper, so this is a little
    high; the 100 evaluation episodes, no updates, come on top), and the 26-game table one game at
    a time and two at once (``--jobs 2``, each run on its own core, which a 2-core machine has)."""
    game_hours = loop_per_step * ATARI100K_STEPS / 3600
    one, two = game_hours * ATARI100K_GAMES, game_hours * ATARI100K_GAMES / 2
    verdict = "met" if two <= ATARI100K_TABLE_AIM_HOURS else "NOT met"
    return (
        f"  {name}: one Atari 100K game's training {game_hours * 60:.0f} min at this loop time; the 26-game table "
        f"{one:.1f} h one game at a time, {two:.1f} h two at once (--jobs 2, a core each); aim "
        f"<= {ATARI100K_TABLE_AIM_HOURS:.0f} h: {verdict} (evaluation episodes not included)"
    )


if __name__ == "__main__":
    main()
