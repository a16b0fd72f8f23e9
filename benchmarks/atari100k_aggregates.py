"""Atari 100K aggregates as the field reports them (issue 45, items 2-6), from the committed episodes.

Reads the runs ``benchmarks/atari100k_runs.sh`` exported to ``benchmarks/results/atari100k/`` (one
CSV per agent variant, game and seed: ``benchgen export``'s tidy table, one row per episode with
every recorded field) and computes, for benchgen's Data-Efficient Rainbow (``der``) and
DrQ(epsilon) (``drq_eps``), the human-normalized IQM, median, mean and optimality gap (Agarwal et
al. 2021) with rliable's 95% stratified-bootstrap intervals, beside:

- the published agents whose runs were released one by one (Agarwal et al. 2021: DrQ(epsilon) and
  SPR, 100 runs a game; SimPLe, 5): the same aggregates with the same intervals, on the games
  benchgen has run and on all 26;
- the published agents known only by their per-game means (SPR Table 1: DER, OTRainbow, CURL, DrQ,
  SPR's own 10 seeds, SimPLe; BBF's table): the aggregates of those means, without intervals;
- what one run a game of the published DrQ(epsilon) gives: the spread of its aggregates over
  draws of one of its 100 runs on each game (benchgen's own runs are one seed a game on most games,
  where a stratified bootstrap has nothing to resample: its interval is then a point).

It writes (``--out``, default ``docs/results/atari100k``): ``README.md`` (the results page: the
per-game table, the aggregates, each run's percentile among the published runs, the cost), the
aggregate-intervals plot and the performance profiles (PNG), and the scores in the formats people
share: ``scores/<agent>.json`` (game -> each run's raw score, the layout rliable's and IRIS's
notebooks load with ``load_json_scores``) and ``scores.npz`` (agent -> the (runs x games)
human-normalized matrix rliable's ``get_interval_estimates`` takes, with ``games`` naming the
columns). ``--print`` prints the page instead of writing anything.

Usage: python benchmarks/atari100k_aggregates.py [--results DIR] [--out DIR] [--reps N] [--print]
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np
import scipy.stats
from rliable import library as rly
from rliable import metrics

from benchgen.registry import get_registry
from benchgen.results.compare import stats
from benchgen.results.compare.stats import seeded

#: rliable passes a RandomState to arch, which warns that it will want a Generator one day
warnings.filterwarnings("ignore", category=FutureWarning, module="arch")

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the cost section's module beside this script

from atari100k_cost import SINCE, cost_lines  # noqa: E402

RESULTS = HERE / "results" / "atari100k"
OUT = HERE.parent / "docs" / "results" / "atari100k"
EVAL_PHASE = "train_eval"
#: benchgen's agents here: variant -> (label, the published table of the same agent)
AGENTS = {"der": ("benchgen DER", "atari100k_der"), "drq_eps": ("benchgen DrQ(eps)", "atari100k_drq_eps")}
#: published agents with runs one by one (reference table -> label)
RUN_TABLES = {
    "atari100k_drq_eps": "DrQ(eps), 100 runs (Agarwal et al. 2021)",
    "atari100k_spr_runs": "SPR, 100 runs (Agarwal et al. 2021)",
    "atari100k_simple_runs": "SimPLe, 5 runs (Agarwal et al. 2021)",
    "atari100k_bbf_runs": "BBF, 52-60 runs (its released RR8_BBF.csv)",
}
#: published agents known by per-game means only (reference table -> label)
MEAN_TABLES = {
    "atari100k_der": "DER (SPR Table 1)",
    "atari100k_otrainbow": "OTRainbow (SPR Table 1)",
    "atari100k_curl": "CURL (SPR Table 1)",
    "atari100k_drq": "DrQ (SPR Table 1)",
    "atari100k_spr": "SPR, 10 seeds (SPR Table 1)",
    "atari100k_bbf": "BBF (BBF appendix table)",
}
METRICS = ("iqm", "median", "mean", "optimality_gap")
TITLES = {"iqm": "IQM", "median": "Median", "mean": "Mean", "optimality_gap": "Optimality gap"}
#: bootstrap replications of the probability of improvement (rliable's Mann-Whitney per game is slow)
POI_REPS = 1000


def aggregate_func(matrix: np.ndarray) -> np.ndarray:
    """IQM, median, mean, optimality gap of a (runs x games) normalized matrix (rliable's)."""
    point = stats.aggregate_point(matrix, METRICS)
    return np.array([point[m] for m in METRICS])


def notebook_name(game: str) -> str:
    """benchgen's game id -> the name rliable's and IRIS's Atari 100K notebooks use.

    >>> notebook_name("up_n_down"), notebook_name("ms_pacman"), notebook_name("hero")
    ('UpNDown', 'MsPacman', 'Hero')
    """
    return "".join(part.title() for part in game.split("_"))


def benchgen_name(name: str) -> str:
    """The notebooks' game name -> benchgen's id (the inverse of :func:`notebook_name`).

    >>> benchgen_name("UpNDown"), benchgen_name("KungFuMaster"), benchgen_name("Jamesbond")
    ('up_n_down', 'kung_fu_master', 'jamesbond')
    """
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


# --- the committed episodes --------------------------------------------------------------------


def load_episodes(results: Path) -> dict[str, dict[str, dict[int, list[dict]]]]:
    """variant -> game -> seed -> the run's episode rows (every recorded field), in file order."""
    out: dict[str, dict[str, dict[int, list[dict]]]] = defaultdict(lambda: defaultdict(dict))
    for path in sorted(results.glob("*-seed*.csv")):
        variant = path.name.split("-", 1)[0]
        with path.open() as handle:
            rows = list(csv.DictReader(handle))
        for row in rows:
            out[variant][row["task"]].setdefault(int(row["seed"]), []).append(row)
    return {v: {g: dict(s) for g, s in games.items()} for v, games in out.items()}


def run_scores(episodes: dict[str, dict[int, list[dict]]]) -> dict[str, dict[int, float]]:
    """game -> seed -> the run's task score: the mean raw score of its evaluation episodes (the
    atari100k protocol's); runs without evaluation episodes (not finished) are left out."""
    out: dict[str, dict[int, float]] = {}
    for game, seeds in episodes.items():
        for seed, rows in seeds.items():
            scores = [float(r["score"]) for r in rows if r["phase"] == EVAL_PHASE]
            if scores:
                out.setdefault(game, {})[seed] = sum(scores) / len(scores)
    return out


def score_lists(per_seed: dict[str, dict[int, float]]) -> dict[str, list[float]]:
    """game -> the runs' scores in seed order (the layout of rliable's JSON score files)."""
    return {g: [s[k] for k in sorted(s)] for g, s in per_seed.items()}


def normalizer():
    """(game -> (random, human)) of ``human_atari100k``: the papers' yardstick."""
    refs = {r.name: r for r in get_registry().suite("atari_saber").reference_scores()}
    human = refs["human_atari100k"]
    return {g: (human.random[g], human.scores[g]) for g in human.scores}, refs


def normalized_matrix(scores: dict[str, list[float]], games: list[str], yardstick) -> np.ndarray:
    """(runs x games) human-normalized scores; runs = the fewest any of ``games`` has (each game's
    first runs, in seed order), as a stratified bootstrap needs as many runs on every game."""
    k = min(len(scores[g]) for g in games)
    columns = [
        (np.asarray(scores[g][:k], dtype=float) - yardstick[g][0]) / (yardstick[g][1] - yardstick[g][0]) for g in games
    ]
    return np.stack(columns, axis=1)


def intervals(matrix: np.ndarray, reps: int, seed: int = 0, task_bootstrap: bool = False) -> dict[str, tuple]:
    """metric -> (point, low, high): rliable's stratified bootstrap, 95% percentile intervals
    (with ``task_bootstrap`` the games are resampled too). One run a game: low = high = point."""
    with seeded(seed, "aggregates"):  # rliable draws the games' resampling from numpy's global generator
        points, cis = rly.get_interval_estimates(
            {"x": matrix},
            aggregate_func,
            reps=reps,
            task_bootstrap=task_bootstrap,
            random_state=np.random.RandomState(seed),
        )
    return {m: (float(points["x"][i]), float(cis["x"][0, i]), float(cis["x"][1, i])) for i, m in enumerate(METRICS)}


def one_run_a_game(scores: dict[str, list[float]], games: list[str], yardstick, draws: int, seed: int = 0):
    """The aggregates of ``draws`` draws of one published run on each of ``games`` (runs drawn
    independently per game): what a campaign of one seed a game of that agent gives. metric ->
    sorted array of the draws' values."""
    rng = np.random.RandomState(seed)
    full = {g: np.asarray(scores[g], dtype=float) for g in games}
    picked = np.stack([rng.choice(full[g], size=draws) for g in games], axis=1)
    lo_hi = np.array([yardstick[g] for g in games])
    matrix = (picked - lo_hi[:, 0]) / (lo_hi[:, 1] - lo_hi[:, 0])
    points = [stats.aggregate_point(row[None, :], METRICS) for row in matrix]
    return {m: np.sort([point[m] for point in points]) for m in METRICS}


# --- the formats people share -----------------------------------------------------------------------


def write_score_json(path: Path, scores: dict[str, list[float]]) -> Path:
    """``{NotebookGame: [each run's raw score]}``: what rliable's and IRIS's notebooks load."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps({notebook_name(g): list(map(float, v)) for g, v in sorted(scores.items())}, indent=1) + "\n"
    )
    return path


def read_score_json(path: Path) -> dict[str, list[float]]:
    """The inverse of :func:`write_score_json`, game names back to benchgen's."""
    return {benchgen_name(g): list(v) for g, v in json.loads(Path(path).read_text()).items()}


def write_score_npz(path: Path, matrices: dict[str, np.ndarray], games: dict[str, list[str]]) -> Path:
    """agent -> (runs x games) normalized matrix, with ``<agent>.games`` naming its columns."""
    arrays = {}
    for name, matrix in matrices.items():
        arrays[name] = np.asarray(matrix, dtype=float)
        arrays[f"{name}.games"] = np.array(games[name])
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        np.savez_compressed(handle, **arrays)
    return path


def read_score_npz(path: Path) -> tuple[dict[str, np.ndarray], dict[str, list[str]]]:
    """The inverse of :func:`write_score_npz`."""
    with np.load(path, allow_pickle=False) as data:
        names = [k for k in data.files if not k.endswith(".games")]
        return {k: data[k] for k in names}, {k: [str(g) for g in data[f"{k}.games"]] for k in names}


# --- the page ---------------------------------------------------------------------------------


def fmt(e: tuple) -> str:
    point, low, high = e
    return f"{point:.3f}" if low == high else f"{point:.3f} [{low:.3f}, {high:.3f}]"


def table(head: list[str], rows: list[list[str]]) -> list[str]:
    return (
        ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + ["| " + " | ".join(r) + " |" for r in rows] + [""]
    )


def build(results: Path, reps: int, draws: int) -> dict:
    """Everything the page shows, as numbers."""
    yardstick, refs = normalizer()
    episodes = load_episodes(results)
    ours = {v: score_lists(run_scores(episodes.get(v, {}))) for v in AGENTS}
    ours = {v: s for v, s in ours.items() if s}
    all_games = list(yardstick)
    out: dict = {"agents": {}, "published_runs": {}, "published_means": {}, "one_run": {}, "percentiles": {}}
    all_games_intervals = {
        name: intervals(normalized_matrix(refs[name].runs, all_games, yardstick), reps) for name in RUN_TABLES
    }
    out["random"] = run_scores(episodes.get("random", {}))
    out["episodes"] = episodes
    out["yardstick"], out["refs"] = yardstick, refs
    for variant, scores in ours.items():
        label, same_agent = AGENTS[variant]
        games = [g for g in all_games if g in scores]
        matrix = normalized_matrix(scores, games, yardstick)
        runs = {g: len(scores[g]) for g in games}
        entry = {
            "label": label,
            "scores": scores,
            "per_seed": run_scores(episodes[variant]),
            "games": games,
            "runs_per_game": runs,
            "matrix": matrix,
            "stratified": intervals(matrix, reps),
            "with_games": intervals(matrix, reps, task_bootstrap=True),
        }
        entry["published_runs"] = {
            name: {
                "same_games": intervals(normalized_matrix(refs[name].runs, games, yardstick), reps),
                "all_games": all_games_intervals[name],
                "poi": poi(matrix, normalized_matrix(refs[name].runs, games, yardstick), min(reps, POI_REPS)),
            }
            for name in RUN_TABLES
        }
        entry["published_means"] = {
            name: {
                m: float(v)
                for m, v in zip(
                    METRICS,
                    aggregate_func(normalized_matrix({g: [refs[name].scores[g]] for g in games}, games, yardstick)),
                )
            }
            for name in MEAN_TABLES
        }
        if refs[same_agent].runs:  # the same agent's runs one by one: where one seed a game lands
            draws_ = one_run_a_game(refs[same_agent].runs, games, yardstick, draws)
            entry["one_run"] = {
                "table": same_agent,
                "draws": draws,
                "quantiles": {
                    m: (float(np.quantile(v, 0.025)), float(np.quantile(v, 0.975))) for m, v in draws_.items()
                },
                "ours_percentile": {
                    m: float(scipy.stats.percentileofscore(draws_[m], aggregate_func(matrix[:1])[i], kind="mean"))
                    for i, m in enumerate(METRICS)
                },
            }
        entry["percentiles"] = {
            name: {
                g: [float(scipy.stats.percentileofscore(refs[name].runs[g], x, kind="mean")) for x in scores[g]]
                for g in games
            }
            for name in RUN_TABLES
        }
        out["agents"][variant] = entry
    out["all_games_runs"] = {
        name: {"matrix": normalized_matrix(refs[name].runs, all_games, yardstick), "all_games": all_games}
        for name in RUN_TABLES
    }
    return out


def poi(x: np.ndarray, y: np.ndarray, reps: int, seed: int = 0) -> tuple:
    """P(X > Y) (rliable's probability of improvement) with its stratified independent bootstrap interval."""
    func = lambda a, b: np.array([metrics.probability_of_improvement(a, b)])  # noqa: E731
    with seeded(seed, "poi"):  # rliable draws part of the resampling from numpy's global generator
        points, cis = rly.get_interval_estimates(
            {"x": [x, y]}, func, reps=reps, random_state=np.random.RandomState(seed)
        )
    return float(points["x"][0]), float(cis["x"][0, 0]), float(cis["x"][1, 0])


def plot(result: dict, out: Path) -> list[Path]:
    """The aggregate intervals beside the published agents' and the performance profiles (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from rliable import plot_utils

    written = []
    for variant, entry in result["agents"].items():
        games = entry["games"]
        points = {entry["label"]: np.array([entry["stratified"][m][0] for m in METRICS])}
        cis = {entry["label"]: np.array([[entry["stratified"][m][i] for m in METRICS] for i in (1, 2)])}
        resampled = f"{entry['label']}, games resampled"  # one run a game: the only interval it has
        points[resampled] = points[entry["label"]]
        cis[resampled] = np.array([[entry["with_games"][m][i] for m in METRICS] for i in (1, 2)])
        for name, label in RUN_TABLES.items():
            e = entry["published_runs"][name]["same_games"]
            points[label] = np.array([e[m][0] for m in METRICS])
            cis[label] = np.array([[e[m][i] for m in METRICS] for i in (1, 2)])
        for name, label in MEAN_TABLES.items():
            e = entry["published_means"][name]
            points[f"{label}, means only"] = np.array([e[m] for m in METRICS])
            cis[f"{label}, means only"] = np.array([[e[m] for m in METRICS]] * 2)
        fig, _ = plot_utils.plot_interval_estimates(
            points,
            cis,
            metric_names=[TITLES[m] for m in METRICS],
            algorithms=list(points),
            xlabel="Human-normalized score",
            subfigure_width=3.6,
            row_height=0.45,
            xlabel_y_coordinate=-0.25,
        )
        fig.suptitle(
            f"{entry['label']} on {len(games)} games ({sum(entry['runs_per_game'].values())} runs) beside the published agents on the same games; 95% stratified-bootstrap intervals",
            fontsize=9,
            y=1.02,
        )
        path = out / f"aggregates_{variant}.png"
        fig.savefig(path, dpi=90, bbox_inches="tight")
        plt.close(fig)
        written.append(path)

        taus = np.linspace(0.0, 2.0, 81)
        profiles, bands = {}, {}
        matrices = {entry["label"]: entry["matrix"]}
        for name, label in RUN_TABLES.items():
            matrices[label] = normalized_matrix(result["refs"][name].runs, games, result["yardstick"])
        for label, matrix in matrices.items():
            if matrix.shape[0] > 1:
                with seeded(0, label):
                    p, c = rly.create_performance_profile({label: matrix}, taus, reps=500)
                profiles[label], bands[label] = p[label], c[label]
            else:  # one run a game: the distribution itself, no band
                profiles[label] = np.array([(matrix > t).mean() for t in taus])
        fig, ax = plt.subplots(figsize=(7, 4))
        plot_utils.plot_performance_profiles(
            profiles,
            taus,
            performance_profile_cis=bands,
            ax=ax,
            xlabel=r"human-normalized score $\tau$",
            ylabel=r"fraction of runs with score $> \tau$",
        )
        ax.legend(fontsize=8, loc="upper right")
        ax.set_title(f"Performance profiles on {entry['label']}'s {len(games)} games", fontsize=10)
        path = out / f"profiles_{variant}.png"
        fig.savefig(path, dpi=90, bbox_inches="tight")
        plt.close(fig)
        written.append(path)
    return written


def page(result: dict, images: list[str], cost: list[str]) -> str:
    yardstick, refs = result["yardstick"], result["refs"]
    lines = [
        "# Atari 100K: benchgen's runs beside the published ones",
        "",
        "Generated by `python benchmarks/atari100k_aggregates.py` from the committed episodes in",
        "`benchmarks/results/atari100k/` (one CSV per run, `benchgen export`'s table: one row per episode, every",
        "recorded field). A run's score is the mean raw score of its 100 evaluation episodes after 100K agent",
        "steps (the `atari100k` protocol); normalized with the papers' random and human scores",
        "(`human_atari100k`: (score - random) / (human - random)). Intervals: rliable's 95% percentile",
        "stratified bootstrap (runs resampled within each game); with one run a game there is nothing to",
        "resample and the interval is the point, so the aggregates are also given with the games resampled",
        "(rliable's `task_bootstrap=True`), which says how much the choice of games moves them.",
        "",
        "Sources. Released per-run scores: Agarwal et al. 2021 (`gs://rl-benchmark-data/atari_100k`, via the",
        "mirror in eloialonso/iris at 24326aaa; `plugins/atari_saber/data/atari100k_runs_agarwal2021.csv`):",
        "DrQ(epsilon) and SPR, 100 runs a game, SimPLe 5; BBF's own release (google-research/google-research at",
        "5e786838, `bigger_better_faster/scores/RR8_BBF.csv`; `atari100k_runs_bbf2023.csv`), 52-60 runs a game,",
        "whose means are near but not exactly the paper's table. **Means only** (no per-run scores reachable):",
        "DER, OTRainbow, CURL, DrQ and SPR's own 10 seeds (SPR, Schwarzer et al. 2021, Table 1), and BBF's",
        "printed table; their aggregates below are those of the per-game means, without intervals. DER's 100",
        "runs (Agarwal et al.) were released in the same bucket, which no longer answers; no mirror was found.",
        "",
    ]
    for variant, e in result["agents"].items():
        games = e["games"]
        runs = e["runs_per_game"]
        multi = {g: n for g, n in runs.items() if n > 1}
        lines += [
            f"## {e['label']}: {len(games)} games, {sum(runs.values())} runs",
            "",
            f"Games: {', '.join(games)}. One run a game"
            + (f", except {', '.join(f'{g} ({n} seeds)' for g, n in multi.items())}" if multi else "")
            + f"; the bootstrap matrix holds {e['matrix'].shape[0]} run(s) a game (the lowest seeds"
            + (", the others in the per-game table)." if multi else ")."),
            "",
        ]
        head = ["agent", *[TITLES[m] for m in METRICS]]
        rows = [[f"**{e['label']}**", *[fmt(e["stratified"][m]) for m in METRICS]]]
        rows.append([f"{e['label']}, games resampled too", *[fmt(e["with_games"][m]) for m in METRICS]])
        for name, label in RUN_TABLES.items():
            rows.append([f"{label}, same games", *[fmt(e["published_runs"][name]["same_games"][m]) for m in METRICS]])
        for name, label in MEAN_TABLES.items():
            rows.append(
                [f"{label}, same games, means only", *[f"{e['published_means'][name][m]:.3f}" for m in METRICS]]
            )
        for name, label in RUN_TABLES.items():
            rows.append([f"{label}, all 26 games", *[fmt(e["published_runs"][name]["all_games"][m]) for m in METRICS]])
        lines += table(head, rows)
        if "one_run" in e:
            o = e["one_run"]
            lines += [
                f"One run a game of the published agent ({o['table']}: {o['draws']} draws of one of its runs on each of",
                "these games): the 95% range of its aggregates, and where benchgen's first seeds fall in it",
                "(percentile):",
                "",
            ]
            lines += table(
                ["", *[TITLES[m] for m in METRICS]],
                [
                    ["95% range", *[f"{lo:.3f}-{hi:.3f}" for lo, hi in (o["quantiles"][m] for m in METRICS)]],
                    [f"{e['label']} (percentile)", *[f"{o['ours_percentile'][m]:.0f}" for m in METRICS]],
                ],
            )
        lines += [
            f"Probability of improvement, P({e['label']} > published agent) on these games (rliable, 95% interval):",
            "",
        ]
        lines += table(
            ["published agent", "P(X > Y)"],
            [[label, fmt(e["published_runs"][name]["poi"])] for name, label in RUN_TABLES.items()],
        )
        head = ["game", "seed: score", "normalized", "random (papers')", "benchgen random", "human"]
        head += [f"percentile among {label.split(',')[0]}" for label in RUN_TABLES.values()]
        head += ["DER (SPR T1)" if variant == "der" else "DrQ(eps) mean"]
        rows = []
        for g in games:
            r, h = yardstick[g]
            per_seed = ", ".join(f"{s}: {v:,.1f}" for s, v in sorted(e["per_seed"][g].items()))
            norm = ", ".join(f"{(v - r) / (h - r):.3f}" for v in e["scores"][g])
            ours_random = result["random"].get(g, {}).get(0)
            pct = [", ".join(f"{p:.0f}" for p in e["percentiles"][name][g]) for name in RUN_TABLES]
            same = refs[AGENTS[variant][1]].scores[g]
            rows.append(
                [
                    g,
                    per_seed,
                    norm,
                    f"{r:,.1f}",
                    "-" if ours_random is None else f"{ours_random:,.1f}",
                    f"{h:,.1f}",
                    *pct,
                    f"{same:,.1f}",
                ]
            )
        lines += [
            "Per game (each seed's score; its percentile among each published agent's runs on that game, mid-rank):",
            "",
        ]
        lines += table(head, rows)
        for image in images:
            if image.endswith(f"_{variant}.png"):
                lines += [f"![{image}]({image})", ""]
    lines += cost
    lines += [
        "## Files",
        "",
        "- `scores/<agent>.json`: game -> each run's raw score (seed order), the layout rliable's and IRIS's notebooks",
        "  load (`load_json_scores`); normalize with the random and human scores above.",
        "- `scores.npz`: agent -> its (runs x games) human-normalized matrix as rliable's `get_interval_estimates`",
        "  takes it, and `<agent>.games` naming the columns (`numpy.load(path)`).",
        "- The episodes themselves: `benchmarks/results/atari100k/<variant>-<game>-seed<N>.csv`, one row per",
        "  episode with every recorded field (`benchgen export RUN_DIR` writes the same table for any run).",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--reps", type=int, default=2000, help="bootstrap replications (rliable)")
    parser.add_argument("--draws", type=int, default=2000, help="draws of one published run a game")
    parser.add_argument("--print", action="store_true", help="print the page, write nothing")
    parser.add_argument("--since", default=SINCE, help="cost summary over runs started at or after (UTC)")
    args = parser.parse_args(argv)
    result = build(args.results, args.reps, args.draws)
    labels = {variant: label for variant, (label, _) in AGENTS.items()}
    cost, _ = cost_lines(
        {v: result["episodes"][v] for v in AGENTS if v in result["episodes"]}, args.results, labels, args.since
    )
    if args.print:
        print(page(result, [], cost))
        return
    args.out.mkdir(parents=True, exist_ok=True)
    images = [p.name for p in plot(result, args.out)]
    matrices, games = {}, {}
    for variant, e in result["agents"].items():
        write_score_json(args.out / "scores" / f"benchgen_{variant}.json", e["scores"])
        matrices[f"benchgen_{variant}"], games[f"benchgen_{variant}"] = e["matrix"], e["games"]
    for name, e in result["all_games_runs"].items():
        matrices[name], games[name] = e["matrix"], e["all_games"]
    write_score_npz(args.out / "scores.npz", matrices, games)
    (args.out / "README.md").write_text(page(result, images, cost))
    print(f"wrote {args.out}/README.md, {', '.join(images)}, scores/, scores.npz")


if __name__ == "__main__":
    main()
