"""Synthetic run directories written through benchgen's own store API, with scores chosen by the test."""

from __future__ import annotations

import json
import math
from pathlib import Path

from benchgen.results.store import ResultsStore, Unit

PLUGINS = "tests.fixture_plugins.toy_suite,tests.fixture_plugins.toy_scoring"


def make_run(
    path: Path,
    agent: str,
    scores: dict[int, dict[str, list[float]]],
    *,
    budget: int = 4000,
    protocol: dict | None = None,
    agent_config: dict | None = None,
    suite: str = "toy",
    protocol_choice: dict | None = None,
) -> Path:
    """A finished single-task-per-unit run: ``scores[seed][task]`` are the episode scores in order,
    finishing at evenly spaced frame counts up to ``budget``. ``score_half`` is half the score."""
    path.mkdir(parents=True)
    seeds = sorted(scores)
    tasks = sorted({t for s in scores.values() for t in s})
    meta = {
        "run": {"suite": suite, "agent": agent, "seeds": seeds, "tasks": tasks},
        "agent_config": agent_config or {},
        "suite": suite,
        "agent": agent,
        "joint": False,
        "tasks": tasks,
        "split": None,
        "budget": budget,
        "budget_unit": "frames",
        "frames_per_step": 4,
        "checkpoints": [budget // 4, budget],
        "protocol": protocol if protocol is not None else {"version": "1", "frames_per_step": 4},
        "protocol_choice": protocol_choice,
        "task_score_rule": "mean raw score of the last 100 episodes",
        "episode_fields": ["score_half"],
        "plugins": [],
        "versions": {},
        "created_at": 0.0,
        "command": [],
    }
    (path / "run.json").write_text(json.dumps(meta))
    store = ResultsStore(path)
    units = [
        Unit(f"train-{t}-s{s}", i, "train", [t], s, budget)
        for i, (s, t) in enumerate((s, t) for s in seeds for t in sorted(scores[s]))
    ]
    store.add_units(units)
    for u in units:
        eps = scores[u.seed][u.tasks[0]]
        records = [
            {
                "task": u.tasks[0],
                "episode": i,
                "env_index": 0,
                "frames_total": budget * (i + 1) // len(eps),
                "length_frames": 100,
                "score": float(x),
                "end_reason": "game_over",
                "extras": {"score_half": float(x) / 2 if math.isfinite(x) else float(x)},
            }
            for i, x in enumerate(eps)
        ]
        store.record_episodes(u, records, budget)
        store.update_unit(u.unit_id, status="done")
    store.close()
    return path


# The hand-computed case (tests/compare/test_stats.py): raw scores, world record 100, random 0,
# so normalized = raw / 100. inf = infinite gameplay.
A = {
    0: {"count-20": [10.0], "count-50": [20.0], "count-80": [150.0]},
    1: {"count-20": [30.0], "count-50": [40.0], "count-80": [math.inf]},
    2: {"count-20": [50.0], "count-50": [60.0], "count-80": [120.0]},
}
B = {
    0: {"count-20": [5.0], "count-50": [25.0], "count-80": [100.0]},
    1: {"count-20": [15.0], "count-50": [35.0], "count-80": [90.0]},
}
