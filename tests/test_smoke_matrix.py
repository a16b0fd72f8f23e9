"""Every registered agent on every first-party suite, through ``benchgen run``, at a tiny budget.

No pairing is left untested: each agent runs a unit to its budget (joint agents run their whole
chain: joint, zero-shot and fine-tuning units; the few joint pairings run by other tests are named
in ``COVERED_ELSEWHERE``), the run writes its report, and ``benchgen
evaluate`` re-evaluates what it trained (one episode per task), building the agent's envs as
training did (issue 47: it once left out the emulator capabilities an agent declares). Sonic runs
as its code does on the bundled Airstriker ROM (``sonic_airstriker``), Procgen on maze's training
and test levels; Atari under SABER with episodes capped at 2,000 frames (a planner's uncapped Pong
game in ``evaluate`` took most of its test's time).
"""

from __future__ import annotations

import importlib
import sqlite3

import pytest

from benchgen.registry import Registry
from tests.conftest import REPO, assert_usage_error, run_cli

AIRSTRIKER = "tests.sonic.airstriker_plugin"

#: suite -> (suite name on the command line, plugins to load, two train tasks and a test task,
#: the budget flag and its value)
SUITES = {
    # SABER's episodes end only when the game does (a planner's Pong game lasts minutes): capped
    "atari_saber": (
        "atari_saber",
        None,
        ("pong", "breakout", "boxing"),
        ("--frames", "1600", "--protocol", "PROTOCOL"),
    ),
    "sonic": ("sonic_airstriker", AIRSTRIKER, ("airstriker-Level1", "airstriker1000-Level1"), ("--timesteps", "400")),
    # maze's episodes end by its 500-step cap; no test rounds (evaluate plays its test levels)
    "procgen": ("procgen", None, ("maze", "maze:test"), ("--timesteps", "400", "--protocol", "PROTOCOL")),
}
#: the protocol files of suites whose default protocol plays long episodes or evaluation rounds
PROTOCOLS = {
    "atari_saber": "base: saber\nmax_episode_frames: 2000\n",
    "procgen": "base: easy200\nevaluation_episodes: 0\n",
}
#: agents that learn on one sub-environment only
ONE_ENV = {"sarsa"}

#: the value-based agents' share of TINY: small networks, replay and schedule
VALUE_TINY = dict(
    hidden_size=32,
    mlp_hidden_size=32,
    replay_capacity=2000,
    learning_starts_frames=400,
    target_update_frames=400,
    batch_size=8,
    log_every_updates=10,
)
#: settings that make an agent's unit take seconds (small networks, replay and rollouts); an
#: agent missing here runs with its defaults
TINY = {
    "rainbow_iqn": dict(
        VALUE_TINY, num_tau_samples=8, num_tau_prime_samples=8, num_quantile_samples=4, cosine_embedding_dim=16
    ),
    "rainbow": dict(VALUE_TINY, num_atoms=11),
    "dqn": dict(VALUE_TINY, epsilon_decay_frames=800),
    "ppo": dict(n_steps=32, batch_size=32, n_epochs=1),
    "uct": dict(simulations_per_action=2, max_depth_frames=8),
    "brfs": dict(max_frames_per_action=20),
    "sarsa": dict(features="basic", background_samples=200),
}
# the joint agents' paper setups (188 virtual and 32 data-parallel workers on Sonic) do not fit a
# smoke run: one process here (data-parallel runs: tests/agents/test_data_parallel_*.py,
# tests/agents/test_virtual_workers_ppo.py)
TINY["ppo_joint"] = dict(TINY["ppo"], workers=0, virtual_workers=0)
TINY["rainbow_joint"] = dict(TINY["rainbow"], workers=0)


#: smaller searches where a simulated step costs more: a Sonic save state is 1 MB (compressed at
#: every clone), where an Atari one is a few KB
TINY_ON_SUITE = {
    ("brfs", "sonic"): dict(max_frames_per_action=4),  # one expansion (of 4 frames) per action
    ("uct", "sonic"): dict(simulations_per_action=2, max_depth_frames=4),  # no rollout past the new leaf
}
#: the planners learn nothing and plan every step (a Sonic step's search clones 1 MB states): a
#: quarter of the suite's budget still plays several steps of each sub-environment
PLANNER_BUDGET = {"atari_saber": "400", "sonic": "100"}
#: ppo_joint runs a joint and a fine-tuning unit: half the suite's budget is still three or more
#: updates of n_steps 32 on 2 sub-environments (the value-based joint agents keep the whole budget:
#: on Procgen half of it would end before learning_starts_frames)
HALF_BUDGET = {"ppo_joint"}


def _tiny(agent: str, suite: str) -> list[str]:
    base = agent.removesuffix("_joint")
    settings = TINY_ON_SUITE.get((agent, suite), TINY.get(agent, TINY.get(base, {})))
    return [f"--set={k}={v}" for k, v in settings.items()]


