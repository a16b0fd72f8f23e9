"""The README table of the Sarsa(lambda) feature agents' small-budget runs beside the published
rows (``benchmarks/results/ale_agents/README.md``).

Reads the episodes ``ale_agents_runs.sh`` exported to ``benchmarks/results/ale_agents/`` and the
reference tables the atari_saber suite ships (Bellemare et al. 2013, Table 4; Machado et al. 2018,
Table 1; tested against the papers' totals by ``tests/atari_saber``), and prints one markdown row
per agent and game with its budget and the paper's. A run's score is made as its protocol makes
it: the mean of its evaluation episodes (ALE 2013) or of its last 100 training episodes (Machado
et al. 2018); the training episodes' mean is shown too, to see learning at these budgets.

    python benchmarks/ale_sarsa_table.py
"""

from __future__ import annotations

import csv
from pathlib import Path

from benchgen_atari_saber.published import paper_reference_tables

RESULTS = Path(__file__).resolve().parent / "results" / "ale_agents"
ALE_GAMES = ("freeway", "asterix", "seaquest")
BLOB_GAMES = ("freeway", "asterix")
ALE = "ALE 2013 protocol (frame skip 5, 18,000-frame episodes), 10 evaluation episodes"
PAPER_ALE = "5,000 training + 500 evaluation episodes, 30 trials"
PAPER_MACHADO = "50M frames, 24 trials, last 100 episodes"
#: (label, exported file stem, games, scored phase, last-k or None, published table, budget here, the paper's)
ROWS = (
    ("Sarsa + BASS", "sarsa-bass", ALE_GAMES, "train_eval", None, "ale2013_bass",
     f"120K frames (2,000 random steps for the background); {ALE}", PAPER_ALE),
    ("Sarsa + RAM", "sarsa-ram", ALE_GAMES, "train_eval", None, "ale2013_ram",
     f"30K frames; {ALE.replace('10 evaluation', '3 evaluation')}", PAPER_ALE),
    ("Sarsa + Blob-PROST, deterministic", "blob_prost-deterministic", BLOB_GAMES, "train", 100,
     "machado2018_sarsa_blob_prost_deterministic", "40K frames, 1 trial, the training episodes' mean", PAPER_MACHADO),
    ("Sarsa + Blob-PROST, sticky 0.25", "blob_prost-sticky", BLOB_GAMES, "train", 100,
     "machado2018_sarsa_blob_prost_sticky", "40K frames, 1 trial, the training episodes' mean", PAPER_MACHADO),
)  # fmt: skip


def scores(path: Path, phase: str) -> list[float] | None:
    """The scores of ``phase``'s episodes in an exported run; None if the run is not there."""
    if not path.is_file():
        return None
    with path.open() as f:
        return [float(row["score"]) for row in csv.DictReader(f) if row["phase"] == phase]


def cell(values: list[float] | None) -> str:
    return f"{sum(values) / len(values):,.1f} ({len(values)})" if values else "not run"


def main() -> None:
    tables = {t.name: t for t in paper_reference_tables()}
    print(
        "| agent | game | benchgen (episodes) | training episodes' mean (episodes) | budget here "
        "| published | published budget | source |"
    )
    print("|---|---|---:|---:|---|---:|---|---|")
    for label, stem, games, phase, last, table, budget, paper_budget in ROWS:
        for game in games:
            path = RESULTS / f"{stem}-{game}-seed0.csv"
            got = scores(path, phase)
            if got is not None and last is not None:
                got = got[-last:]
            train = scores(path, "train")
            ref = tables[table]
            print(
                f"| {label} | {game} | {cell(got)} | {cell(train)} | {budget} | {ref.scores[game]:,.1f} "
                f"| {paper_budget} | {ref.source} |"
            )


if __name__ == "__main__":
    main()
