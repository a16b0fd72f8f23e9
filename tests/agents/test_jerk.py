"""JERK (Nichol et al. 2018, Algorithm 1) on scripted inputs: the exploit probability schedule,
the right/left/jump pattern with the paper's parameters, the stored best prefix, its replay
padded with no-ops, running-mean updates; then the agent on vector envs and through the CLI."""

from __future__ import annotations

import importlib.util
import sqlite3

import numpy as np
import pytest

from benchgen.agent import AgentEnvironment
from benchgen.errors import UsageError
from benchgen_agents.jerk import SPECS
from benchgen_agents.jerk.agent import JerkAgent, JerkInstance, Solution, check_semantics
from benchgen_agents.jerk.config import JerkConfig
from tests.agents.agent_harness import Context, CountingEnv
from tests.conftest import run_cli
from tests.fixture_plugins.platformer_suite import SEMANTICS, PlatformerSuite, PlatformerVectorEnv

NOOP, LEFT, RIGHT, JUMP, LEFT_JUMP, RIGHT_JUMP = 0, 1, 2, 3, 4, 5
SEM = {"noop": NOOP, "left": LEFT, "right": RIGHT, "right_jump": RIGHT_JUMP, "left_jump": LEFT_JUMP}
TEST_PLUGINS = "tests.fixture_plugins.toy_suite,tests.fixture_plugins.platformer_suite"


class ScriptedRandom:
    """Stands in for ``numpy.random.Generator``: ``random()`` returns the scripted values, then
    ``default`` forever."""

    def __init__(self, values=(), default=0.99):
        self.values = list(values)
        self.default = default
        self.calls = 0

    def random(self):
        self.calls += 1
        return self.values.pop(0) if self.values else self.default


def _instance(rng=None, **config) -> JerkInstance:
    return JerkInstance(JerkConfig(**config), SEM, rng or ScriptedRandom())


def _run_episode(inst: JerkInstance, rewards, progress=0.0) -> list[int]:
    """Play one episode whose per-step rewards are ``rewards`` (it ends after the last)."""
    inst.start_episode(progress)
    actions = []
    for t, r in enumerate(rewards):
        a = inst.action()
        actions.append(a)
        inst.observe(a, r, done=t == len(rewards) - 1)
    assert not inst.in_episode
    return actions


def test_defaults_are_the_papers():
    c = JerkConfig()
    assert (c.exploit_bias, c.right_steps, c.left_steps, c.jump_repeat, c.jump_prob) == (0.25, 100, 70, 4, 0.1)


def test_explore_goes_right_rn_steps_then_left_ln_steps_when_reward_did_not_increase():
    inst = _instance()  # rng 0.99 always: never jumps (Jp = 0.1)
    rewards = [0.0] * 100 + [-1.0] * 70 + [1.0] * 100 + [1.0] * 30
    actions = _run_episode(inst, rewards)
    assert actions[:100] == [RIGHT] * 100  # Rn = 100 right; its summed reward 0 <= 0: back off
    assert actions[100:170] == [LEFT] * 70  # Ln = 70 left
    assert actions[170:270] == [RIGHT] * 100  # right again; +100 over it: no backing off
    assert actions[270:] == [RIGHT] * 30


def test_explore_jumps_for_jn_steps_with_probability_jp():
    # The first step draws 0.05 < Jp: jump for Jn = 4 steps (no draws while jumping), then draw again.
    rng = ScriptedRandom([0.05, 0.5, 0.5, 0.09])
    inst = _instance(rng)
    actions = _run_episode(inst, [1.0] * 12)
    assert actions == [RIGHT_JUMP] * 4 + [RIGHT, RIGHT] + [RIGHT_JUMP] * 4 + [RIGHT, RIGHT]
    assert rng.calls == 6  # one draw per step taken while not jumping (no exploit draw: S is empty)


def test_left_move_jumps_the_same_way_and_each_move_restarts_its_jump():
    rng = ScriptedRandom([0.5] * 98 + [0.05] + [0.05])  # a jump starts at the 99th right step
    inst = _instance(rng)
    actions = _run_episode(inst, [0.0] * 105)
    assert actions[98:100] == [RIGHT_JUMP, RIGHT_JUMP]
    # the right move ended mid-jump; the left move starts fresh and draws 0.05: a left jump of Jn
    assert actions[100:104] == [LEFT_JUMP] * 4 and actions[104] == LEFT


