"""The papers' figures (issue 48, item 6): every figure of the four papers in ``shared/papers/``,
and those whose data benchgen ships, redrawn from that data.

The data are the atari_saber suite's reference tables (``benchgen references atari_saber``: SABER's
Tables 5-9, Bellemare et al. 2013's Table 4), normalized and aggregated by the suite's own scorer
(``AtariScorer``: SABER's equations 1 and 2, its classes) and by benchgen's range normalizer
(Bellemare et al.'s baseline and inter-algorithm scores). The page ``docs/papers/figures.md``
lists every figure with what it shows, and either the redrawn image or why it cannot be drawn.
Like ``results_pages.py`` it records a fingerprint of its inputs, which ``--check`` compares without
drawing.

Usage: python benchmarks/paper_figures.py [--check] [--out docs/papers]
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

import benchgen_atari_saber
from benchgen.registry import get_registry
from benchgen.scoring import CLASSES, RangeNormalizer, normalize, score_ranges
from benchgen_atari_saber.published import ALE2013_BASELINES, ALE2013_LEARNERS, inter_algorithm_scores

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from docs_plots import fingerprint, page_main, save  # noqa: E402

OUT = HERE.parent / "docs" / "papers"
DATA = Path(benchgen_atari_saber.__file__).resolve().parent / "data"
INPUTS = [
    DATA / name
    for name in (
        "world_records.csv",
        "saber_table7_200m.csv",
        "saber_table8_rainbow_iqn_5min.csv",
        "saber_table9_rainbow_iqn_30min.csv",
        "rainbow_iqn_saber_training.csv",
        "ale2013_table4_learning.csv",
    )
]
SABER = "Toromanoff, Wirbel and Moutarde 2019, *Is Deep Reinforcement Learning Really Superhuman on Atari?* (SABER)"
ALE = "Bellemare, Naddaf, Veness and Bowling 2013, *The Arcade Learning Environment*"
MACHADO = "Machado et al. 2018, *Revisiting the Arcade Learning Environment*"
NICHOL = "Nichol et al. 2018, *Gotta Learn Fast*"
SHORT = {SABER: "SABER (Toromanoff et al. 2019)", ALE: "Bellemare et al. 2013", MACHADO: "Machado et al. 2018",
         NICHOL: "Nichol et al. 2018"}  # fmt: skip
CHECKPOINTS = ("10M", "50M", "100M", "200M")
NOT_PUBLISHED = (
    "the paper prints no numbers behind it (no per-step or per-trial table), so there is nothing to draw from"
)
FEATURES = (
    "a picture of the objects DISCO finds on one screen; benchgen computes DISCO's features (the `sarsa` "
    "agent's `disco`) but has no drawing of its object classes"
)
NO_ROMS = "screenshots of the Sonic games, whose ROMs benchgen does not ship"


def plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot

    return pyplot


class Tables:
    """The suite's reference tables and scorer, read once."""

    def __init__(self):
        suite = get_registry().suite("atari_saber")
        self.refs = {t.name: t for t in suite.reference_scores()}
        self.scorer = suite.scorer()

    def scores(self, name: str, checkpoint: str | None = None) -> dict[str, float]:
        table = self.refs[name]
        return dict(table.by_checkpoint[checkpoint]) if checkpoint else dict(table.scores)

    def record_normalized(self, raw: dict[str, float]) -> dict:
        """SABER's equation 1 (world records) through the suite's scorer: median, mean, classes, per game."""
        return self.scorer.score(raw, "world_record")


# --- SABER -------------------------------------------------------------------------------------------


def saber_fig2(t: Tables, path: Path) -> None:
    records, human = t.scores("world_record"), t.scores("human")
    games = sorted(set(records) & set(human), key=lambda g: (records[g] / max(human[g], 1e-9), g))
    fig, ax = plt().subplots(figsize=(8, 0.16 * len(games) + 1))
    y = np.arange(len(games))
    ax.barh(y + 0.2, [records[g] for g in games], 0.4, label="world record (TwinGalaxies)")
    ax.barh(y - 0.2, [max(human[g], 1e-1) for g in games], 0.4, label="human beginner (Mnih et al. 2015)")
    ax.set_yticks(y, games, fontsize=6)
    ax.set_xscale("log")
    ax.set_xlabel("raw score (log scale)", fontsize=8)
    ax.legend(fontsize=7)
    ax.set_title("SABER Figure 2: world records and the beginner human baseline", fontsize=9)
    save(fig, path)


