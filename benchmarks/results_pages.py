"""Results pages with plots (issue 48, item 5), drawn from the committed learning runs' episodes.

Each page under ``docs/results/<topic>/`` shows one group of committed runs (``benchgen export``'s
tables under ``benchmarks/results/``): a learning curve per run (the raw return of every training
episode against the frames played so far, with its running mean), the run's score as its protocol
makes it beside the published number for the same agent and game (from the suite's shipped
reference tables, ``benchgen references SUITE``, with their sources), and the machine, budget,
seeds and command that produced the run. ``docs/results/index.md`` lists the pages, the
Atari 100K aggregates page (``benchmarks/atari100k_aggregates.py``, left to that script) and
the learning runs that have no committed episodes yet.

Every page records a fingerprint (SHA-256) of the episode CSVs its images are drawn from.
``--check`` rebuilds the pages' text without drawing (cheap) and fails when a committed page
differs, e.g. because a run was added or re-exported. PNGs are written without a timestamp or version stamp, so the same inputs give the
same bytes with the same matplotlib.

Usage: python benchmarks/results_pages.py [--check] [--out docs/results]
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "docs" / "results"
sys.path.insert(0, str(HERE))  # the table scripts beside this one own their scoring rules

import ale_planners_table  # noqa: E402
import ale_sarsa_table  # noqa: E402
import atari100k_aggregates  # noqa: E402
from docs_plots import Panel, draw_bars, draw_panels, fingerprint, page_main  # noqa: E402
from results_pages_runs import (  # noqa: E402
    DEV_MACHINE,
    RESULTS,
    Page,
    fmt,
    gymnasium_page,
    minatar_page,
    read_run,
    references,
    run_of,
)

from benchgen.registry import get_registry  # noqa: E402

# --- the topics --------------------------------------------------------------------------------------


def ale_agents_page() -> Page:
    """The ALE papers' agents (issue 30): Sarsa(lambda) with the papers' features, the planners,
    Random and the Brute, beside Bellemare et al. 2013's and Machado et al. 2018's tables."""
    folder = RESULTS / "ale_agents"
    refs = references("atari_saber")
    rows = [
        (label, stem, games, phase, last, table, budget, paper_budget)
        for label, stem, games, phase, last, table, budget, paper_budget in ale_sarsa_table.ROWS
    ]
    rows += [(label, stem, ale_planners_table.GAMES, phase, last, table, budget, paper_budget)
             for label, stem, phase, last, table, budget, paper_budget in ale_planners_table.ROWS]  # fmt: skip
    body = [
        "Benchgen's runs of the agents of Bellemare et al. 2013 (Sarsa(lambda) with the BASS and RAM "
        "features, breadth-first search, UCT, Random) and Machado et al. 2018 (Sarsa(lambda) with "
        "Blob-PROST, the Brute), each on a small fraction of the papers' budgets. A run's score is made "
        "as its protocol makes it: the mean of its evaluation episodes (ALE 2013 presets) or of its last "
        "100 training episodes (Machado et al. 2018). The planners and Random do not learn: they have "
        "scores but no curve. Commands: `benchmarks/ale_agents_runs.sh`, `benchmarks/ale_planners_runs.sh`; "
        "the reasons each row is far from the paper's are in `benchmarks/results/ale_agents/README.md`.",
        "",
        "| agent | game | seed | benchgen (episodes) | budget here | published | published budget | source |",
        "|---|---|---|---:|---|---:|---|---|",
    ]
    inputs, panels, bars = [], {}, []
    for label, stem, games, phase, last, table, budget, paper_budget in rows:
        for game in games:
            path = folder / f"{stem}-{game}-seed0.csv"
            got = ale_planners_table.run_score(path, phase, last)
            ref = refs[table]
            ours = f"{got[0]:,.1f} ({got[1]})" if got else "not run"
            body.append(f"| {label} | {game} | 0 | {ours} | {budget} | {ref.scores[game]:,.1f} | {paper_budget} "
                        f"| {ref.source} (`{table}`) |")  # fmt: skip
            bars.append((f"{label}, {game}", got[0] if got else None, ref.scores[game]))
            if not path.is_file():
                continue
            inputs.append(path)
            run = read_run(path)
            frames, scores = run.curve("train")
            if len(scores) >= 3:
                panels.setdefault((stem, label), []).append(
                    Panel(
                        f"{label}: {game}",
                        [(f"seed {run.seed}", frames, scores)],
                        [(f"published {ref.scores[game]:,.1f} ({ref.source})", ref.scores[game], "--")],
                        [(f"benchgen's score {got[0]:,.1f}", frames[-1], got[0])],
                    )  # fmt: skip
                )
    figures = {"scores.png": lambda path: draw_bars(bars, path, "ALE papers' agents: benchgen's score and the paper's")}
    body += [
        "",
        "![scores beside the published ones](scores.png)",
        "",
        "Learning curves (training episodes; seed 0):",
        "",
    ]
    for (stem, label), group in panels.items():
        name = f"curves_{stem}.png"
        figures[name] = lambda path, group=group: draw_panels(group, path)
        body += [f"![{label}]({name})", ""]
    return Page(
        "The ALE papers' agents on a small budget",
        [f"Machine: {DEV_MACHINE}. Seeds: 0.", ""] + body,
        inputs,
        figures,
    )


def atari100k_page() -> Page:
    """Atari 100K (issues 26, 45): DER's and DrQ(epsilon)'s training curves per game, their
    evaluation score beside the published mean of the same agent and benchgen's random agent."""
    folder = atari100k_aggregates.RESULTS
    refs = references("atari_saber")
    episodes = atari100k_aggregates.load_episodes(folder)
    randoms = atari100k_aggregates.run_scores(episodes.get("random", {}))
    body = [
        "Each run trains 100K agent steps (400K frames) under the `atari100k` protocol, then plays 100 "
        "evaluation episodes; its score is their mean (`benchmarks/atari100k_runs.sh`: "
        "`benchgen run atari_saber rainbow --set variant=der --protocol atari100k --tasks GAME --seeds SEED "
        "--set save_replay=true --checkpoints 400000`, and `dqn --set variant=drq_eps` likewise). The "
        "aggregates with rliable's intervals, beside the published runs, are on the "
        "[Atari 100K page](../atari100k/README.md).",
        "",
    ]
    inputs, figures = [], {}
    for variant, (label, table) in atari100k_aggregates.AGENTS.items():
        games = episodes.get(variant, {})
        if not games:
            continue
        scores = atari100k_aggregates.run_scores(games)
        ref = refs[table]
        body += [
            f"## {label}",
            "",
            f"| game | seed: evaluation score | published ({ref.source}, `{table}`) | benchgen random |",
            "|---|---|---:|---:|",
        ]
        panels, bars = [], []
        for game in sorted(games):
            paths = [folder / f"{variant}-{game}-seed{seed}.csv" for seed in sorted(games[game])]
            inputs += paths
            runs = [run_of(p, games[game][seed]) for p, seed in zip(paths, sorted(games[game]))]
            got = ", ".join(f"{s}: {fmt(v)}" for s, v in sorted(scores.get(game, {}).items())) or "not finished"
            body.append(f"| {game} | {got} | {fmt(ref.scores.get(game))} | {fmt(randoms.get(game, {}).get(0))} |")
            bars += [(f"{game}, seed {seed}", value, ref.scores.get(game))
                     for seed, value in sorted(scores.get(game, {}).items())]  # fmt: skip
            panels.append(
                Panel(
                    game,
                    [(f"seed {r.seed}", *r.curve("train")) for r in runs],
                    [
                        (f"published {fmt(ref.scores.get(game))}", ref.scores.get(game), "--"),
                        (f"random {fmt(randoms.get(game, {}).get(0))}", randoms.get(game, {}).get(0), ":"),
                    ],
                    [
                        (f"seed {r.seed} evaluation", r.curve("train")[0][-1], scores.get(game, {}).get(r.seed))
                        for r in runs
                        if len(r.curve("train")[0])
                    ],
                )  # fmt: skip
            )
        name = f"curves_{variant}.png"
        figures[name] = lambda path, panels=panels: draw_panels(panels, path, ncols=4)
        figures[f"scores_{variant}.png"] = lambda path, bars=bars, label=label, source=ref.source: draw_bars(
            bars, path, f"{label}: evaluation score and the published mean ({source})"
        )
        body += ["", f"![{label} scores](scores_{variant}.png)", "", f"![{label} training curves]({name})", ""]
    inputs += sorted(folder.glob("random-*-seed*.csv"))
    return Page(
        "Atari 100K: learning curves",
        [f"Machine: {DEV_MACHINE}. Seeds: as in each table row.", ""] + body,
        inputs,
        figures,
    )


