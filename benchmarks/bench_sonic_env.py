"""Throughput of the Sonic suite's vector env against raw stable-retro, on the free Airstriker ROM.

For N = 1 .. (CPU cores) this measures, in the same run on the same machine:

* raw: one stable-retro ``RetroEnv`` in this process, stepped frame by frame with
  ``env.step(buttons)`` (how stable-retro is used directly; it renders every frame), each
  action held for 4 frames. stable-retro allows one emulator per process, so N raw emulators
  can only run one after another: their ideal parallel throughput is N x this rate;
* core: the same emulator driven at the core level (``em.step()``; screen read every 4th frame),
  the cheapest possible loop, for reference;
* suite: the suite's vector env as ``SonicSuite.make_env`` builds it for a run (N worker
  processes, one emulator each, pinned to CPUs of their own; screens handed over in shared
  memory), playing the Airstriker test level under the full protocol (sticky frame skip, reward,
  episode ends, autoreset), driven with the same random buttons (as button-mask actions).

It prints frames/s, the ratio suite / (N x raw) (parallel efficiency; target >= 0.9), the CPU
time each contender spends per emulated frame (main process plus workers for the suite; this
does not depend on what else runs on the machine) and the resident memory of each worker.
Raw and suite measurements alternate; the median of ``--repeats`` rounds is reported.

On a machine shared with other login sessions, Linux's autogroup scheduler gives each session an
equal share of the CPUs however many processes it runs: the wall-clock ratio for N > 1 then
measures that share, not the suite. The CPU time per frame does not depend on it.

    python benchmarks/bench_sonic_env.py [--seconds 3] [--repeats 3] [--max-workers N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from benchgen_sonic.env import BUTTON_MASKS, mask_to_buttons
from benchgen_sonic.protocol import SonicProtocol
from benchgen_sonic.suite import SonicSuite
from benchgen_sonic.testing import AIRSTRIKER, AIRSTRIKER_INFO, airstriker_level
from benchgen_sonic.vector import SonicVectorEnv

FRAME_SKIP = SonicProtocol().frame_skip


def rss_mib(pid: int) -> float:
    """Resident set size of process ``pid`` in MiB (Linux /proc)."""
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds(pid: int | None = None) -> float:
    """User + system CPU time of process ``pid`` (default: this one), in seconds."""
    if pid is None:
        t = os.times()
        return t.user + t.system
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def random_actions(rng: np.random.Generator, n: int, steps: int) -> np.ndarray:
    """``steps`` x ``n`` random button masks (the suite's actions; the same stream for all)."""
    return rng.integers(0, BUTTON_MASKS, size=(steps, n))


def measure_raw(seconds: float, seed: int) -> tuple[float, float, float]:
    """One raw stable-retro emulator: frames/s of RetroEnv.step per frame, its CPU microseconds
    per frame, and frames/s of the core loop."""
    import stable_retro

    env = stable_retro.make(AIRSTRIKER, render_mode=None, info=str(AIRSTRIKER_INFO))
    try:
        actions = mask_to_buttons(random_actions(np.random.default_rng(seed), 1, 100_000))
        env.reset()
        frames, start, cpu = 0, time.perf_counter(), cpu_seconds()
        while time.perf_counter() - start < seconds:
            buttons = actions[(frames // FRAME_SKIP) % len(actions), 0]
            for _ in range(FRAME_SKIP):
                _, _, terminated, truncated, _ = env.step(buttons)
                frames += 1
                if terminated or truncated:
                    env.reset()
        retro_fps = frames / (time.perf_counter() - start)
        retro_cpu = (cpu_seconds() - cpu) / frames * 1e6

        env.reset()
        em = env.em
        frames, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            buttons = env.action_to_array(actions[(frames // FRAME_SKIP) % len(actions), 0])[0]
            for _ in range(FRAME_SKIP):
                em.set_button_mask(buttons, 0)
                em.step()
            env.get_screen()
            frames += FRAME_SKIP
        core_fps = frames / (time.perf_counter() - start)
        del em
    finally:
        env.close()
    return retro_fps, retro_cpu, core_fps


def measure_suite(env: SonicVectorEnv, seconds: float, seed: int) -> tuple[float, float]:
    """Frames/s (all workers together) of the suite's vector env, and CPU microseconds per frame
    (this process and the workers)."""
    n = env.num_envs
    actions = random_actions(np.random.default_rng(seed), n, 20_000)
    pids = [None, *env.worker_pids]
    cpu = sum(cpu_seconds(pid) for pid in pids)
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        env.step(actions[steps % len(actions)])
        env.pop_episode_ends()
        steps += 1
    frames = steps * n * FRAME_SKIP
    fps = frames / (time.perf_counter() - start)
    return fps, (sum(cpu_seconds(pid) for pid in pids) - cpu) / frames * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per measurement")
    parser.add_argument("--repeats", type=int, default=3, help="alternating rounds; the median is reported")
    parser.add_argument("--max-workers", type=int, default=os.cpu_count() or 1, help="largest N")
    args = parser.parse_args(argv)

    print(
        f"Airstriker test level, {os.cpu_count()} CPU cores, frame skip {FRAME_SKIP}, "
        f"{args.repeats} x {args.seconds:.0f} s per contender; load average {os.getloadavg()[0]:.2f}"
    )
    print(
        f"{'N':>2} {'raw x N':>9} {'core x N':>9} {'suite':>9} {'suite/(N raw)':>13} {'suite/(N core)':>14}"
        f" {'CPU us/frame raw':>16} {'suite':>6}  worker RSS MiB"
    )
    level = airstriker_level(10**6)
    sonic = SonicSuite(levels=[level])
    for n in range(1, args.max_workers + 1):
        # N levels that are never completed, so episodes end by lives and resets are included
        env = sonic.make_env([level.task] * n, seed=0)  # built exactly as a run builds it
        env.reset()
        raw, raw_cpu, core, suite, suite_cpu = [], [], [], [], []
        try:
            measure_suite(env, 0.5, seed=99)  # warm up the workers
            for r in range(args.repeats):
                for values, value in zip((raw, raw_cpu, core), measure_raw(args.seconds, seed=r)):
                    values.append(value)
                for values, value in zip((suite, suite_cpu), measure_suite(env, args.seconds, seed=r)):
                    values.append(value)
            rss = [rss_mib(pid) for pid in env.worker_pids]
            pinned = env.pinned_cpus
        finally:
            env.close()
        raw_fps, raw_us, core_fps, suite_fps, suite_us = map(statistics.median, (raw, raw_cpu, core, suite, suite_cpu))
        print(
            f"{n:>2} {n * raw_fps:>9.0f} {n * core_fps:>9.0f} {suite_fps:>9.0f} "
            f"{suite_fps / (n * raw_fps):>13.2f} {suite_fps / (n * core_fps):>14.2f} "
            f"{raw_us:>16.0f} {suite_us:>6.0f}  "
            + ", ".join(f"{m:.0f}" for m in rss)
            + (f"  (workers pinned to CPUs {pinned})" if pinned else "")
        )
    print(
        f"main process RSS {rss_mib(os.getpid()):.0f} MiB; load average {os.getloadavg()[0]:.2f} "
        "(other processes on the machine lower every number and the ratios)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
