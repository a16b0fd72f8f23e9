"""The README table of the planners', Random's and the Brute's small-budget runs beside the
published rows (``benchmarks/results/ale_agents/README.md``).

Reads the episodes ``ale_planners_runs.sh`` exported to ``benchmarks/results/ale_agents/`` and the
reference tables the atari_saber suite ships (Bellemare et al. 2013, Tables 4 and 5; Machado et
al. 2018, Table 1; tested against the papers' totals by ``tests/atari_saber``), and prints one
markdown row per agent and game, each with its budget and the paper's. A run's score is made as
its protocol makes it: the mean of its evaluation episodes (ALE 2013) or of its last 100
training episodes (Machado et al. 2018).

    python benchmarks/ale_planners_table.py
"""

from __future__ import annotations

import csv
from pathlib import Path

from benchgen_atari_saber.published import paper_reference_tables

RESULTS = Path(__file__).resolve().parent / "results" / "ale_agents"
GAMES = ("asterix", "space_invaders")
PLANNING = "2 evaluation episodes cut at 2,000 frames"
PAPER_PLANNING = "10 episodes of up to 18,000 frames"
#: (label, exported file stem, scored phase, last-k episodes or None, published table, our budget, the paper's)
ROWS = (
    ("BrFS", "brfs", "train_eval", None, "ale2013_full_tree", f"800 frames/action; {PLANNING}",
     f"133,000 frames/action; {PAPER_PLANNING}"),
    ("UCT", "uct", "train_eval", None, "ale2013_uct", f"8 simulations of <= 100 frames/action; {PLANNING}",
     f"500 simulations of <= 300 frames/action; {PAPER_PLANNING}"),
    ("Random, every frame (frame_random)", "frame_random", "train_eval", None, "ale2013_random",
     "10 evaluation episodes", "500 evaluation episodes x 30 trials"),
    ("random, every 5-frame step (random)", "random", "train_eval", None, "ale2013_random",
     "10 evaluation episodes", "(the paper's Random acts every frame)"),
    ("Brute, deterministic", "brute-deterministic", "train", 100, "machado2018_brute_deterministic",
     "1M frames, 1 trial, last 100 episodes", "50M frames, 24 trials, last 100 episodes"),
    ("Brute, sticky 0.25", "brute-sticky", "train", 100, "machado2018_brute_sticky",
     "1M frames, 1 trial, last 100 episodes", "50M frames, 24 trials, last 100 episodes"),
)  # fmt: skip


def run_score(path: Path, phase: str, last: int | None) -> tuple[float, int] | None:
    """The run's task score and how many episodes make it; None if the run is not there."""
    if not path.is_file():
        return None
    with path.open() as f:
        scores = [float(row["score"]) for row in csv.DictReader(f) if row["phase"] == phase]
    if last is not None:
        scores = scores[-last:]
    return (sum(scores) / len(scores), len(scores)) if scores else None


def main() -> None:
    tables = {t.name: t for t in paper_reference_tables()}
    print("| agent | game | benchgen (episodes) | budget here | published | published budget | source |")
    print("|---|---|---:|---|---:|---|---|")
    for label, stem, phase, last, table, budget, paper_budget in ROWS:
        for game in GAMES:
            got = run_score(RESULTS / f"{stem}-{game}-seed0.csv", phase, last)
            ours = f"{got[0]:,.1f} ({got[1]})" if got else "not run"
            ref = tables[table]
            print(f"| {label} | {game} | {ours} | {budget} | {ref.scores[game]:,.1f} | {paper_budget} | {ref.source} |")


if __name__ == "__main__":
    main()