def procgen_page() -> Page:
    """The committed Procgen run: a small joint-training, zero-shot and fine-tuning example."""
    path = RESULTS / "procgen" / "ppo_joint-finetune-coinrun_levels-small.csv"
    refs = references("procgen")
    run = read_run(path)
    body = [
        "A functional example, not a learning result: `benchgen run procgen ppo_joint --split coinrun_levels "
        "--finetune --protocol benchmarks/protocols/procgen_quick_test_rounds.yaml` with 4,096 steps a unit "
        "(joint training on training levels, zero-shot on test levels, fine-tuning on them); openai's PPO "
        "trained 25M steps. The proof run of the paper's budget is in progress (`benchmarks/LANES.md`).",
        "",
        "| phase | episodes | mean return | published at 25M steps |",
        "|---|---:|---:|---|",
    ]
    train, test = refs["openai_ppo_easy200_train"], refs["openai_ppo_easy200_test"]
    published = {"joint": train, "joint_eval": train, "zeroshot": test, "finetune": test, "finetune_eval": test}
    for phase, (_, scores) in run.phases.items():
        ref = published.get(phase)
        where = f"{fmt(ref.scores[run.task])} (`{ref.name}`)" if ref else "-"
        body.append(f"| {phase} | {len(scores)} | {fmt(float(np.mean(scores)))} | {where} |")
    body += ["", f"Published: openai's three released PPO runs, mean return ({train.source})."]
    panel = Panel(f"ppo_joint, {run.task}", [(p, *run.curve(p)) for p in run.phases],
                  [("openai PPO train, 25M steps", train.scores[run.task], "--"),
                   ("openai PPO test, 25M steps", test.scores[run.task], ":")])  # fmt: skip
    body += ["", "![Procgen episodes](curves_ppo_joint.png)", ""]
    return Page(
        "Procgen: the joint-training example",
        [f"Machine: {DEV_MACHINE}. Seed: {run.seed}.", ""] + body,
        [path],
        {"curves_ppo_joint.png": lambda out: draw_panels([panel], out, xlabel="steps of the unit")},
    )


