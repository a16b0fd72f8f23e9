"""Studies over protocols: a sweep of one protocol parameter, and a trained agent re-evaluated
under another protocol.

*Sweep* (``benchgen run SUITE AGENT --vary PARAM=V1,V2``): Machado et al. 2018's Table 1 trains
one agent on the same games with a deterministic emulator and with sticky actions. A sweep is one
run per value of one protocol parameter, each a custom protocol (the base ``--protocol`` with
``PARAM`` changed), in one folder::

    OUT/sweep.json                          the parameter, its values, the condition runs
    OUT/sticky_action_probability=0.0/      an ordinary run directory per value
    OUT/sweep.md, OUT/sweep_table.json      the conditions side by side per task

The table puts next to each condition the suite's published reference tables measured under the
same value of the parameter (``ReferenceScores.protocol``).

*Re-evaluation* (``benchgen evaluate RUN_DIR --protocol NAME``): SABER's Table 2 re-evaluates
Rainbow under Machado et al.'s recommendations. Here every trained unit of ``RUN_DIR`` becomes an
evaluation-only unit of a new run under the named protocol, starting from the unit's last
checkpoint; it plays one evaluation round (``EvaluationSchedule``: the protocol's own quota and
policy if it has evaluation phases, else ``--episodes`` greedy episodes), recorded under the phase
``reeval``. Its ``run.json`` names the source run and its protocol, and so does its report.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from benchgen.errors import UsageError
from benchgen.inputs import parse_yaml
from benchgen.phases import REEVAL
from benchgen.protocols import protocol_label
from benchgen.results.record import RunRecord

SWEEP_FILE = "sweep.json"
#: episodes per task of a re-evaluation under a protocol without evaluation phases (Machado et
#: al.'s per-task score is a mean over 100 episodes)
DEFAULT_REEVAL_EPISODES = 100


def parse_vary(text: str) -> tuple[str, list[Any]]:
    """``PARAM=V1,V2,...`` -> (PARAM, [values as YAML reads them]); one-line ``UsageError``."""
    param, sep, values = text.partition("=")
    items = [v.strip() for v in values.split(",") if v.strip()]
    if not sep or not param.strip() or len(items) < 2:
        raise UsageError(f"--vary {text!r}: give PARAMETER=VALUE1,VALUE2[,...] (two values at least)")
    parsed = [parse_yaml(v, f"--vary {text!r}: the value {v!r}", "give plain values") for v in items]
    if len({_same_value_key(v) for v in parsed}) != len(parsed):
        raise UsageError(f"--vary {text!r} lists a value twice; give each value once")
    return param.strip(), parsed


def _same_value_key(value: Any) -> str:
    """A key equal for values a setting cannot tell apart: 1 and 1.0 (numbers by value), but not
    true and 1 (YAML's booleans are not numbers here)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"number:{float(value)!r}"
    return json.dumps(value, sort_keys=True)


def is_agent_setting(spec, param: str) -> bool:
    """Whether ``param`` names a setting of the agent's config (else it is a protocol parameter)."""
    import dataclasses

    return param in {f.name for f in dataclasses.fields(spec.config_class)}


def condition_label(param: str, value: Any) -> str:
    """The folder name of one condition of a sweep."""
    return f"{param}={value}"


def write_sweep_file(out: Path, suite: str, agent: str, param: str, values: list[Any], runs: list[str]) -> None:
    from benchgen.results.rundir import write_atomically

    out.mkdir(parents=True, exist_ok=True)
    data = {"suite": suite, "agent": agent, "parameter": param, "values": values, "runs": runs}
    write_atomically(out / SWEEP_FILE, lambda tmp: tmp.write_text(json.dumps(data, indent=2)))


def is_sweep(path: Path) -> bool:
    return (Path(path) / SWEEP_FILE).is_file()


def read_sweep(path: Path) -> dict[str, Any]:
    """The sweep's ``sweep.json``; its condition runs are checked to be folders inside the sweep
    (a damaged or crafted file naming ``../elsewhere`` is refused in one line)."""
    try:
        sweep = json.loads((Path(path) / SWEEP_FILE).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise UsageError(f"{path}: cannot read {SWEEP_FILE} ({exc}); is this a sweep folder?") from None
    runs = sweep.get("runs") if isinstance(sweep, dict) else None
    if not isinstance(runs, list) or not all(isinstance(r, str) for r in runs):
        raise UsageError(f"{Path(path) / SWEEP_FILE} does not list its condition runs; restore it from a copy")
    root = Path(path).resolve()
    for rel in runs:
        where = (Path(path) / rel).resolve()
        if Path(rel).is_absolute() or ".." in Path(rel).parts or root not in where.parents:
            raise UsageError(
                f"{Path(path) / SWEEP_FILE} names the condition run {rel!r}, which is not a folder inside the "
                "sweep; benchgen never follows a sweep out of its folder: restore the file from a copy"
            )
    return sweep


def check_sweep_out(out: Path) -> None:
    """A sweep writes into a new or empty folder."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        hint = f"continue it with `benchgen resume {out}`" if is_sweep(out) else "pick an empty or new --out"
        raise UsageError(f"{out} is not an empty directory; {hint}")


def sweep_table(path: Path, registry) -> dict[str, Any]:
    """The conditions of a sweep side by side: task -> condition -> score, with the suite's
    reference tables measured under each condition's value of the parameter."""
    from benchgen.results.compare.gather import load_run

    sweep = read_sweep(path)
    param = sweep["parameter"]
    suite = registry.suite(sweep["suite"])
    scorer = registry.scorer(suite)
    references = registry.reference_scores(suite)
    conditions: dict[str, dict[str, Any]] = {}
    for value, rel in zip(sweep["values"], sweep["runs"]):
        run = load_run(Path(path) / rel, rel)
        scores = run.task_scores(scorer, "score") if run is not None else {}
        published = {
            name: ref for name, ref in references.items() if param in ref.protocol and _same(ref.protocol[param], value)
        }
        conditions[rel] = {
            "value": value,
            "phase": run.phase if run is not None else None,
            "complete": bool(run and run.complete),
            "seeds": run.seeds if run is not None else [],
            "scores": scores,
            "published": {
                name: {"description": ref.description, "scores": dict(ref.scores), "spread": dict(ref.spread)}
                for name, ref in published.items()
            },
        }
    tasks = sorted({t for c in conditions.values() for t in c["scores"]})
    best = {}
    for task in tasks:  # Bellemare et al. 2013 report the best policy of a family per game
        scored = [
            (c["scores"][task], rel) for rel, c in conditions.items() if not math.isnan(c["scores"].get(task, math.nan))
        ]
        if scored:
            value, rel = max(scored, key=lambda pair: pair[0])  # ties: the first condition
            best[task] = {"score": value, "condition": rel}
    return {
        "best": best,
        "suite": sweep["suite"],
        "agent": sweep["agent"],
        "parameter": param,
        "tasks": tasks,
        "conditions": conditions,
    }


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return math.isclose(float(a), float(b))
    return a == b


def sweep_markdown(table: dict[str, Any]) -> str:
    """The sweep's table: one row per task, per condition the run's score and the published ones."""
    param = table["parameter"]
    out = [f"# {table['agent']} on {table['suite']}: {param} swept", ""]
    header, rows = ["task"], []
    columns: list[tuple[str, str, str | None]] = []  # (header, condition, reference or None)
    for rel, cond in table["conditions"].items():
        state = "" if cond["complete"] else " (unfinished)"
        seeds = len(cond["seeds"])
        columns.append((f"{param} = {cond['value']}: this run ({seeds} seed{'s' * (seeds != 1)}){state}", rel, None))
        for name in cond["published"]:
            columns.append((f"{param} = {cond['value']}: {name}", rel, name))
    header += [c[0] for c in columns] + ["best condition"]
    for task in table["tasks"]:
        cells = [task]
        for _, rel, ref in columns:
            cond = table["conditions"][rel]
            if ref is None:
                cells.append(_fmt(cond["scores"].get(task)))
            else:
                pub = cond["published"][ref]
                value, spread = pub["scores"].get(task), pub["spread"].get(task)
                cells.append(_fmt(value) + (f" ({_fmt(spread)})" if spread is not None and value is not None else ""))
        best = table["best"].get(task)
        cells.append(f"{best['condition']} ({_fmt(best['score'])})" if best else "-")
        rows.append(cells)
    out.append("| " + " | ".join(header) + " |")
    out.append("|" + "---|" * len(header))
    out += ["| " + " | ".join(r) + " |" for r in rows]
    notes = {name: pub["description"] for c in table["conditions"].values() for name, pub in c["published"].items()}
    if notes:
        out += ["", "Published (standard deviation over the paper's trials in parentheses):", ""]
        out += [f"- `{name}`: {text}" for name, text in notes.items()]
    return "\n".join(out) + "\n"


def _fmt(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, float) and math.isinf(v):
        return "inf"
    return f"{v:,.1f}" if abs(v) >= 100 else f"{v:.3g}"


def write_sweep_report(path: Path, registry) -> str:
    """Write ``sweep.md`` and ``sweep_table.json`` into the sweep folder; return the markdown.
    Written beside and renamed into place: a link there is replaced, never written through."""
    from benchgen.results.rundir import write_atomically

    table = sweep_table(path, registry)
    text = sweep_markdown(table)
    write_atomically(Path(path) / "sweep.md", lambda tmp: tmp.write_text(text))
    data = json.dumps(table, indent=2, default=_json_default)
    write_atomically(Path(path) / "sweep_table.json", lambda tmp: tmp.write_text(data))
    return text


def _json_default(v: Any) -> Any:
    if isinstance(v, np.generic):
        return v.item()
    return str(v)


# -- re-evaluation -------------------------------------------------------------------------------


def reevaluation_sources(units) -> list:
    """The units of a run that trained an agent and left a checkpoint to re-evaluate."""
    trained = [u for u in units if u.learn and u.last_checkpoint]
    if not trained:
        raise UsageError("that run has no trained unit with a checkpoint yet; let it train (or resume it) first")
    return trained


def source_label(record: RunRecord) -> str:
    """How a report names the protocol an agent was trained under."""
    return protocol_label(record.protocol or {}) or record.suite


def plan_reevaluation(registry, source: Path, protocol_text: str | None, episodes: int | None):
    """The re-evaluation of ``source``'s trained agents under ``protocol_text`` (None: the run's
    own protocol): ``(resolved run, units, metadata additions)``. Every check runs here, before
    anything is written."""
    import dataclasses

    from benchgen import protocols
    from benchgen.results.rundir import RunDir
    from benchgen.results.store import Unit
    from benchgen.run.planning.plan import ResolvedRun, agent_suite, resolve_from_meta
    from benchgen.suite import EvaluationSchedule

    src = RunDir(source)
    if not src.is_run():
        raise UsageError(f"{source} is not a benchgen run directory (it needs run.json and results.sqlite)")
    record = src.record()
    trained = resolve_from_meta(registry, record)
    store = src.store(readonly=True)
    try:
        sources = reevaluation_sources(store.units())
    finally:
        store.close()
    # no --protocol: the run's own protocol (as it recorded its choice), or the suite's only one
    choice = protocols.parse_choice(protocol_text) if protocol_text is not None else record.protocol_choice
    # the same suite as training builds (the agent's emulator capabilities included)
    suite = agent_suite(registry, trained.spec, record.suite, choice)
    if episodes is not None and episodes <= 0:
        raise UsageError("--episodes must be positive")
    schedule = suite.evaluation_schedule()
    if episodes is not None or schedule is None:
        schedule = EvaluationSchedule(
            episodes=episodes or DEFAULT_REEVAL_EPISODES, epsilon=schedule.epsilon if schedule else 0.0
        )
    else:
        schedule = dataclasses.replace(schedule, interval_frames=0)
    _check_same_action_space(trained.suite, suite, sources[0].tasks[0])
    run = dataclasses.replace(
        trained.run,
        protocol=protocol_text if protocol_text is not None else trained.run.protocol,
        finetune=False,
        from_checkpoint=None,
    )
    resolved = ResolvedRun(
        run,
        trained.agent_config,
        suite,
        trained.spec,
        trained.split,
        trained.tasks,
        trained.budget,
        trained.checkpoints,
        choice,
        reevaluation=dataclasses.asdict(schedule),
        config_sources=trained.config_sources,
        task_configs=trained.task_configs,
        task_sources=trained.task_sources,
        task_num_envs=trained.task_num_envs,
    )
    units = [
        Unit(
            f"{REEVAL}-{u.unit_id}",
            i,
            REEVAL,
            list(u.tasks),
            u.seed,
            max(1, u.frames_done),  # the frames the agent trained for (evaluation frames are not counted)
            # absolute: a path relative to here would be read as one inside the new run
            str(src.absolute(u.last_checkpoint).absolute()),
            learn=False,
        )
        for i, u in enumerate(sources)
    ]
    extra = {
        "reevaluation": {
            "schedule": dataclasses.asdict(schedule),
            "source_run": str(Path(source).resolve()),
            "source_run_id": record.run_id,
            "source_protocol": record.protocol,
            "source_protocol_label": source_label(record),
            "source_units": {f"{REEVAL}-{u.unit_id}": u.last_checkpoint for u in sources},
            # what each agent evaluated had trained: its checkpoint of its budget, in the run's
            # budget unit (a run stopped part-way is evaluated as it is, and says so)
            "trained": {
                u.unit_id: [
                    record.from_frames(u.last_checkpoint_frames or 0),
                    record.from_frames(u.budget_frames),
                ]
                for u in sources
            },
            "budget_unit": record.budget_unit,
        }
    }
    return resolved, units, extra


def _check_same_action_space(trained_suite, suite, task: str) -> None:
    """An agent acts in the action space it was trained in: refuse a protocol that changes it."""
    spaces = []
    for s in (trained_suite, suite):
        env = s.make_env([task], seed=0, mode="eval")
        try:
            spaces.append(env.single_action_space)
        finally:
            env.close()
    if spaces[0] != spaces[1]:
        raise UsageError(
            f"the agents act in {spaces[0]} and this protocol gives {spaces[1]} on {task}; "
            "re-evaluate under a protocol with the same action set (a custom one can set full_action_space)"
        )
