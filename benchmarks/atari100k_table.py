"""The Atari 100K proof table (issue 26): benchgen's score per game beside the published ones.

Reads the episodes ``benchmarks/atari100k_runs.sh`` exported to ``benchmarks/results/atari100k/``
(one CSV per agent variant, game and seed), and prints, per game: benchgen's task score (the mean
raw score of the 100 evaluation episodes after training, the ``atari100k`` protocol's; with several
seeds, each seed's and their mean), the
published score of the same agent (``atari100k_der`` for ``der``, ``atari100k_drq_eps`` for
``drq_eps``: the mean of Agarwal et al. 2021's 100 runs a game), the random and human scores of
``human_atari100k``, and both human-normalized; then the mean normalized score over the games
benchgen has run, beside the published DER, OTRainbow and DrQ means over the same games (the
spread a run is expected to fall in, issue 26) and DrQ(epsilon)'s; once DER has run more games
than the issue's eight, the same over those eight as well. All published numbers come from
the suite's reference tables, which name their sources (SPR, Schwarzer et al. 2021, Table 1;
DrQ(epsilon): IRIS, Micheli et al. 2023, Table 1).

Usage: python benchmarks/atari100k_table.py [--results benchmarks/results/atari100k] [--markdown]
"""

from __future__ import annotations

import argparse
import csv
from collections import defaultdict
from pathlib import Path

from benchgen.registry import get_registry

#: agent variant -> the published table it is compared with (``random``: the papers' random scores,
#: beside which benchgen's random agent under the same protocol shows what "above random" means here)
#: ``drq_eps_dopamine``: DrQ(epsilon) with ``network_style=dopamine`` (Dopamine's own network)
PUBLISHED = {
    "der": "atari100k_der",
    "drq_eps": "atari100k_drq_eps",
    "drq_eps_dopamine": "atari100k_drq_eps",
    "random": "random",
}
#: the published agents whose spread the mean over the run's games should fall in (issue 26)
SPREAD = ("atari100k_der", "atari100k_otrainbow", "atari100k_drq", "atari100k_drq_eps")
EVAL_PHASE = "train_eval"
#: the eight games issue 26 names for DER's proof; the mean over them is printed on its own once
#: more games have been run
ISSUE_GAMES = ("alien", "amidar", "crazy_climber", "freeway", "frostbite", "hero", "kangaroo", "ms_pacman")


def load(results: Path) -> dict[tuple[str, str], dict[int, list[float]]]:
    """(variant, game) -> seed -> the evaluation episodes' raw scores of that seed's run."""
    scores: dict[tuple[str, str], dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for path in sorted(results.glob("*-seed*.csv")):
        variant = path.name.split("-", 1)[0]
        with path.open() as handle:
            for row in csv.DictReader(handle):
                if row["phase"] == EVAL_PHASE:
                    scores[(variant, row["task"])][int(row["seed"])].append(float(row["score"]))
    return {key: dict(seeds) for key, seeds in scores.items()}


def task_score(seeds: dict[int, list[float]]) -> float:
    """The mean over seeds of each run's task score (the mean of its evaluation episodes)."""
    return sum(sum(s) / len(s) for s in seeds.values()) / len(seeds)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path(__file__).parent / "results" / "atari100k")
    args = parser.parse_args(argv)
    refs = {r.name: r for r in get_registry().suite("atari_saber").reference_scores()}
    human = refs["human_atari100k"]

    def norm(game: str, score: float) -> float:
        return (score - human.random[game]) / (human.scores[game] - human.random[game])

    runs = load(args.results)
    print(
        "| agent | game | seeds: score | benchgen | published | random | human | benchgen normalized | "
        "published normalized |"
    )
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    by_variant: dict[str, list[str]] = defaultdict(list)
    for (variant, game), seeds in sorted(runs.items()):
        ours = task_score(seeds)
        published = human.random[game] if variant == "random" else refs[PUBLISHED[variant]].scores[game]
        by_variant[variant].append(game)
        per_seed = ", ".join(f"{seed}: {sum(s) / len(s):,.1f} ({len(s)} ep.)" for seed, s in sorted(seeds.items()))
        print(
            f"| {variant} | {game} | {per_seed} | {ours:,.1f} | {published:,.1f} | {human.random[game]:,.1f} | "
            f"{human.scores[game]:,.1f} | {norm(game, ours):.3f} | {norm(game, published):.3f} |"
        )
    print()
    for variant in by_variant:
        if variant in PUBLISHED and variant != "random":
            table = refs[PUBLISHED[variant]]
            counts = sorted({len(v) for v in table.runs.values()})
            kind = (
                f"its {'-'.join(map(str, (counts[0], counts[-1]) if len(counts) > 1 else counts))} runs a game are "
                "public and shipped (benchmarks/atari100k_aggregates.py places each run among them)"
                if table.runs
                else "means only: no per-run scores reachable here"
            )
            print(f"Source of the published {variant} column: {table.source}; {kind}.")
    print()
    for variant, games in by_variant.items():
        if variant == "random":
            continue
        subsets = [(f"{len(games)} game(s)", games)]
        issue_games = [g for g in games if g in ISSUE_GAMES]
        if len(issue_games) == len(ISSUE_GAMES) < len(games):
            subsets.append(("issue 26's eight games", issue_games))
        for label, subset in subsets:
            ours = sum(norm(g, task_score(runs[(variant, g)])) for g in subset) / len(subset)
            spread = {name: sum(norm(g, refs[name].scores[g]) for g in subset) / len(subset) for name in SPREAD}
            low, high = min(spread.values()), max(spread.values())
            verdict = "within" if low <= ours <= high else ("above" if ours > high else "below")
            shown = ", ".join(f"{name.removeprefix('atari100k_')} {value:.3f}" for name, value in spread.items())
            print(
                f"{variant}: mean human-normalized over {label} {ours:.3f}; published on the same games: "
                f"{shown} -> {verdict} their spread"
            )


if __name__ == "__main__":
    main()