def median_curve(t: Tables, name: str) -> list[float]:
    return [100 * t.record_normalized(t.scores(name, c))["median"] for c in CHECKPOINTS]


def saber_curves(t: Tables, path: Path, view: str, number: int) -> None:
    """Figures 3 and 5: median world-record-normalized score against training frames."""
    iqn = {"5min": "rainbow_iqn_saber_5min", "saber": "rainbow_iqn_saber"}[view]
    rainbow = {"5min": "rainbow_saber_5min", "saber": "rainbow_saber"}[view]
    x = [int(c.removesuffix("M")) for c in CHECKPOINTS]
    fig, ax = plt().subplots(figsize=(6, 3.6))
    ax.plot(x, median_curve(t, iqn), "o-", label=f"Rainbow-IQN ({iqn})")
    rainbow_200m = 100 * t.record_normalized(t.scores(rainbow))["median"]
    ax.plot([200], [rainbow_200m], "s", ms=8, label=f"Rainbow, 200M only ({rainbow})")
    ax.set_xlabel("training frames (millions)", fontsize=8)
    ax.set_ylabel("median normalized score (% of record)", fontsize=8)
    ax.legend(fontsize=7)
    ax.set_title(f"SABER Figure {number}, from the published checkpoints", fontsize=9)
    save(fig, path)


def class_bars(groups: dict[str, dict[str, int]], title: str, path: Path) -> None:
    """Grouped bars: per SABER class, the number of games of each group."""
    names = [n for n, _ in CLASSES]
    fig, ax = plt().subplots(figsize=(6.5, 3.6))
    width = 0.8 / len(groups)
    x = np.arange(len(names))
    for i, (label, classes) in enumerate(groups.items()):
        ax.bar(x + i * width, [classes.get(n, 0) for n in names], width, label=label)
    ax.set_xticks(x + width * (len(groups) - 1) / 2, names, fontsize=8)
    ax.set_ylabel("games", fontsize=8)
    ax.legend(fontsize=7)
    ax.set_title(title, fontsize=9)
    save(fig, path)


def saber_fig4(t: Tables, path: Path) -> None:
    groups = {label: t.record_normalized(t.scores(name))["classes"]
              for label, name in (("Rainbow", "rainbow_saber"), ("Rainbow-IQN", "rainbow_iqn_saber"))}  # fmt: skip
    class_bars(groups, "SABER Figure 4: games per class at 200M frames (SABER conditions)", path)


def saber_fig9(t: Tables, path: Path) -> None:
    views = (("5 minutes", "rainbow_iqn_saber_5min"), ("30 minutes", "rainbow_iqn_saber_30min"),
             ("SABER (up to 100 hours)", "rainbow_iqn_saber"))  # fmt: skip
    groups = {label: t.record_normalized(t.scores(name))["classes"] for label, name in views}
    class_bars(groups, "SABER Figure 9: Rainbow-IQN's classes against evaluation time (200M frames)", path)


def per_game_bars(
    values: dict[str, list[float]], labels: list[str], xlabel: str, title: str, path: Path, scale: str = "symlog"
) -> None:
    games = sorted(values, key=lambda g: (values[g][-1], g))  # ties by name: the same order every run
    fig, ax = plt().subplots(figsize=(8, 0.16 * len(games) + 1))
    y = np.arange(len(games))
    width = 0.8 / len(labels)
    for i, label in enumerate(labels):
        ax.barh(y + (i - (len(labels) - 1) / 2) * width, [values[g][i] for g in games], width, label=label)
    ax.set_yticks(y, games, fontsize=6)
    if scale == "symlog":
        ax.set_xscale("symlog", linthresh=1)
    else:
        ax.axvline(100, color="gray", lw=0.8, ls="--")
    ax.set_xlabel(xlabel, fontsize=8)
    ax.legend(fontsize=7)
    ax.set_title(title, fontsize=9)
    save(fig, path)


def saber_fig10(t: Tables, path: Path) -> None:
    rainbow = t.record_normalized(t.scores("rainbow_saber"))["per_task"]
    iqn = t.record_normalized(t.scores("rainbow_iqn_saber"))["per_task"]
    games = set(rainbow) & set(iqn)
    values = {g: [100 * rainbow[g], 100 * iqn[g]] for g in games if math.isfinite(rainbow[g] + iqn[g])}
    per_game_bars(values, ["Rainbow", "Rainbow-IQN"], "normalized score (% of record, symmetric log scale)",
                  "SABER Figure 10: per game, SABER conditions, 200M frames", path)  # fmt: skip


