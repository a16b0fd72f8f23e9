"""The agent conformance checks, as plain functions (no pytest needed).

An agent is run the way ``benchgen run`` and ``benchgen resume`` run it (:mod:`benchgen.testing.agent_runs`;
the refusal check calls the CLI itself) on the kit's scripted suites
(:mod:`benchgen.testing.agent_suites`), whose environments log every step they take, every
action they get and every episode they end. The checks compare that log with what the run
recorded. Each ``check_*`` raises :class:`~benchgen.testing.kit.ConformanceError`
naming the agent, what is wrong and how to fix it. :class:`AgentKit` runs them for one agent;
:class:`AgentConformance <benchgen.testing.agent_conformance.AgentConformance>` is the same as
pytest tests; :data:`AGENT_CHECKS` lists them for the plugin author guide.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchgen.agent import TrainingContext
from benchgen.registry import Registry
from benchgen.remote import EpisodeTracker
from benchgen.testing.agent_runs import (
    EnvLog,
    KitOptions,
    KitRun,
    KitRunner,
    fixed_global_rngs,
    instrumented,
    kit_registry,
)
from benchgen.testing.agent_suites import KIT_SPLIT
from benchgen.testing.kit import ConformanceError, use_registry

__all__ = ["AGENT_CHECKS", "AgentKit", "KitOptions", "KitRun", "kit_registry"]

#: what every check guarantees, in the order the guide lists them: (test name, what it checks)
AGENT_CHECKS: tuple[tuple[str, str], ...] = (
    (
        "test_runs_where_it_declares_and_refuses_elsewhere",
        "on every kit suite in `runs_on` the run finishes with every unit done; `benchgen run` on any "
        "other kit suite exits 2 with one line `benchgen: error: ...`, no traceback, and writes nothing "
        "(raise `UsageError` from the factory or `AgentSpec.check_suite`, or declare `AgentNeeds`).",
    ),
    (
        "test_respects_its_budget",
        "each unit's environments, by their own count, stepped at least the unit's budget (a learning "
        "unit) and never more than one vector step past it; the unit's frame counter equals that count "
        "(every step went through the environment `learn` was given).",
    ),
    (
        "test_records_through_the_suite",
        "the recorded episodes are exactly the episodes the suite's environments ended (task, "
        "sub-environment, score, length, end reason), none missing and none added.",
    ),
    (
        "test_reproducible_with_a_seed",
        "two runs with the same seed record identical episodes and take identical actions; a stochastic "
        "agent (`stochastic = True`) takes other actions under another seed.",
    ),
    (
        "test_resumes_identically",
        "a run stopped by SIGINT halfway saves a checkpoint and exits resumable; two copies of it, each "
        "resumed, record identical episodes and take identical actions, and the resumed run still "
        "respects its budget and records through the suite.",
    ),
    (
        "test_uses_only_declared_capabilities",
        "the agent reads the emulator (RAM, palette screen, states, per-frame actions: "
        "`benchgen.capabilities`) only for the capabilities its `AgentNeeds.capabilities` declares; "
        "a kit suite that does not offer one it needs refuses it in one line (the refusal test).",
    ),
    (
        "test_save_load_round_trip",
        "after `learn`, `save` then `load` into a freshly built agent gives the same greedy actions on "
        "the same observations (global random generators seeded alike before each); actions are one "
        "valid index per observation.",
    ),
)


def _fail(agent: str, message: str) -> ConformanceError:
    return ConformanceError(f"agent '{agent}': {message}")


class AgentKit(KitRunner):
    """Runs the checks of :data:`AGENT_CHECKS` for one agent, each on one kit suite."""

    def check_runs(self, suite: str) -> None:
        """The run on ``suite`` (a suite in ``runs_on``) finished, every unit done."""
        run = self.first_run(suite)
        unfinished = [f"{u.unit_id} ({u.status})" for u in run.units if u.status != "done"]
        if run.stopped or unfinished:
            raise _fail(self.agent, f"the run on {suite} did not finish: units {unfinished}")

    def check_refuses(self, suite: str) -> None:
        """``benchgen run`` on ``suite`` (a suite not in ``runs_on``) is refused: :func:`check_refusal`."""
        check_refusal(self.registry, self.agent, suite, self.workdir / f"refused-{suite}", self.settings(suite))

    def check_budget(self, suite: str) -> None:
        """The first run on ``suite`` respected its budget: :func:`check_budget`."""
        check_budget(self.agent, self.registry.suite(suite), self.first_run(suite))

    def check_records(self, suite: str) -> None:
        """The first run on ``suite`` recorded through the suite: :func:`check_records`."""
        check_records(self.agent, self.first_run(suite))

    def check_reproducible(self, suite: str, stochastic: bool = True) -> None:
        """A second run with the seed repeats the first; one with another seed acts otherwise
        (``stochastic``)."""
        first = self.first_run(suite)
        again = self.run(suite, f"{suite}-seed{self.options.seed}-again")
        check_same(self.agent, first, again, f"two runs on {suite} with seed {self.options.seed}")
        if stochastic:  # half a run is enough to see other actions
            other = self.run(suite, f"{suite}-seed{self.options.seed + 1}", self.options.seed + 1, self.half(suite))
            check_seed_matters(self.agent, first, other)

    def check_capabilities(self, suite: str) -> None:
        """The first run on ``suite`` used only declared capabilities: :func:`check_capabilities`."""
        declared = self.registry.agent(self.agent).needs.capabilities
        check_capabilities(self.agent, declared, self.first_run(suite))

    def check_resume(self, suite: str) -> None:
        """A run stopped by SIGINT halfway, copied twice and each copy resumed, ends identically
        twice, within its budget and recorded through the suite."""
        kit_suite, half = self.registry.suite(suite), self.half(suite)
        stopped = self.run(suite, f"{suite}-stopped", stop_at_frames=half)
        used = sum(env.frames for env in stopped.envs)
        # one vector step: of the widest env, or of joint environments' slots (one-task envs each)
        widest = max((len(env.tasks) for env in stopped.stepped()), default=1)
        step = max(widest, self.options.num_envs) * kit_suite.frames_per_step
        if not stopped.stopped or used > half + step:
            raise _fail(
                self.agent,
                f"a SIGINT after {half} frames on {suite} did not stop the run (it went on to {used} frames): "
                "check ctx.finished after every vector step and return from learn once it is true",
            )
        resumed = []
        for copy in (1, 2):
            path = self.workdir / f"{suite}-resumed-{copy}"
            shutil.copytree(stopped.path, path)
            resumed.append(self.resume(path, stopped.envs))
        for run in resumed:
            unfinished = [f"{u.unit_id} ({u.status})" for u in run.units if u.status != "done"]
            if run.stopped or unfinished:
                raise _fail(self.agent, f"the resumed run {run.path} did not finish: units {unfinished}")
        check_same(self.agent, resumed[0], resumed[1], f"two copies of a run stopped on {suite}, each resumed")
        check_budget(self.agent, kit_suite, resumed[0])
        check_records(self.agent, resumed[0])

    def check_save_load(self, suite: str) -> None:
        """:func:`check_save_load` on ``suite``."""
        check_save_load(self, suite)


# -- the checks ----------------------------------------------------------------------------------
def _unit_envs(agent: str, run: KitRun) -> dict[str, list[EnvLog]]:
    """The stepped environments of each unit: a unit's environments play its tasks in its mode
    ("train" for a learning unit, "eval" for a zero-shot one)."""
    out: dict[str, list[EnvLog]] = {u.unit_id: [] for u in run.units}
    for env in run.stepped():
        same_mode = [u for u in run.units if u.learn == (env.mode == "train")]
        owners = [u for u in same_mode if set(u.tasks) == set(env.tasks)]
        # joint environments (a new task every episode) build one env per task played
        owners = owners or [u for u in same_mode if set(env.tasks) <= set(u.tasks)]
        if not owners:
            raise _fail(
                agent, f"an environment of tasks {sorted(set(env.tasks))} ({env.mode}) that no unit plays was stepped"
            )
        out[owners[0].unit_id].append(env)
    return out


def check_budget(agent: str, suite, run: KitRun) -> None:
    """See :data:`AGENT_CHECKS`: each unit's budget, by its environments' own count of frames."""
    by_unit = _unit_envs(agent, run)
    for unit in run.units:
        envs = by_unit[unit.unit_id]
        used = sum(env.frames for env in envs)
        step = max((len(env.tasks) for env in envs), default=1) * suite.frames_per_step
        where = f"unit {unit.unit_id} on {suite.name}"
        if unit.frames_done != used:
            raise _fail(
                agent,
                f"{where} counted {unit.frames_done} frames but its environments stepped {used}: step only "
                "the env that learn() was given (never env.unwrapped or an inner layer)",
            )
        if used > unit.budget_frames + step:
            raise _fail(
                agent,
                f"{where} stepped {used} frames of a {unit.budget_frames}-frame budget, more than one vector "
                f"step ({step} frames) past it: stop stepping as soon as ctx.finished is true",
            )
        # a learning unit is finished after budget_frames // frames_per_step agent steps
        if unit.learn and used < unit.budget_frames // suite.frames_per_step * suite.frames_per_step:
            raise _fail(
                agent,
                f"{where} stepped only {used} of its {unit.budget_frames} frames: learn until ctx.finished, "
                "not by a step count of the agent's own",
            )


def check_capabilities(agent: str, declared: Sequence[str], run: KitRun) -> None:
    """See :data:`AGENT_CHECKS`: every capability the run's environments saw used is declared."""
    used = set().union(*(env.capabilities for env in run.envs)) if run.envs else set()
    undeclared = sorted(used - set(declared))
    if undeclared:
        raise _fail(
            agent,
            f"it used {', '.join(undeclared)} from the emulator without declaring it: add them to "
            "AgentNeeds(capabilities=...) so that suites which cannot offer them refuse the run",
        )


