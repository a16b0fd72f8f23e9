"""Frames per second of the Sarsa(lambda) feature agents against the raw emulator's.

For each feature set (Basic, BASS, DISCO, LSH, RAM of Bellemare et al. 2013; Blob-PROST of Liang
et al. 2016) the loop is what the agent does per step: emulate 5 frames (the ALE paper's frame
skip) with ale-py's ``ALEInterface``, read the palette screen (``getScreen() >> 1``) or the RAM,
extract the active features, compute ``Q`` and apply one Sarsa(lambda) update
(:mod:`benchgen_agents.sarsa.learner`). The reference is the same emulator loop reading nothing.
Both run in the same process, in alternating rounds (so that load from elsewhere on the machine
hits both alike), with the same pre-drawn random actions; the script prints each loop's frames/s,
the active features per step, and the ratio agent / raw emulator.

Before timing, Basic, BASS and DISCO get a background from 500 random screens and DISCO its
classes from 500 more (the agent uses 18,000 and 36,000, appendix C; this only changes which
pixels count as foreground).

    python benchmarks/bench_ale_features.py --game seaquest --steps 300 --rounds 3
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from ale_py import ALEInterface, roms

from benchgen_agents.ale_features import FEATURE_SETS, make_extractor
from benchgen_agents.ale_features.common import BackgroundHistogram
from benchgen_agents.sarsa.config import SarsaConfig
from benchgen_agents.sarsa.learner import SparseSarsaLambda

FRAMESKIP = 5  # ALE paper, section 3.1.2


def emulator(game: str, seed: int) -> tuple[ALEInterface, list]:
    ale = ALEInterface()
    ale.setInt("random_seed", seed)
    ale.loadROM(roms.get_rom_path(game))
    return ale, list(ale.getLegalActionSet())


def step(ale: ALEInterface, action) -> None:
    for _ in range(FRAMESKIP):
        ale.act(action)
    if ale.game_over():
        ale.reset_game()


def raw_round(ale, actions, codes) -> float:
    start = time.perf_counter()
    for a in codes:
        step(ale, actions[a])
    return time.perf_counter() - start


def agent_round(ale, actions, codes, extractor, learner, background) -> tuple[float, int]:
    active = 0
    start = time.perf_counter()
    for a in codes:
        step(ale, actions[a])
        x = ale.getRAM() if extractor.inputs == "ram" else ale.getScreen() >> 1
        rows = learner.rows(extractor(x, background))
        q = learner.values(rows)
        learner.update(rows, int(a) % learner.num_actions, 0.01 - float(q[int(a) % learner.num_actions]) * 1e-3)
        active += len(rows)
    return time.perf_counter() - start, active


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="seaquest")
    parser.add_argument("--steps", type=int, default=300, help="agent steps per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--features", default=",".join(FEATURE_SETS))
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    ale, actions = emulator(args.game, 0)

    # a background and DISCO's classes, from random play
    histogram = BackgroundHistogram()
    for _ in range(500):
        step(ale, actions[rng.integers(len(actions))])
        histogram.add(ale.getScreen() >> 1)
    background = histogram.background()

    print(f"{args.game}: {args.steps} agent steps x {FRAMESKIP} frames per round, {args.rounds} rounds")
    print("| features | active per step | agent frames/s | raw emulator frames/s | agent / raw |")
    print("|---|---|---|---|---|")
    for name in args.features.split(","):
        extractor = make_extractor(name, seed=0)
        if hasattr(extractor, "finish"):
            for _ in range(500):
                step(ale, actions[rng.integers(len(actions))])
                extractor.observe(ale.getScreen() >> 1, background)
            extractor.finish()
        p = SarsaConfig(features=name).resolved()
        learner = SparseSarsaLambda(extractor.num_features, len(actions), p["alpha"], p["gamma"], p["lam"])
        bg = background if extractor.uses_background else None
        raw_t = agent_t = 0.0
        active = 0
        for k in range(args.rounds):
            codes = rng.integers(len(actions), size=args.steps)
            if k % 2 == 0:
                raw_t += raw_round(ale, actions, codes)
                t, n = agent_round(ale, actions, codes, extractor, learner, bg)
            else:
                t, n = agent_round(ale, actions, codes, extractor, learner, bg)
                raw_t += raw_round(ale, actions, codes)
            agent_t += t
            active += n
        frames = args.rounds * args.steps * FRAMESKIP
        agent_fps, raw_fps = frames / agent_t, frames / raw_t
        per_step = active / (args.rounds * args.steps)
        print(f"| {name} | {per_step:,.0f} | {agent_fps:,.0f} | {raw_fps:,.0f} | {agent_fps / raw_fps:.3f} |")


if __name__ == "__main__":
    main()