def saber_fig11(t: Tables, path: Path) -> None:
    rainbow, iqn = t.scores("rainbow_saber"), t.scores("rainbow_iqn_saber")
    random = t.scorer.random_scores
    values = {}
    for g in set(rainbow) & set(iqn) & set(random):
        if math.isfinite(rainbow[g]) and math.isfinite(iqn[g]) and rainbow[g] != random[g]:
            values[g] = [100 * normalize(iqn[g], random[g], rainbow[g])]
    per_game_bars(values, ["Rainbow-IQN"], "(IQN - random) / |Rainbow - random| (%; 100: Rainbow's score)",
                  "SABER Figure 11: Rainbow-IQN with Rainbow as the reference (eq. 2)", path, "linear")  # fmt: skip


# --- Bellemare et al. 2013 ---------------------------------------------------------------------------


def ale_normalized(t: Tables) -> dict[str, dict[str, dict[str, float]]]:
    """normalization -> learner -> game -> score: baseline (the range of Table 4's Random, Const and
    Perturb columns) and inter-algorithm (the range of the five learners)."""
    learners = {c: t.scores(f"ale2013_{c}") for c in ALE2013_LEARNERS}
    baselines = [t.scores(f"ale2013_{c}") for c in ALE2013_BASELINES]
    normalizer = RangeNormalizer(score_ranges(baselines), "baseline")
    return {
        "baseline": {c: normalizer.row(scores) for c, scores in learners.items()},
        "inter-algorithm": inter_algorithm_scores(learners),
    }


def ale_fig3(t: Tables, path: Path) -> None:
    norm = ale_normalized(t)
    fig, axes = plt().subplots(2, 2, figsize=(7, 5))
    for row, (kind, per_learner) in enumerate(norm.items()):
        for col, (stat, fn) in enumerate((("average", np.mean), ("median", np.median))):
            ax = axes[row][col]
            names = list(per_learner)
            ax.bar(
                names, [fn(list(per_learner[n].values())) for n in names], color=[f"C{i}" for i in range(len(names))]
            )
            ax.set_title(f"{stat} {kind} score", fontsize=9)
            ax.tick_params(labelsize=7)
    fig.suptitle("Bellemare et al. 2013, Figure 3, from Table 4", fontsize=9)
    save(fig, path)


def ale_fig4(t: Tables, path: Path) -> None:
    norm = ale_normalized(t)
    fig, axes = plt().subplots(1, 2, figsize=(8, 3.4))
    for ax, (kind, per_learner) in zip(axes, norm.items()):
        for name, scores in per_learner.items():
            values = np.sort(np.array(list(scores.values())))[::-1]
            ax.plot(values, np.arange(1, len(values) + 1) / len(values), drawstyle="steps-post", label=name)
        ax.set_xlabel(f"{kind} score", fontsize=8)
        ax.set_ylabel("fraction of games at or above", fontsize=8)
        if kind == "baseline":
            ax.set_xscale("symlog", linthresh=1)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=7)
    fig.suptitle("Bellemare et al. 2013, Figure 4: score distributions, from Table 4", fontsize=9)
    save(fig, path)


# --- game screens ------------------------------------------------------------------------------------

#: agent steps of no-op played from the reset before a screen is taken (the games have begun by then)
SCREEN_STEPS = 120


def game_screens(tasks: list[str], path: Path, seed: int = 0) -> None:
    """The tasks' full-resolution screens side by side, each from benchgen's emulator for the suite
    (``make_video_env``, ``screens``) after :data:`SCREEN_STEPS` no-op steps from a seeded reset,
    scaled 2x without smoothing."""
    from PIL import Image

    suite = get_registry().suite("atari_saber")
    shots = []
    for task in tasks:
        env = suite.make_video_env(task, seed)
        try:
            env.reset(seed=seed)
            for _ in range(SCREEN_STEPS):
                env.step(np.zeros(1, dtype=np.int64))
            shots.append(Image.fromarray(suite.screens(env)[0]))
        finally:
            env.close()
    gap = 12
    out = Image.new(
        "RGB", (sum(s.width for s in shots) + gap * (len(shots) - 1), max(s.height for s in shots)), "white"
    )
    x = 0
    for shot in shots:
        out.paste(shot, (x, 0))
        x += shot.width + gap
    out.resize((out.width * 2, out.height * 2), Image.NEAREST).save(path, format="PNG")