def check_records(agent: str, run: KitRun) -> None:
    """See :data:`AGENT_CHECKS`: recorded episodes against the episodes the environments ended."""
    # (env_index, task, score, frames, reason); the env index is left out when the run's envs are
    # joint environments, which renumber their one-task envs' episodes by slot
    joint_envs = any(len(set(u.tasks)) > 1 for u in run.units if u.learn)
    keep = slice(1, None) if joint_envs else slice(None)
    ended = Counter(tuple(end)[keep] for env in run.envs for end in env.ends)
    recorded = Counter(
        (ep["env_index"], ep["task"], float(ep["score"]), ep["length_frames"], ep["end_reason"])[keep]
        for ep in run.episodes
    )
    missing, added = ended - recorded, recorded - ended
    if added:
        raise _fail(
            agent,
            f"{sum(added.values())} recorded episode(s) that no environment ended, e.g. "
            f"(env, task, score, frames, reason) = {next(iter(added))}: only the suite records episodes",
        )
    if missing:
        raise _fail(
            agent,
            f"{sum(missing.values())} episode(s) ended in the suite's environments but were not recorded, e.g. "
            f"{next(iter(missing))}: step the env learn() was given, not a layer below it",
        )


def _trace(run: KitRun, with_seeds: bool = True) -> list[tuple]:
    return [(env.tasks, env.mode, env.seed if with_seeds else None, env.actions) for env in run.stepped()]