def test_stores_the_prefix_up_to_the_highest_cumulative_reward():
    inst = _instance()
    rewards = [1.0, 2.0, 5.0, -3.0, 1.0, -10.0]  # cumulative 1, 3, 8, 5, 6, -4: best 8 at step 2
    actions = _run_episode(inst, rewards)
    (solution,) = inst.solutions
    assert solution.actions.tolist() == actions[:3]
    assert solution.rewards == [8.0]


def test_exploit_probability_is_beta_plus_t_over_tmax():
    for progress, draw, exploits in [
        (0.0, 0.24, True),
        (0.0, 0.26, False),
        (0.5, 0.74, True),
        (0.5, 0.76, False),
        (0.75, 0.999, True),
    ]:
        inst = _instance(ScriptedRandom([draw]))
        inst.solutions = [Solution(np.array([RIGHT], np.int16), [1.0])]
        inst.start_episode(progress)
        assert (inst.mode == "exploit") is exploits, (progress, draw)
    inst = _instance(ScriptedRandom([0.0]))  # nothing retained yet: always explore, no draw
    inst.start_episode(0.9)
    assert inst.mode == "explore"


def test_exploit_replays_the_best_prefix_padded_with_noops_and_updates_its_mean():
    inst = _instance(ScriptedRandom(default=0.0), exploit_bias=1.0)
    inst.solutions = [
        Solution(np.array([RIGHT, RIGHT_JUMP, LEFT], np.int16), [10.0]),
        Solution(np.array([RIGHT_JUMP, RIGHT], np.int16), [30.0]),
        Solution(np.array([LEFT], np.int16), [5.0]),
    ]
    actions = _run_episode(inst, [2.0] * 6)
    assert actions == [RIGHT_JUMP, RIGHT] + [NOOP] * 4  # the best (mean 30) then no-ops
    best = inst.solutions[1]
    assert best.rewards == [30.0, 12.0] and best.mean == 21.0  # the replay's total reward
    _run_episode(inst, [-6.0] * 6)
    assert best.rewards == [30.0, 12.0, -36.0] and best.mean == 2.0
    assert inst.best() is inst.solutions[0]  # now the first one's mean (10) is the highest


def test_ties_go_to_the_most_recent_solution():
    inst = _instance()
    inst.solutions = [Solution(np.array([LEFT], np.int16), [4.0]), Solution(np.array([RIGHT], np.int16), [4.0])]
    assert inst.best() is inst.solutions[1]


# -- the agent ---------------------------------------------------------------------------------
def test_unsupported_suite_is_a_usage_error():
    space = PlatformerVectorEnv(["walls-30"], 0).single_action_space
    with pytest.raises(
        UsageError, match="^jerk is not supported on suite toy: it does not declare right/left/jump actions$"
    ):
        JerkAgent(JerkConfig(), AgentEnvironment(None, space, suite="toy"))
    with pytest.raises(UsageError, match="outside the agent's action space"):
        check_semantics(AgentEnvironment(None, space, action_semantics={**SEMANTICS, "noop": 17}, suite="big"))
    with pytest.raises(UsageError, match="lack"):
        check_semantics(AgentEnvironment(None, space, action_semantics={"right": 1, "left": 2}, suite="partial"))


def test_agent_runs_independent_instances_and_improves(tmp_path):
    env = CountingEnv(PlatformerVectorEnv(["walls-30"] * 2, seed=0))
    agent = JerkAgent(JerkConfig(), SPECS[0].environment(PlatformerSuite(), env))
    ctx = Context(env, budget_steps=2 * 6000, seed=3)
    agent.learn(env, ctx)
    assert env.steps_done == 12000 and ctx.checkpoint_calls == 6000
    first, second = agent.instances
    assert first.solutions and second.solutions and first.solutions is not second.solutions
    assert first.solutions[0].actions.tolist() != second.solutions[0].actions.tolist()  # own random streams
    assert np.mean(env.returns[-10:]) > np.mean(env.returns[:10])  # replays of the best prefix pay
    # late in the budget nearly every episode replays: beta + T/Tmax -> 1
    assert max(len(s.rewards) for s in first.solutions) > 5

    agent.save(tmp_path)
    restored = JerkAgent(JerkConfig(), SPECS[0].environment(PlatformerSuite(), env))
    restored.load(tmp_path)
    env2 = CountingEnv(PlatformerVectorEnv(["walls-30"] * 2, seed=1), steps_done=12000)
    restored.learn(env2, Context(env2, budget_steps=12300))
    for old, new in zip(agent.instances, restored.instances):
        assert len(new.solutions) >= len(old.solutions)
        for a, b in zip(old.solutions, new.solutions):
            np.testing.assert_array_equal(a.actions, b.actions)
            assert b.rewards[: len(a.rewards)] == a.rewards