def gpu_page() -> Page:
    """Rainbow-IQN on Breakout on a GPU, beside SABER's Rainbow-IQN at its first published checkpoint."""
    path = RESULTS / "gpu" / "h100-2026-11-26-breakout-episodes.csv"
    refs = references("atari_saber")
    run = read_run(path)
    frames, scores = run.curve("train")
    iqn = refs["rainbow_iqn_saber_30min"]
    first = iqn.by_checkpoint["10M"][run.task]
    random_score = get_registry().suite("atari_saber").scorer().random_scores.get(run.task)
    last = scores[-100:]
    body = [
        "`benchmarks/gpu_checklist.sh breakout-start`, then `breakout-finish 170`: `benchgen run atari_saber "
        "rainbow_iqn --tasks breakout --frames 2000000 --num-envs 16 --set device=cuda` (SABER protocol), "
        f"stopped at {int(frames[-1]):,} frames when the device time ran out; no evaluation phase. "
        "Record, log and the machine's other measurements: `benchmarks/results/gpu/` (its README).",
        "",
        "| measure | value | source |",
        "|---|---:|---|",
        f"| benchgen: mean of the last {len(last)} training episodes | {fmt(float(np.mean(last)))} | this run |",
        f"| SABER Rainbow-IQN at 10M frames (its first checkpoint; 30-minute view) | {fmt(first)} | {iqn.source} |",
        f"| SABER Rainbow-IQN at 200M frames | {fmt(iqn.scores[run.task])} | {iqn.source} |",
        f"| random play | {fmt(random_score)} | SABER (Toromanoff et al. 2019), Table 5 |",
        "",
        "![Breakout training curve](curves_breakout.png)",
        "",
    ]
    panel = Panel("rainbow_iqn, breakout (H100)", [(f"seed {run.seed}", frames, scores)],
                  [("SABER Rainbow-IQN, 10M frames", first, "--"), ("random play", random_score, ":")])  # fmt: skip
    return Page(
        "Rainbow-IQN on Breakout, on a GPU",
        [
            "Machine: one NVIDIA H100 80GB, 16 CPU cores, torch 2.11.0+cu130, 2026-11-26. "
            f"Seed: {run.seed}. Budget: 2M frames planned, {int(frames[-1]):,} played.",
            "",
        ]
        + body,  # fmt: skip
        [path],
        {"curves_breakout.png": lambda out: draw_panels([panel], out)},
    )