def _first_difference(a: Sequence, b: Sequence) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def check_same(agent: str, a: KitRun, b: KitRun, what: str) -> None:
    """``a`` and ``b`` recorded the same episodes and took the same actions."""
    if a.episodes != b.episodes:
        i = _first_difference(a.episodes, b.episodes)
        shown = [run.episodes[i] if i < len(run.episodes) else "no episode" for run in (a, b)]
        raise _fail(
            agent,
            f"{what} differ at recorded episode {i}: {shown[0]} vs {shown[1]}; seed every random stream "
            "from ctx.seed (and restore it in load), never from the clock or a global generator left unseeded",
        )
    ta, tb = _trace(a), _trace(b)
    if ta != tb:
        i = _first_difference(ta, tb)
        j = _first_difference(ta[i][3], tb[i][3]) if i < min(len(ta), len(tb)) else 0
        raise _fail(agent, f"{what} recorded the same episodes but took different actions (environment {i}, step {j})")
    for ua, ub in zip(a.units, b.units):
        if (ua.status, ua.frames_done) != (ub.status, ub.frames_done):
            raise _fail(
                agent, f"{what} ended unit {ua.unit_id} differently: {ua.frames_done} vs {ub.frames_done} frames"
            )


def check_seed_matters(agent: str, a: KitRun, b: KitRun) -> None:
    """A stochastic agent acts differently under another seed: the first environments the two runs
    stepped got different actions, over the steps both took."""
    first = [run.stepped()[0].actions if run.stepped() else [] for run in (a, b)]
    steps = min(map(len, first))
    if first[0][:steps] == first[1][:steps]:
        raise _fail(
            agent,
            f"runs with different seeds took the same {steps} first actions: draw the agent's randomness "
            "from ctx.seed (or set `stochastic = False` if the agent is deterministic)",
        )


class _Counter(EpisodeTracker):
    """Counts frames for the kit's own training context (the runner's recorder does this in a run)."""

    def take(self, ends) -> None:
        pass


class _Context(TrainingContext):
    """The training context of one ``learn`` call outside a run (the save/load check)."""

    def __init__(self, counter: _Counter, budget_steps: int, seed: int, unit_dir: Path):
        self.counter, self.budget_steps, self.seed, self.unit_dir = counter, budget_steps, seed, unit_dir

    @property
    def steps_done(self) -> int:
        return self.counter.frames_done // self.counter.frames_per_step

    def maybe_checkpoint(self) -> None:
        pass

    def log_scalar(self, tag: str, value: float) -> None:
        pass