#: the SECAM console's eight colours, by luminance bits (black, blue, red, magenta, green, cyan,
#: yellow, white), as RGB
SECAM_RGB = np.array(
    [[0, 0, 0], [33, 33, 255], [240, 60, 121], [255, 80, 255], [127, 255, 0], [127, 255, 255], [255, 255, 63],
     [255, 255, 255]], dtype=np.uint8
)  # fmt: skip
#: no-op steps whose screens make the background histogram of Figure 5 (the paper: 18,000 screens)
BACKGROUND_STEPS = 300


def ale_fig5(t: Tables, path: Path, task: str = "freeway", seed: int = 0, action: int = 2) -> None:
    """Left: a Freeway screen in SECAM colours; right: its BASS encoding, each 10 x 15 tile showing
    the SECAM colours present in its foreground as stripes, computed by benchgen's own BASS
    features (``benchgen_agents.ale_features``) on the emulator's palette screen. The chicken walks
    up (``action`` 2, UP in the full action set) so that the background histogram does not take it
    for background."""
    from PIL import Image

    from benchgen_agents.ale_features.basic import SECAM_COLOURS, BasicFeatures, secam_colour
    from benchgen_agents.ale_features.common import GRID_COLUMNS, GRID_ROWS, BackgroundHistogram

    suite = get_registry().suite("atari_saber").with_capabilities(["palette_screen"])
    env = suite.make_env([task], seed, mode="eval")
    try:
        env.reset(seed=seed)
        emulators, histogram = env.emulators(), BackgroundHistogram()
        for _ in range(BACKGROUND_STEPS):
            env.step(np.full(1, action, dtype=np.int64))
            histogram.add(emulators.palette_screen(0))
        screen = emulators.palette_screen(0)
    finally:
        env.close()
    active = BasicFeatures(SECAM_COLOURS)(screen, histogram.background())  # BASS's single-tile features
    height, width = screen.shape
    tile_h, tile_w = height // GRID_ROWS, width // GRID_COLUMNS
    encoding = np.zeros((height, width, 3), dtype=np.uint8) + 40
    tiles: dict[int, list[int]] = {}
    for feature in active.tolist():
        tiles.setdefault(feature // SECAM_COLOURS, []).append(feature % SECAM_COLOURS)
    for tile, colours in tiles.items():
        y, x = (tile // GRID_COLUMNS) * tile_h, (tile % GRID_COLUMNS) * tile_w
        for k, colour in enumerate(colours):
            left, right = x + k * tile_w // len(colours), x + (k + 1) * tile_w // len(colours)
            encoding[y : y + tile_h, left:right] = SECAM_RGB[colour]
    gap = np.full((height, 12, 3), 255, dtype=np.uint8)
    both = np.concatenate([SECAM_RGB[secam_colour(screen)], gap, encoding], axis=1)
    image = Image.fromarray(both)
    image.resize((image.width * 2, image.height * 2), Image.NEAREST).save(path, format="PNG")


def screens_of(*tasks: str) -> tuple:
    """A figure of game screens: (image drawing function, data)."""
    return (
        lambda t, p: game_screens(list(tasks), p),
        f"benchgen's emulator ({', '.join(f'`{x}`' for x in tasks)}; seed 0, {SCREEN_STEPS} no-op steps after "
        "the reset), not the paper's own frame",
    )


# --- the catalogue -------------------------------------------------------------------------------------

PARTIAL_RAINBOW = "Rainbow's own curve is not published (Table 7 has its 200M scores only), so it is one point"
#: paper -> [(figure, what it shows, where in the paper, (image, drawing function, data) or the reason it is not drawn)]
FIGURES = {
    SABER: [
        (1, "a screen of Space Invaders", "section 1", ("saber_fig1.png", *screens_of("space_invaders"))),
        (2, "world records beside the beginner human scores, per game, log scale", "section 2.2",
         ("saber_fig2.png", saber_fig2, "`world_record` and `human` (SABER Table 5)")),
        (3, "median record-normalized score of Rainbow and Rainbow-IQN against training frames, SABER conditions",
         "section 5.2", ("saber_fig3.png", lambda t, p: saber_curves(t, p, "saber", 3),
                         f"`rainbow_iqn_saber` at 10M-200M (Table 6), `rainbow_saber` (Table 7); {PARTIAL_RAINBOW}")),
        (4, "games per class (relative to the records) of Rainbow and Rainbow-IQN at 200M frames", "section 5.2",
         ("saber_fig4.png", saber_fig4, "`rainbow_saber` (Table 7), `rainbow_iqn_saber` (Table 6), `world_record`")),
        (5, "median record-normalized score of DQN, Rainbow and Rainbow-IQN against frames, 5-minute evaluation",
         "section 5.2", ("saber_fig5.png", lambda t, p: saber_curves(t, p, "5min", 5),
                         "`rainbow_iqn_saber_5min` at 10M-200M (Table 8), `rainbow_saber_5min` (Table 7); "
                         f"DQN's curve is not published and is left out; {PARTIAL_RAINBOW}")),
        (6, "Figure 3 on the 14 games run with 5 seeds, averaged over the seeds", "section 5.3",
         "the per-seed scores are not published (Tables 7-9 give the mean and standard deviation over seeds)"),
        (7, "classes of the original Rainbow against Rainbow trained with Machado et al.'s guidelines", "appendix D.1",
         "the original Rainbow's per-game scores (Hessel et al. 2018) are not in SABER's tables; benchgen ships "
         "only its printed aggregates (`rainbow_hessel2018`)"),
        (8, "the same comparison per game", "appendix D.1", "as Figure 7: the original Rainbow's per-game scores are not shipped"),
        (9, "Rainbow-IQN's classes at 200M frames for evaluations of 5 minutes, 30 minutes and SABER's limit",
         "appendix D.2", ("saber_fig9.png", saber_fig9,
                      "`rainbow_iqn_saber_5min` (Table 8), `rainbow_iqn_saber_30min` (Table 9), `rainbow_iqn_saber`")),
        (10, "per game, Rainbow and Rainbow-IQN under SABER conditions at 200M frames", "appendix D.2",
         ("saber_fig10.png", saber_fig10, "`rainbow_saber` (Table 7), `rainbow_iqn_saber` (Table 6), `world_record`")),
        (11, "per game, Rainbow-IQN normalized with Rainbow as the reference (SABER's equation 2)", "appendix D.2",
         ("saber_fig11.png", saber_fig11, "`rainbow_saber` (Table 7), `rainbow_iqn_saber` (Table 6), random scores (Table 5)")),
    ],
    ALE: [
        (1, "screens of Pitfall! and Space Invaders", "section 2.1",
         ("ale_fig1.png", *screens_of("pitfall", "space_invaders"))),
        (2, "random-normalized, baseline and inter-algorithm scores of BASS and RAM on three games", "section 4.1",
         "the text does not name the three games, and the baseline range spans all 37 baseline agents, of which "
         "Table 4 prints only Random and the best Const and Perturb"),
        (3, "average and median baseline and inter-algorithm scores of the five learning agents", "section 4.2",
         ("ale_fig3.png", ale_fig3, "`ale2013_basic` ... `ale2013_ram`, `ale2013_random`, `_const`, `_perturb` (Table 4); "
          "the baseline range is that of the three printed baseline columns, whose top is the paper's (Const is "
          "the best single action) but whose bottom may be above the worst of the 37 agents")),
        (4, "score distributions (fraction of games at or above each score) of the five learning agents",
         "section 4.2.3", ("ale_fig4.png", ale_fig4, "as Figure 3, from Table 4, with the same caveat on the baseline range")),
        (5, "Freeway in SECAM colours and its BASS encoding", "appendix A.1",
         ("ale_fig5.png", ale_fig5, f"benchgen's emulator (`freeway`, seed 0, the palette screen after "
          f"{BACKGROUND_STEPS} steps walking up) and benchgen's BASS features (`benchgen_agents.ale_features`), the "
          f"background from those {BACKGROUND_STEPS} screens' histogram (the paper's: 18,000 screens); each tile "
          "shows, as stripes, the SECAM colours of its foreground")),
        (6, "Freeway and Seaquest, whose objects fall into a few classes", "appendix A.3",
         ("ale_fig6.png", *screens_of("freeway", "seaquest"))),
        (7, "Seaquest and the objects DISCO detects", "appendix A.3", FEATURES),
    ],
    MACHADO: [
        (1, "learning curves of DQN and Sarsa(lambda) on Centipede, every trial and their mean", "section 3",
         f"{NOT_PUBLISHED}: Table 1 holds only the final mean and deviation over trials"),
        (2, "two game modes of Freeway (the caption does not say which; here the default, mode 0, and mode 1)",
         "section 5", ("machado_fig2.png", *screens_of("freeway", "freeway:m1d0"))),
    ],
    NICHOL: [
        (1, "three situations from Sonic 3 & Knuckles", "section 3.2", NO_ROMS),
        (2, "a path through Labyrinth Zone, Act 2, with the reward along it", "section 3.8", NO_ROMS),
        (3, "mean learning curves of every baseline over the test levels", "section 4",
         f"{NOT_PUBLISHED}: Table 1 holds the final aggregates only; `benchgen report` draws this kind of figure "
         "for a run (`benchgen.results.figures.instantaneous_mean_curves`)"),
        (4, "zero-shot and fine-tuning scores during joint PPO training", "section 4.5",
         f"{NOT_PUBLISHED}; `benchgen report` draws it for a joint run (`benchgen.results.figures.plot_transfer`)"),
        (5, "JERK's learning curves on the test levels, one per seed (three seeds)", "appendix B", NOT_PUBLISHED),
        (6, "PPO's learning curves on the test levels, one per seed (three seeds)", "appendix B", NOT_PUBLISHED),
        (7, "Rainbow's learning curves on the test levels, one per seed (three seeds)", "appendix B", NOT_PUBLISHED),
        (8, "joint Rainbow's learning curves on the test levels, one per seed (three seeds)", "appendix B", NOT_PUBLISHED),
        (9, "joint PPO's learning curves on the test levels, one per seed (three seeds)", "appendix B", NOT_PUBLISHED),
    ],
}  # fmt: skip
SCRIPT = "python benchmarks/paper_figures.py"


def build() -> dict[str, str]:
    """The page's markdown (name -> text); the figures are listed in :data:`FIGURES`."""
    lines = [
        "# The papers' figures",
        "",
        f"Generated by `{SCRIPT}` (inputs' SHA-256: "
        f"`{fingerprint(INPUTS)[:16]}`; `--check` tells when the "
        "page is stale). Every figure of the four papers benchgen is built from, what it shows (in our words), "
        "and either the figure redrawn from the tables benchgen ships (`benchgen references atari_saber`), "
        "normalized and aggregated by the suite's own scorer, or why it cannot be drawn. The redrawn figures "
        "show the papers' published numbers, not benchgen's runs; those are on the "
        "[results pages](../results/index.md).",
        "",
    ]
    drawn = []
    for paper, figures in FIGURES.items():
        lines += [f"## {paper}", "", "| figure | what it shows | where | here |", "|---|---|---|---|"]
        for number, what, where, how in figures:
            if isinstance(how, tuple):
                image, _, data = how
                anchor = image.removesuffix(".png")
                lines.append(f"| {number} | {what} | {where} | redrawn: [{image}](#{anchor}) |")
                drawn.append((paper, number, what, where, image, data))
            else:
                lines.append(f"| {number} | {what} | {where} | not drawn: {how} |")
        lines.append("")
    lines += ["## The redrawn figures", ""]
    for paper, number, what, where, image, data in drawn:
        short = SHORT[paper]
        lines += [
            f"### {image.removesuffix('.png')}",
            "",
            f"{short}, Figure {number} ({where}): {what}. Data: {data}. Command: `{SCRIPT}`.",
            "",
            f"![{short}, Figure {number}]({image})",
            "",
        ]
    return {"figures.md": "\n".join(lines).rstrip() + "\n"}


def drawings() -> dict[str, object]:
    return {how[0]: how[1] for figures in FIGURES.values() for *_, how in figures if isinstance(how, tuple)}


def texts(pages: dict[str, str], out: Path) -> dict[Path, str]:
    return {out / name: text for name, text in pages.items()}


def check(out: Path) -> list[str]:
    """What is stale: the page if its text differs from a rebuild, figures that are missing."""
    problems = [f"{path}: stale (regenerate)" for path, text in texts(build(), out).items()
                if not path.is_file() or path.read_text() != text]  # fmt: skip
    return problems + [f"{out / image}: missing" for image in drawings() if not (out / image).is_file()]


def write(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for path, text in texts(build(), out).items():
        path.write_text(text)
    tables = Tables()
    for image, draw in drawings().items():
        draw(tables, out / image)
        print(f"{out / image}: {(out / image).stat().st_size // 1024} KB")


def main(argv: list[str] | None = None) -> int:
    return page_main(__doc__.split("\n\n")[0], OUT, check, write, argv)


if __name__ == "__main__":
    sys.exit(main())
