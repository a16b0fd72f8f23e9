"""The suite kit: every guarantee a benchgen suite meets, as plain functions (no pytest needed).

Who uses it: a suite plugin's tests, through :class:`SuiteConformance
<benchgen.testing.conformance.SuiteConformance>`, which runs these checks as pytest tests. (An
agent plugin's tests use the agent kit, :mod:`benchgen.testing.agent_checks`.) Read top to
bottom: :data:`CHECKS` (what is guaranteed, in the order the plugin author guide lists it), the
suite object's checks (attributes, protocol, splits, names), the scorer, and a whole run. The
checks of the vector env, driven as an agent drives it, are in
:mod:`benchgen.testing.suite_envs`; what both kits share is in :mod:`benchgen.testing.kit`. All
are importable from here.

Each ``check_*`` function raises :class:`ConformanceError` (an ``AssertionError``) with a message
that names the suite, says what is wrong and how to fix it. Environments are driven with
uniformly random actions from a seeded generator, for a few dozen steps (``check_steps``) or
until an episode ends (``max_episode_steps``), so the whole kit runs in seconds on a scripted
suite and in well under a minute on an emulator.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import re
import tempfile
from pathlib import Path
from typing import Any

from benchgen.errors import PluginError, UsageError
from benchgen.registry import Registry
from benchgen.scoring import INFINITE_CAP
from benchgen.suite import Suite
from benchgen.testing.kit import CORE_EPISODE_COLUMNS, ConformanceError, build_registry, use_registry
from benchgen.testing.kit import suite_failure as _fail
from benchgen.testing.suite_envs import (
    FORBIDDEN_INFO_KEYS,
    SingleTaskEnv,
    check_episode_ends,
    check_gymnasium_env_checker,
    check_reproducible,
    check_vector_env,
)

#: the suite kit's names, here for ``from benchgen.testing.checks import ...``
__all__ = [
    "CHECKS",
    "CORE_EPISODE_COLUMNS",
    "FORBIDDEN_INFO_KEYS",
    "ConformanceError",
    "SingleTaskEnv",
    "build_registry",
    "check_bad_names",
    "check_episode_ends",
    "check_gymnasium_env_checker",
    "check_protocol",
    "check_reproducible",
    "check_scorer",
    "check_smoke_run",
    "check_splits",
    "check_suite_attributes",
    "check_vector_env",
    "use_registry",
]

#: what every check guarantees, in the order the guide lists them: (test name, what it checks)
CHECKS: tuple[tuple[str, str], ...] = (
    (
        "test_suite_attributes",
        "the suite's name is CLI-friendly; `budget_unit` is frames or timesteps; budgets, "
        "checkpoints and `default_num_envs` are positive and consistent; `end_reasons` is declared; "
        "`episode_fields` are identifiers that do not clash with the core's columns; `tasks()` is a "
        "stable, non-empty list of unique names without commas or spaces; `default_split` exists.",
    ),
    (
        "test_protocol",
        "`protocol()` is a non-empty dict with snake_case keys, holds `version` equal to "
        "`Suite.version`, is the same on every call, and survives a JSON round trip unchanged (what "
        "a run saves is what a later run compares against).",
    ),
    (
        "test_splits",
        "the suite has at least one split; every split names only existing tasks, has a non-empty "
        "train list, lists no task twice, and its train and test lists are disjoint.",
    ),
    (
        "test_unknown_names_give_the_standard_error",
        'an unknown suite, task or split name raises `UsageError` with "did you mean"; `benchgen '
        "run SUITE AGENT --tasks BAD` exits 2 with the one-line `benchgen: error: unknown task ...` "
        "and writes nothing.",
    ),
    (
        "test_vector_env_contract",
        "`make_env(tasks, seed)` with two sub-environments of one task: a `gymnasium.vector.VectorEnv` "
        "with `pop_episode_ends()`, `frames_per_step` equal to the suite's, `tasks` as asked, uint8 "
        "observations, a `Discrete` action space, batched spaces that match, "
        "`metadata['autoreset_mode']` SAME_STEP; `reset` and `step` return arrays of the right shape "
        "and dtype (rewards finite floats, terminated/truncated bool); `info` never holds a forbidden "
        "key (`lives`, `ram`), also not inside `final_info`.",
    ),
    (
        "test_joint_env",
        "the same contract with sub-environments playing different tasks (a joint run), and the "
        "same observation and action spaces for every task.",
    ),
    (
        "test_gymnasium_env_checker",
        "for every task (or `env_check_tasks`): `gymnasium.utils.env_checker.check_env` passes on the "
        "single-task view of the vector env (`SingleTaskEnv`: sub-environment 0, `final_obs` at an "
        "episode's end), with no warning from gymnasium, plus on any single env the test class "
        "returns from `single_envs(task)`.",
    ),
    (
        "test_episode_ends",
        "random play on `episode_tasks` finishes an episode within `max_episode_steps`; after every "
        "step `pop_episode_ends()` returns exactly one `EpisodeEnd` per finished sub-environment, "
        "with the right `env_index` and `task`, a raw score that is a number (equal to the sum of the "
        "episode's rewards unless `score_is_reward_sum = False`), `0 < length_frames <= steps * "
        "frames_per_step`, an `end_reason` from `end_reasons`, `extras` keys equal to "
        "`episode_fields`; and `info['final_obs']` holds the last observation of each finished "
        "sub-environment.",
    ),
    (
        "test_seeding_is_reproducible",
        "two envs made with the same seed and reset with the same seed give identical observations, "
        "rewards, ends and `EpisodeEnd`s under the same actions; `reset(seed=s)` on a used env "
        "replays the same trajectory; and the seed given to `make_env` alone (unseeded `reset()`) "
        "makes runs reproducible.",
    ),
    (
        "test_scorer",
        "random and reference tables name only existing tasks; `task_score` gives NaN for no "
        "episodes and inf when an episode was infinite. A suite with random scores (normalized "
        "scoring): the default baseline resolves; normalization maps the random score to 0 and the "
        "reference to 1; an infinite raw score stays infinite, counts as 200% in the capped mean and "
        "as superhuman; tasks missing from the input are simply absent, tasks without a random or "
        "reference score are reported raw under `unnormalized` and left out of the aggregates. A "
        "suite without random scores is scored raw: `score` must still accept any subset of tasks "
        "and infinite scores.",
    ),
    (
        "test_runs_end_to_end",
        "`benchgen run SUITE random` (in process, one task, a tiny budget) finishes, spends its budget, "
        "records valid episodes and writes its report.",
    ),
)

# -- the suite object --------------------------------------------------------------------------
_NAME_RE = re.compile(r"[a-z0-9][a-z0-9_.-]*")
_KEY_RE = re.compile(r"[a-z][a-z0-9_]*")


def check_suite_attributes(suite: Suite, registry: Registry | None = None) -> None:
    """Class attributes and ``tasks()`` (see :data:`CHECKS`)."""
    if not isinstance(suite, Suite):
        raise _fail(str(getattr(suite, "name", suite)), "is not a benchgen.suite.Suite instance")
    if not isinstance(suite.name, str) or not _NAME_RE.fullmatch(suite.name):
        raise _fail(
            repr(suite.name),
            "the name must be lowercase letters, digits, '_', '.' or '-' (it is typed on the command line)",
        )
    if not suite.description:
        raise _fail(suite, "set `description` (one line, shown by `benchgen list`)")
    if suite.budget_unit not in ("frames", "timesteps"):
        raise _fail(suite, f"budget_unit is '{suite.budget_unit}'; use 'frames' or 'timesteps'")
    for attr in ("frames_per_step", "default_budget", "default_num_envs"):
        value = getattr(suite, attr)
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise _fail(suite, f"{attr} must be a positive integer, got {value!r}")
    cps = tuple(suite.default_checkpoints)
    if any(not isinstance(c, int) or c <= 0 or c > suite.default_budget for c in cps) or list(cps) != sorted(set(cps)):
        raise _fail(
            suite, f"default_checkpoints {cps} must be increasing positive integers no larger than default_budget"
        )
    if not suite.end_reasons or not all(isinstance(r, str) and r for r in suite.end_reasons):
        raise _fail(
            suite, "declare `end_reasons`, the words EpisodeEnd.end_reason may take (e.g. game_over, max_length)"
        )
    for f in suite.episode_fields:
        if not isinstance(f, str) or not f.isidentifier():
            raise _fail(suite, f"episode field {f!r} is not an identifier (it becomes a column)")
        if f in CORE_EPISODE_COLUMNS:
            raise _fail(suite, f"episode field '{f}' clashes with a column the core stores; rename it")
    tasks = suite.tasks()
    if not isinstance(tasks, list) or not tasks:
        raise _fail(suite, "tasks() must return a non-empty list of task names")
    if len(set(tasks)) != len(tasks):
        dups = sorted({t for t in tasks if tasks.count(t) > 1})
        raise _fail(suite, f"tasks() lists {dups[:5]} more than once")
    for t in tasks:
        if not isinstance(t, str) or not t or "," in t or any(c.isspace() for c in t):
            raise _fail(
                suite, f"task name {t!r} must be a non-empty string without commas or spaces (--tasks splits on commas)"
            )
    if suite.tasks() != tasks:
        raise _fail(suite, "tasks() returns a different list on a second call; make it deterministic")
    if suite.default_split is not None and registry is not None:
        splits = _splits(registry, suite)
        if suite.default_split not in splits:
            raise _fail(suite, f"default_split '{suite.default_split}' is not one of its splits {sorted(splits)}")


def check_protocol(suite: Suite) -> None:
    """``protocol()``: see :data:`CHECKS`."""
    proto = suite.protocol()
    if not isinstance(proto, dict) or not proto:
        raise _fail(suite, "protocol() must return a non-empty dict of the parameters that make runs comparable")
    for key in proto:
        if not isinstance(key, str) or not _KEY_RE.fullmatch(key):
            raise _fail(suite, f"protocol key {key!r} must be snake_case (e.g. 'sticky_action_probability')")
    if "version" not in proto:
        raise _fail(suite, "protocol() must include 'version' (Suite.version), bumped whenever the protocol changes")
    if str(proto["version"]) != str(suite.version):
        raise _fail(suite, f"protocol()['version'] is {proto['version']!r} but Suite.version is {suite.version!r}")
    if suite.protocol() != proto:
        raise _fail(suite, "protocol() differs between two calls; it must not depend on time or state")
    try:
        text = json.dumps(proto, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise _fail(suite, f"protocol() is not plain JSON ({exc}); use str, int, float, bool, None, lists and dicts")
    if json.loads(text) != proto:
        raise _fail(
            suite, "protocol() changes in a JSON round trip (tuples? non-str dict keys?); use lists and str keys"
        )


def _splits(registry: Registry, suite: Suite) -> dict:
    try:
        return registry.splits(suite)
    except PluginError as exc:
        raise _fail(suite, str(exc)) from None


def check_splits(registry: Registry, suite: Suite) -> None:
    """Splits: see :data:`CHECKS`."""
    splits = _splits(registry, suite)
    if not splits:
        raise _fail(
            suite,
            "no split is declared; ship a splits/NAME.yaml next to the suite's module (Suite.splits) "
            "or return a Split from benchgen_splits (joint agents and reports need one)",
        )
    known = set(suite.tasks())
    for name, split in splits.items():
        where = f"split '{name}'"
        if split.suite not in ("", suite.name):
            raise _fail(suite, f"{where} says it is for suite '{split.suite}'")
        if not split.name:
            raise _fail(suite, f"{where} has an empty name")
        if not split.train:
            raise _fail(suite, f"{where} has no train tasks")
        for part in ("train", "test"):
            items = list(getattr(split, part))
            if len(set(items)) != len(items):
                raise _fail(suite, f"{where} lists a {part} task twice")
            unknown = [t for t in items if t not in known]
            if unknown:
                raise _fail(suite, f"{where} names unknown {part} tasks {unknown[:5]}")
        overlap = set(split.train) & set(split.test)
        if overlap:
            raise _fail(suite, f"{where} has {sorted(overlap)[:5]} in both train and test; a split must be disjoint")


def check_bad_names(registry: Registry, suite: Suite, agent: str | None = "") -> None:
    """Unknown names: see :data:`CHECKS`. ``agent`` runs the unknown task ("": the installed agent
    of random play, ``Registry.random_play_agent``; None: no run)."""
    if agent == "":
        agent = registry.random_play_agent()
    task = suite.tasks()[0]
    cases = [
        (lambda: registry.suite(suite.name + "x"), ["unknown suite", f"did you mean '{suite.name}'"]),
        (
            lambda: registry.check_tasks(suite, [task + "x"]),
            [f"unknown task of suite '{suite.name}' '{task}x'", "did you mean '"],
        ),
        (
            lambda: registry.split(suite, "no_such_split_zz"),
            [f"unknown split of suite '{suite.name}' 'no_such_split_zz'"],
        ),
    ]
    for call, fragments in cases:
        try:
            call()
        except UsageError as exc:
            msg = str(exc)
            if "\n" in msg or not all(f in msg for f in fragments):
                raise _fail(suite, f"expected a one-line error containing {fragments}, got {msg!r}")
        else:
            raise _fail(suite, f"an unknown name was accepted (expected an error containing {fragments})")
    if agent is None or agent not in registry.agents:
        return
    from benchgen.cli import main

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        err = io.StringIO()
        with use_registry(registry), contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(["run", suite.name, agent, "--tasks", task + "x", "--out", str(out), "--no-progress"])
        lines = [line for line in err.getvalue().splitlines() if line.strip()]
        if code != 2 or len(lines) != 1 or not lines[0].startswith("benchgen: error: unknown task"):
            raise _fail(
                suite,
                f"`benchgen run {suite.name} {agent} --tasks {task}x` should exit 2 with one line "
                f"'benchgen: error: unknown task ...', got exit {code} and {err.getvalue()!r}",
            )
        if out.exists():
            raise _fail(suite, "a run with an unknown task wrote a run directory")


# -- scoring -----------------------------------------------------------------------------------
def check_scorer(registry: Registry, suite: Suite) -> None:
    """The scorer (see :data:`CHECKS`)."""
    scorer = registry.scorer(suite)
    known = set(suite.tasks())
    stale = [t for t in scorer.random_scores if t not in known]
    if stale:
        raise _fail(suite, f"the scorer's random scores name unknown tasks {stale[:5]}")
    tables = {**scorer.references, **registry.reference_scores(suite)}
    for name, table in tables.items():
        stale = [t for t in table.scores if t not in known]
        for by in table.by_checkpoint.values():
            stale += [t for t in by if t not in known]
        if stale:
            raise _fail(suite, f"reference table '{name}' names unknown tasks {stale[:5]}")

    # task_score: no episodes -> NaN, an infinite episode -> inf, finite episodes -> finite
    if not math.isnan(scorer.task_score([])):
        raise _fail(suite, "Scorer.task_score([]) must be NaN (a task without finished episodes has no score)")
    if scorer.task_score([1.0, math.inf, 2.0]) != math.inf:
        raise _fail(suite, "Scorer.task_score must be inf when an episode reached infinite gameplay")
    if not math.isfinite(scorer.task_score([1.0, 2.0, 3.0])):
        raise _fail(suite, "Scorer.task_score of finite episodes must be finite")

    task0 = suite.tasks()[0]

    def score(raw):
        try:
            out = scorer.score(raw)
        except Exception as exc:  # noqa: BLE001 - reported with the input that broke it
            raise _fail(suite, f"Scorer.score({raw}) raised {type(exc).__name__}: {exc}") from None
        if not isinstance(out, dict):
            raise _fail(suite, f"Scorer.score must return a dict, got {type(out).__name__}")
        return out

    if not scorer.random_scores:
        if registry.declared_scorer(suite) is None:
            return  # no scorer of the suite's or a plugin's: the core's fallback scores it
        # Scored raw (no per-task normalization, like Sonic): subsets and infinities must not break it.
        score({task0: 1.0})
        score({task0: math.inf})
        return
    try:
        ref = scorer.reference(None)
    except UsageError as exc:
        named = f" '{scorer.default_baseline}'" if scorer.default_baseline is not None else ""
        raise _fail(suite, f"the scorer's default baseline{named} does not resolve: {exc}") from None
    normalizable = [
        t
        for t in suite.tasks()
        if t in scorer.random_scores
        and t in ref.scores
        and math.isfinite(ref.scores[t])
        and math.isfinite(scorer.random_scores[t])
        and ref.scores[t] != scorer.random_scores[t]
    ]
    if not normalizable:
        raise _fail(
            suite, f"no task has both a random score and a '{ref.name}' score; the scorer can normalize nothing"
        )
    task = normalizable[0]
    r, w = scorer.random_scores[task], ref.scores[task]
    out = score({task: r})
    if abs(out["per_task"][task]) > 1e-9:
        raise _fail(suite, f"the random score of '{task}' normalizes to {out['per_task'][task]}, expected 0")
    out = score({task: w})
    if abs(out["per_task"][task] - 1.0) > 1e-9:
        raise _fail(suite, f"the '{ref.name}' score of '{task}' normalizes to {out['per_task'][task]}, expected 1")
    out = score({task: math.inf})
    if out["per_task"].get(task) != math.inf or out["mean"] != INFINITE_CAP or out["classes"].get("superhuman") != 1:
        raise _fail(
            suite,
            f"an infinite score of '{task}' must stay inf, count {INFINITE_CAP:.0%} in the mean and as "
            f"superhuman; got {out['per_task'].get(task)}, mean {out['mean']}, classes {out['classes']}",
        )
    out = score({})
    if out["n_tasks"] != 0:
        raise _fail(suite, "scoring no tasks must aggregate over no tasks")
    raw = {task: r}
    missing = [t for t in suite.tasks() if t not in normalizable]
    if missing:
        raw[missing[0]] = 1.0
    out = score(raw)
    if out["n_tasks"] != 1 or task not in out["per_task"]:
        raise _fail(
            suite, f"scoring a subset of tasks must aggregate over exactly those that normalize; got {out['n_tasks']}"
        )
    if missing and (missing[0] in out["per_task"] or out["unnormalized"].get(missing[0]) != 1.0):
        raise _fail(
            suite,
            f"task '{missing[0]}' has no random or reference score: it must be reported raw under "
            "'unnormalized' and left out of the aggregates",
        )


# -- a whole run -------------------------------------------------------------------------------
def check_smoke_run(
    registry: Registry,
    suite: Suite,
    task: str,
    run_dir: Path,
    agent: str = "",
    budget: int | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """Run ``agent`` on ``task`` in this process with a tiny budget (default: 200 agent steps in
    the suite's unit); check the store and the report. Returns the run's report summary dict.
    ``agent`` "": the installed agent of random play (``Registry.random_play_agent``)."""
    if agent == "":
        agent = registry.random_play_agent() or ""
        if not agent:
            raise _fail(suite, "no installed agent declares random play (AgentSpec.random_play); pass an agent")
    from benchgen.config import RunConfig
    from benchgen.results.rundir import RunDir
    from benchgen.run import lifecycle

    if budget is None:
        budget = 200 * (suite.frames_per_step if suite.budget_unit == "frames" else 1)
    run = RunConfig(suite=suite.name, agent=agent, tasks=[task], seeds=[seed], budget=budget, progress=False)
    with use_registry(registry):
        code = lifecycle.start(registry, lifecycle.plan(registry, run, {}), Path(run_dir))
    if code:
        raise _fail(suite, f"the run of {agent} on '{task}' stopped (exit {code}) before its budget")
    rundir = RunDir(run_dir)
    store = rundir.store(readonly=True)
    try:
        units = store.units()
        episodes = list(store.episodes())
    finally:
        store.close()
    budget_frames = suite.to_frames(budget)
    for unit in units:
        if unit.status != "done" or unit.frames_done < budget_frames:
            raise _fail(
                suite, f"unit {unit.unit_id} ended {unit.status} after {unit.frames_done} of {budget_frames} frames"
            )
    for ep in episodes:
        if ep["task"] != task or ep["end_reason"] not in suite.end_reasons:
            raise _fail(
                suite, f"recorded episode {ep} does not belong to task '{task}' or has an undeclared end reason"
            )
    if not (run_dir / "report" / "report.md").is_file():
        raise _fail(suite, "the run wrote no report")
    return {"units": len(units), "episodes": len(episodes)}