def check_save_load(kit: AgentKit, suite_name: str, batches: int = 6) -> None:
    """See :data:`AGENT_CHECKS`: ``learn``, ``save``, ``load`` into a fresh agent, same greedy actions."""
    from benchgen.run.execution.build import build_agent, env_tasks
    from benchgen.run.planning.plan import resolve

    agent, seed = kit.agent, kit.options.seed
    run, agent_over = kit.run_config(suite_name, seed)
    unit_dir = kit.workdir / f"save-load-{suite_name}"
    (unit_dir / "checkpoint").mkdir(parents=True)
    with use_registry(kit.registry), instrumented(None):
        r = resolve(kit.registry, run, agent_over)
        tasks = env_tasks(list(r.tasks), kit.options.num_envs)
        counter = _Counter(r.suite.make_env(tasks, seed, mode="train"))
        env = r.suite.agent_wrappers(counter, r.spec.needs)
        trained = build_agent(r, env)
        try:
            trained.learn(env, _Context(counter, kit.options.budget_steps // 2, seed, unit_dir))
        finally:
            env.close()
        probe = r.suite.agent_wrappers(_Counter(r.suite.make_env(tasks, seed + 1, mode="eval")), r.spec.needs)
        try:
            n, rng = int(probe.single_action_space.n), np.random.default_rng(seed)
            obs, _ = probe.reset(seed=seed + 1)
            observations = []
            for _ in range(batches):
                observations.append(np.array(obs))
                obs, *_ = probe.step(rng.integers(0, n, size=probe.num_envs))
            trained.save(unit_dir / "checkpoint")
            fresh = build_agent(r, probe)
            if r.spec.needs.capabilities:  # both read the same emulators (a planner acts from their state)
                trained.use_emulators(fresh.emulators)
        finally:
            probe.close()
        fresh.load(unit_dir / "checkpoint")
        actions = []
        for who in (trained, fresh):
            with fixed_global_rngs(seed):
                actions.append([np.asarray(who.act(batch, greedy=True)) for batch in observations])
    # an agent with per-frame actions (the frame_actions capability) gives one row of them per observation
    shapes = [(len(b),) for b in observations]
    if "frame_actions" in r.spec.needs.capabilities:
        per_frame = [((len(b),), (len(b), r.suite.frames_per_step)) for b in observations]
        shapes = [got.shape if got.shape in ok else ok[0] for ok, got in zip(per_frame, actions[0])]
    for batch, got, shape in zip(observations, actions[0], shapes):
        if got.shape != shape or not np.issubdtype(got.dtype, np.integer) or ((got < 0) | (got >= n)).any():
            raise _fail(
                agent, f"act() returned {got!r} for {len(batch)} observations; expected one action in [0, {n}) each"
            )
    for i, (a, b) in enumerate(zip(*actions)):
        if not np.array_equal(a, b):
            raise _fail(
                agent,
                f"on {suite_name}, the agent loaded from a save acts {b.tolist()} where the saved agent acts "
                f"{a.tolist()} (batch {i}): save what act() depends on (weights, random state) and restore it in load",
            )


def check_refusal(registry: Registry, agent: str, suite: str, out: Path, settings: Mapping[str, Any]) -> None:
    """See :data:`AGENT_CHECKS`: ``benchgen run SUITE AGENT`` refused in one line, nothing written."""
    from benchgen.cli import main

    spec, kit_suite = registry.agent(agent), registry.suite(suite)
    where = ["--split", KIT_SPLIT] if spec.joint else ["--tasks", kit_suite.tasks()[0]]
    pairs = [f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in settings.items()]
    argv = ["run", suite, agent, *where, "--timesteps", "64", "--out", str(out), "--no-progress"]
    argv += [a for pair in pairs for a in ("--set", pair)]
    err, hook = io.StringIO(), threading.excepthook  # `benchgen run` sets its own thread excepthook
    with use_registry(registry), instrumented(None), contextlib.redirect_stderr(err):
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                code = main(argv)
            except Exception as exc:  # noqa: BLE001 - what the user would see as a traceback
                raise _fail(
                    agent,
                    f"`benchgen run {suite} {agent}` ended in a traceback ({type(exc).__name__}: {exc}); refuse "
                    "a suite the agent cannot run with benchgen.errors.UsageError (one line)",
                ) from None
            finally:
                threading.excepthook = hook
    lines = [line for line in err.getvalue().splitlines() if line.strip()]
    if code == 0:
        raise _fail(agent, f"it ran on {suite}, which `runs_on` does not list: add the suite, or refuse it")
    if out.exists():
        raise _fail(
            agent, f"refusing {suite}, `benchgen run` still wrote {out}: refuse in the factory or AgentSpec.check_suite"
        )
    if code != 2 or len(lines) != 1 or not lines[0].startswith("benchgen: error: "):
        raise _fail(
            agent,
            f"`benchgen run {suite} {agent}` should exit 2 with one line 'benchgen: error: ...', got exit "
            f"{code} and {err.getvalue()[-500:]!r}",
        )