def test_act_runs_right_with_random_jumps():
    space = PlatformerVectorEnv(["walls-30"], 0).single_action_space
    agent = JerkAgent(JerkConfig(jump_prob=0.5), AgentEnvironment(None, space, action_semantics=SEMANTICS))
    actions = agent.act(np.zeros((200, 4, 84, 84), np.uint8))
    assert set(actions.tolist()) == {RIGHT, RIGHT_JUMP}


# -- CLI -----------------------------------------------------------------------------------------
def test_cli_jerk_platformer(tmp_path):
    out = tmp_path / "run"
    proc = run_cli(
        "run",
        "platformer",
        "jerk",
        "--tasks",
        "walls-40",
        "--timesteps",
        "6000",
        "--out",
        out,
        "--no-progress",
        plugins=TEST_PLUGINS,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    conn = sqlite3.connect(out / "results.sqlite")
    scores = [r[0] for r in conn.execute("SELECT score FROM episodes ORDER BY id")]
    assert conn.execute("SELECT status, frames_done FROM units").fetchone() == ("done", 24000)
    conn.close()
    assert len(scores) >= 20 and np.mean(scores[-10:]) >= np.mean(scores[:10])
    final = sorted((out / "units" / "train-walls-40-s0" / "checkpoints").iterdir())[-1]
    assert (final / "jerk.json").is_file() and (final / "jerk_solutions.npz").is_file()


def test_cli_jerk_on_a_suite_without_semantics(tmp_path):
    proc = run_cli(
        "run",
        "toy",
        "jerk",
        "--tasks",
        "count-20",
        "--frames",
        "400",
        "--out",
        tmp_path / "run",
        "--no-progress",
        plugins=TEST_PLUGINS,
    )
    assert proc.returncode == 2
    assert "jerk is not supported on suite toy: it does not declare right/left/jump actions" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "run").exists()  # refused while validating: nothing written


@pytest.mark.skipif(importlib.util.find_spec("stable_retro") is None, reason="stable-retro is not installed")
def test_cli_jerk_sonic_airstriker(tmp_path):
    """JERK through the Sonic suite's agent wrappers (its 10-action set, raw rewards) on Airstriker:
    moving right completes the 100-pixel level, so replays of the best prefix complete it too."""
    out = tmp_path / "run"
    proc = run_cli(
        "run",
        "sonic_airstriker",
        "jerk",
        "--tasks",
        "airstriker-Level1",
        "--timesteps",
        "400",
        "--out",
        out,
        "--no-progress",
        plugins="tests.sonic.airstriker_plugin",
        timeout=300,
    )
    conn = sqlite3.connect(out / "results.sqlite")
    rows = conn.execute("SELECT score, end_reason FROM episodes ORDER BY id").fetchall()
    assert conn.execute("SELECT status FROM units").fetchone() == ("done",), proc.stderr[-3000:]
    conn.close()
    assert len(rows) >= 10 and all(reason == "completed" for _s, reason in rows[-5:])


def test_cli_jerk_atari(tmp_path):
    """The atari_saber suite names FIRE as the jump (Atari platformers): JERK runs there too."""
    from benchgen.registry import Registry

    if "atari_saber" not in Registry().suites:
        pytest.skip("the atari_saber suite is not installed in this checkout")
    out = tmp_path / "run"
    proc = run_cli(
        "run",
        "atari_saber",
        "jerk",
        "--tasks",
        "breakout",
        "--frames",
        "8000",
        "--out",
        out,
        "--no-progress",
        plugins=None,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    conn = sqlite3.connect(out / "results.sqlite")
    assert conn.execute("SELECT status, frames_done FROM units").fetchone() == ("done", 8000)
    assert conn.execute("SELECT COUNT(*) FROM episodes").fetchone()[0] >= 1
    conn.close()