TOPICS: dict[str, Callable[[], Page]] = {
    "ale_agents": ale_agents_page,
    "atari100k_curves": atari100k_page,
    "procgen": procgen_page,
    "gpu": gpu_page,
    "gymnasium": gymnasium_page,
    "minatar": minatar_page,
}

#: learning runs docs/measurements/learning.md reports whose episodes are not committed (no page can draw them yet)
NOT_COMMITTED = (
    ("MinAtar Breakout: `dqn` (90 min), `rainbow` (1M frames), `rainbow_iqn` (250K frames), seed 0",
     "`docs/measurements/learning.md` gives each run's mean score per 100K frames and last-100 mean; the "
     "runs' directories were not exported and committed (`ppo`, the short one, was run again: the MinAtar page)"),
    ("Gymnasium classic control: `dqn` on Acrobot-v1 and MountainCar-v0, `ppo` on Acrobot-v1, seed 0",
     "`docs/measurements/learning.md` gives each run's greedy evaluation beside the RL Zoo's score; the "
     "runs (11 to 24 min each) were not committed (the short ones were run again: the classic control page)"),
    ("Atari 100K: the Freeway early-steps study (`benchmarks/results/atari100k/freeway_early/`)",
     "12,288-step runs, tabulated by `benchmarks/freeway_early_table.py`; not drawn here"),
)  # fmt: skip


def render(name: str, page: Page) -> str:
    """The page's markdown: title, provenance, body."""
    head = [
        f"# {page.title}",
        "",
        f"Generated by `python benchmarks/results_pages.py` from {len(page.inputs)} committed "
        f"file{'' if len(page.inputs) == 1 else 's'} "
        f"(inputs' SHA-256: `{fingerprint(page.inputs)[:16]}`; `--check` tells when the page is stale).",
        "",
    ]
    return "\n".join(head + page.body).rstrip() + "\n"


def render_index(pages: dict[str, Page]) -> str:
    lines = [
        "# Results",
        "",
        "Pages drawn from the runs committed under `benchmarks/results/`, each with its learning curves, "
        "the score beside the published number and its source, and the machine, budget, seeds and command "
        "that made it (`python benchmarks/results_pages.py` regenerates them; `--check` tells when one is stale).",
        "",
        "- [Atari 100K: aggregates beside the published runs](atari100k/README.md) "
        "(`python benchmarks/atari100k_aggregates.py`)",
    ]
    lines += [f"- [{page.title}]({name}/index.md)" for name, page in pages.items()]
    lines += [
        "- [The papers' figures, regenerated from the shipped tables](../papers/figures.md)",
        "",
        "Learning runs reported in `docs/measurements/learning.md` without committed episodes (no plot "
        "until they are exported and committed under `benchmarks/results/`):",
        "",
    ]
    lines += [f"- {what}: {why}." for what, why in NOT_COMMITTED]
    return "\n".join(lines) + "\n"


def build() -> dict[str, Page]:
    return {name: make() for name, make in TOPICS.items()}


def texts(pages: dict[str, Page], out: Path) -> dict[Path, str]:
    files = {out / name / "index.md": render(name, page) for name, page in pages.items()}
    files[out / "index.md"] = render_index(pages)
    return files


def check(out: Path) -> list[str]:
    """What is stale: pages whose text differs from a rebuild, figures that are missing."""
    pages = build()
    problems = [f"{path}: stale (regenerate)" for path, text in texts(pages, out).items()
                if not path.is_file() or path.read_text() != text]  # fmt: skip
    problems += [f"{out / name / figure}: missing" for name, page in pages.items() for figure in page.figures
                 if not (out / name / figure).is_file()]  # fmt: skip
    return problems


def write(out: Path) -> None:
    pages = build()
    for path, text in texts(pages, out).items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for name, page in pages.items():
        for figure, draw in page.figures.items():
            draw(out / name / figure)
            print(f"{out / name / figure}: {(out / name / figure).stat().st_size // 1024} KB")


def main(argv: list[str] | None = None) -> int:
    return page_main(__doc__.split("\n\n")[0], OUT, check, write, argv)


if __name__ == "__main__":
    sys.exit(main())