#: joint agents' pairings run elsewhere, where their whole chain is checked, or left to the base
#: agent: a joint agent is its base agent (run here on every suite) driven by the suite-blind
#: joint workflow, so each runs its chain here on Procgen (seconds) and on one emulator suite, the
#: other being the costliest pairings of the matrix (12-15 s each of CI's worker time)
COVERED_ELSEWHERE: dict[tuple[str, str], tuple] = {
    ("ppo_joint", "atari_saber"): ("tests/agents/test_joint.py::test_ppo_joint_chain_on_atari",),
    ("ppo_joint", "sonic"): ("tests/agents/test_joint.py::test_ppo_joint_chain_on_sonic_airstriker",),
    ("rainbow_iqn_joint", "atari_saber"): (("rainbow_iqn", "atari_saber"), ("rainbow_iqn_joint", "sonic")),
    ("rainbow_joint", "sonic"): (("rainbow", "sonic"), ("rainbow_joint", "atari_saber")),
}


def _pairings() -> list:
    agents = sorted(Registry(autoload=True).agents)
    return [
        pytest.param(agent, suite, id=f"{agent}-{suite}")
        for suite in sorted(SUITES)
        for agent in agents
        if (agent, suite) not in COVERED_ELSEWHERE
    ]


def test_every_pairing_left_out_is_covered_where_it_says():
    """A pairing leaves the matrix only for one that runs: the named test exists (a "path::test"
    cover), or the named (agent, suite) pairing runs here."""
    agents = set(Registry(autoload=True).agents)
    for (agent, suite), covers in COVERED_ELSEWHERE.items():
        assert agent in agents and suite in SUITES, (agent, suite)
        for cover in covers:
            if isinstance(cover, str):
                path, _, test = cover.partition("::")
                assert f"def {test}(" in (REPO / path).read_text(), cover
            else:
                other, other_suite = cover
                assert other in agents and other_suite in SUITES and cover not in COVERED_ELSEWHERE, cover


@pytest.mark.parametrize(("agent", "suite"), _pairings())
def test_agent_on_suite(tmp_path, agent, suite):
    name, plugins, tasks, budget = SUITES[suite]
    if agent in ("brfs", "uct"):
        budget = (budget[0], PLANNER_BUDGET.get(suite, budget[1]), *budget[2:])  # (procgen refuses them)
    elif agent in HALF_BUDGET:
        budget = (budget[0], str(int(budget[1]) // 2), *budget[2:])
    if suite in PROTOCOLS:
        (tmp_path / "protocol.yaml").write_text(PROTOCOLS[suite])
        budget = tuple(str(tmp_path / "protocol.yaml") if a == "PROTOCOL" else a for a in budget)
    out = tmp_path / "run"
    split = tmp_path / "split.yaml"
    split.write_text(f"name: smoke\ntrain: [{tasks[0]}]\ntest: [{tasks[-1]}]\n")
    selection = (
        [
            "--split",
            str(split),
            "--finetune",
            "--set=run.zeroshot_episodes=1",
            "--set=run.zeroshot_frames=200",
            "--set=run.finetune_budget=200",
        ]
        if Registry(autoload=True).agent(agent).joint
        else ["--tasks", tasks[0]]
    )
    proc = run_cli(
        "run",
        name,
        agent,
        *selection,
        *budget,
        "--num-envs",
        "1" if agent in ONE_ENV else "2",
        "--out",
        out,
        "--no-progress",
        # resumable checkpoints at the reporting checkpoints and the end only (the default, every
        # budget / 20, wrote about 20 per unit); evaluate loads the final one
        f"--set=run.checkpoint_every={budget[1]}",
        *_tiny(agent, suite),
        plugins=plugins,
        timeout=600,
    )
    # what the suite itself declares it offers: an agent needing more is refused in one line when
    # the run is planned
    registry = Registry([(plugins, importlib.import_module(plugins))] if plugins else (), autoload=True)
    missing = set(registry.agent(agent).needs.capabilities) - registry.suite(name).capabilities()
    if missing:
        assert_usage_error(proc, "does not offer", *sorted(missing))
        assert not out.exists()
        return
    assert proc.returncode == 0, proc.stderr[-3000:]
    conn = sqlite3.connect(out / "results.sqlite")
    try:
        units = conn.execute("SELECT unit_id, status, frames_done, budget_frames, learn FROM units").fetchall()
    finally:
        conn.close()
    assert units and all(status == "done" for _, status, *_ in units), units
    assert all(done >= planned for _, _, done, planned, learn in units if learn), units
    assert (out / "report" / "report.md").is_file()
    proc = run_cli("evaluate", out, "--episodes", "1", "--no-progress", plugins=plugins, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # run-eval, or run-eval-NAME under a protocol file
    (evaluated,) = [path for path in tmp_path.glob("run-eval*") if path.is_dir()]
    conn = sqlite3.connect(evaluated / "results.sqlite")
    try:
        statuses = conn.execute("SELECT status FROM units").fetchall()
        episodes = conn.execute("SELECT COUNT(*) FROM episodes WHERE phase = 'reeval'").fetchone()[0]
    finally:
        conn.close()
    assert statuses and all(status == "done" for (status,) in statuses) and episodes >= len(statuses), statuses
