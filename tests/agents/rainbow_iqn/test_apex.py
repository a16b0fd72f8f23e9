"""Ape-X Rainbow-IQN on a local Ray instance: actors' transitions and priorities reach the
learner's replay, weights propagate, synchronized mode keeps 1 update per 4 agent steps, the
actors act at random during the unit's warm-up only, and a CLI run records every actor's
episodes under the one unit."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from benchgen.agent import TrainingContext
from benchgen.errors import UsageError
from benchgen.remote import EpisodeInbox
from benchgen_agents.rainbow_iqn import RainbowIQNConfig, make_agent
from benchgen_agents.value_based.agent import REPLAY_DIR
from benchgen_agents.value_based.replay import PrioritizedReplay
from tests.agents.agent_harness import environment_of
from tests.conftest import REPO, cli_env, run_cli_subprocess
from tests.fixture_plugins.vector_suite import SUITE, ChainEnvFactory, ChainVectorEnv

ray = pytest.importorskip("ray")

TINY = dict(
    hidden_size=32,
    mlp_hidden_size=32,
    num_tau_samples=8,
    num_tau_prime_samples=8,
    num_quantile_samples=4,
    cosine_embedding_dim=16,
    replay_capacity=4000,
    learning_starts_frames=400,
    target_update_frames=400,
    batch_size=16,
    device="cpu",
    torch_threads=1,
    log_every_updates=10,
)


def apex_config(**overrides) -> RainbowIQNConfig:
    base = dict(TINY, actors=2, actor_envs=2, actor_chunk_steps=10, weight_sync_updates=5, actor_cpus=1.0)
    base.update(overrides)
    return RainbowIQNConfig(**base)


class ApexContext(TrainingContext):
    """The runner's side for a learner driven in-process: counts frames, keeps episode ends."""

    def __init__(self, budget_steps: int, seed: int = 0, task: str = "chain-8", num_actions: int = 3):
        self.budget_steps, self.seed, self.unit_dir = budget_steps, seed, Path(".")
        self.task, self.num_actions = task, num_actions
        self.inbox = EpisodeInbox()
        self.frames = 0
        self.ends: list = []
        self.checkpoint_calls = 0
        self.scalars: dict[str, list[float]] = {}

    @property
    def steps_done(self) -> int:
        return self.frames // 4

    def maybe_checkpoint(self) -> None:
        self.checkpoint_calls += 1

    def log_scalar(self, tag: str, value: float) -> None:
        self.scalars.setdefault(tag, []).append(value)

    def remote_envs(self):
        return ChainEnvFactory(self.inbox.key, self.task, self.num_actions)

    def report_remote_episodes(self, report):
        ends, frames = self.inbox.open(report)
        self.frames += frames
        self.ends.extend(ends)
        return ends

    def ray(self):
        return ray  # connected by the local_ray fixture (tests/agents/conftest.py)


def learner(config: RainbowIQNConfig, budget_steps: int, num_actions: int = 3):
    from benchgen_agents.rainbow_iqn.apex import ApexLearner

    env = SUITE.make_env(["chain-8"], 0) if num_actions == 3 else ChainVectorEnv(["chain-8"], 0, num_actions)
    agent = make_agent(config, environment_of(env))
    agent._build(0)
    agent.counters["seeded"] = True
    ctx = ApexContext(budget_steps, num_actions=num_actions)
    return ApexLearner(agent, env, ctx), agent, ctx


def test_every_actors_transitions_reach_the_replay_with_actor_priorities(local_ray):
    # No learner update ever runs (learning starts after the budget), so every priority in the
    # memory is one an actor computed.
    L, agent, ctx = learner(apex_config(learning_starts_frames=16000), budget_steps=600)
    try:
        L.start()
        L.run()
        assert ctx.steps_done == 600 and agent.counters["updates"] == 0
        replay, E = agent.replay, L.actor_envs
        assert replay.num_envs == 4  # one stream per (actor, sub-environment)
        priorities = replay.tree.get(np.arange(replay.slots))
        for actor in range(2):
            assert L.stats["steps"][actor] > 0 and L.stats["chunks"][actor] > 0
            mine = np.concatenate(
                [
                    priorities[s * replay.stream_capacity : (s + 1) * replay.stream_capacity]
                    for s in range(actor * E, (actor + 1) * E)
                ]
            )
            live = mine[mine > 0]
            assert len(live) == L.stats["transitions"][actor] > 0.9 * L.stats["steps"][actor]
            assert len(np.unique(live)) > 20  # losses, not the uniform max priority of plain inserts
            assert live.max() <= replay.max_priority
        assert replay.num_valid == sum(L.stats["transitions"])
        # the learner's memory rebuilds the actors' transitions: chain rewards, n-step returns
        batch = replay.transitions(np.flatnonzero(priorities > 0))
        assert set(np.unique(batch["actions"])) <= {0, 1, 2}
        assert np.all((batch["returns"] >= 0) & (batch["returns"] <= 3))
        assert {int(e.env_index) for e in ctx.ends} == {0, 1, 2, 3}  # actor * actor_envs + sub-env
    finally:
        L.stop()


def is_noise(key: str) -> bool:
    return key.rsplit(".", 1)[-1] in ("eps_in", "eps_out")


def run_synchronized(actors: int) -> SimpleNamespace:
    """A synchronized learner with ``actors`` actors over 1000 agent steps, publishing its weights
    after every update. Records the counters whenever an actor is sent on, what each actor acts
    with once the budget is used (and the weights published as its version), and what each holds
    after one more chunk that brings a fresh publication; then stops the actors."""
    config = apex_config(actors=actors, synchronized=True, weight_sync_updates=1)
    L, agent, ctx = learner(config, budget_steps=1000)
    c = agent.counters
    seen = []
    submit = L._submit

    def record(i):  # when an actor is sent on, its chunk's updates are all done
        seen.append((c["agent_steps"], c["updates"], c["update_credit"]))
        submit(i)

    L._submit = record
    try:
        L.start()
        initial = {k: v.clone() for k, v in agent.online.state_dict().items()}
        L.run()
        held = []  # per actor: (its weights version, its online net, the published weights of that version)
        for actor in L.actors:
            version, online, _ = ray.get(actor.parameters.remote())
            held.append((version, online, ray.get(L.refs[version][0])))
        L._publish()
        online_ref, target_ref = L.refs[L.version]
        fresh = []  # per actor: (version, online, target) after a chunk that brought the fresh publication
        for actor in L.actors:
            ray.get(actor.collect.remote(1, online_ref, target_ref, L.version))
            fresh.append(ray.get(actor.parameters.remote()))
    finally:
        L.stop()
    return SimpleNamespace(
        config=config, learner=L, agent=agent, ctx=ctx, seen=seen, initial=initial, held=held, fresh=fresh
    )


@pytest.fixture(scope="module")
def synchronized_run(local_ray):
    """``synchronized_run(actors)``: :func:`run_synchronized`, run once per actor count for the
    tests that read it (each run starts its actors: Ray's worker start-up dominates these tests)."""
    runs: dict[int, SimpleNamespace] = {}

    def get(actors: int) -> SimpleNamespace:
        if actors not in runs:
            runs[actors] = run_synchronized(actors)
        return runs[actors]

    return get


def test_weights_propagate_from_learner_to_actors(synchronized_run):
    run = synchronized_run(2)
    L, agent = run.learner, run.agent
    assert agent.counters["updates"] > 50
    assert L.stats["weights_verified"] > 20  # actors' checksums matched the published weights
    assert all(v > 0 for v in L.stats["max_version"])
    assert len(run.held) == len(run.fresh) == 2  # both actors
    for version, online, published in run.held:  # what an actor acts with is exactly a version the learner published
        assert version > 0
        params = [k for k in published if not is_noise(k)]
        assert all(np.array_equal(online[k], published[k]) for k in params)
        # ... and its exploration noise is its own (drawn after loading the weights)
        assert not all(np.array_equal(online[k], published[k]) for k in published if is_noise(k))
    # a fresh publication reaches the actors with their next chunk: equal to the learner's nets
    for version, online, target in run.fresh:
        assert version == L.version
        for k, v in agent.online.state_dict().items():
            assert is_noise(k) or np.array_equal(online[k], v.numpy()), k
        for k, v in agent.target.state_dict().items():
            assert is_noise(k) or np.array_equal(target[k], v.numpy()), k
        assert not all(np.array_equal(online[k], run.initial[k].numpy()) for k in run.initial if "weight_mu" in k)


@pytest.mark.parametrize("actors", [1, 2])
def test_synchronized_mode_does_one_update_per_four_agent_steps(synchronized_run, actors):
    run = synchronized_run(actors)
    config, c, seen = run.config, run.agent.counters, run.seen
    chunk = config.actor_chunk_steps * config.actor_envs
    learning = config.learning_starts_steps
    first_paid = (-(-learning // chunk) - 1) * chunk  # agent steps before the chunk that starts learning
    assert all(credit == 0 for _, _, credit in seen)
    for steps, updates, _ in seen:
        assert updates == max(0, steps - first_paid) // 4
    assert run.ctx.steps_done == 1000 and c["agent_steps"] == 1000
    assert c["updates"] == (1000 - first_paid) // 4


def test_asynchronous_mode_never_exceeds_the_update_ratio(local_ray):
    L, agent, ctx = learner(apex_config(), budget_steps=1000)
    try:
        L.start()
        L.run()
    finally:
        L.stop()
    c = agent.counters
    assert ctx.steps_done == 1000
    assert 0 < c["updates"] and 4 * c["updates"] + c["update_credit"] <= 1000
    assert min(L.stats["chunks"]) > 0


@pytest.fixture(scope="module")
def warmed_up_unit(local_ray, tmp_path_factory):
    """A synchronized unit of 18 actions trained past its warm-up (300 agent steps) to 500 agent
    steps, then saved with its memory: the warm-up and resume tests continue it (one start-up of
    its actors for both)."""
    config = apex_config(synchronized=True, save_replay=True, learning_starts_frames=4 * 300)  # 300 agent steps
    L, agent, ctx = learner(config, budget_steps=500, num_actions=18)
    L.train()
    ckpt = tmp_path_factory.mktemp("apex") / "ckpt"
    agent.save(ckpt)
    return SimpleNamespace(config=config, learner=L, agent=agent, ctx=ctx, ckpt=ckpt)


def test_a_resumed_learner_continues_from_its_checkpoint(warmed_up_unit):
    """The learner saves as the single agent does; on resume the actors are rebuilt from the
    saved weights and the saved memory (one stream per actor sub-environment) is reused."""
    unit = warmed_up_unit
    agent, ctx = unit.agent, unit.ctx
    updates, valid = agent.counters["updates"], agent.replay.num_valid

    resumed, again, ctx2 = learner(unit.config, budget_steps=800, num_actions=18)
    again.load(unit.ckpt)
    ctx2.frames = ctx.frames  # the runner restores the unit's frame counter
    for k, v in agent.online.state_dict().items():
        assert torch.equal(v, again.online.state_dict()[k])
    assert again.replay.num_envs == 4 and again.replay.num_valid == valid
    resumed.train()
    assert ctx2.steps_done == 800 and again.counters["agent_steps"] == 800
    assert again.counters["updates"] == updates + 300 // 4  # learning had started: every step pays
    assert again.replay.num_added == 800


def test_an_actor_acts_uniformly_over_all_actions_for_its_random_steps_then_by_its_policy():
    """In-process (no Ray): ``collect(steps, random_steps=k)`` takes k vector steps uniformly at
    random over all 18 actions without asking its network, then asks it for every action."""
    from benchgen_agents.rainbow_iqn.apex import ApexActor, numpy_state

    config = apex_config(actor_chunk_steps=1000)
    env = ChainVectorEnv(["chain-8"], 0, num_actions=18)
    agent = make_agent(config, environment_of(env))
    online, target = numpy_state(agent.online), numpy_state(agent.target)
    factory = ChainEnvFactory(EpisodeInbox().key, "chain-8", num_actions=18)
    actor = ApexActor(factory, 2, config, agent.obs_shape, agent.obs_dtype, 18, 0, 5, online, target)
    assert actor.ready() == 2
    asked = []
    actor.greedy_actions = lambda obs: asked.append(len(obs)) or np.full(len(obs), 7)
    chunk = actor.collect(1000, random_steps=900)
    random_part, after = chunk["actions"][:900].ravel(), chunk["actions"][900:].ravel()
    counts = np.bincount(random_part, minlength=18)
    expected = len(random_part) / 18
    assert len(counts) == 18 and ((counts - expected) ** 2 / expected).sum() < 45 and counts.min() >= 0.6 * expected
    assert np.all(after == 7) and sum(asked) == len(after) == 200
    assert chunk["random_steps"] == 900 and len(chunk["losses"]) > 0  # priorities computed as always
    assert np.all(actor.collect(10, random_steps=0)["actions"] == 7)


def test_actors_warm_up_for_the_units_first_learning_start_steps_only(warmed_up_unit, tmp_path):
    """The learner hands out the unit's first ``learning_starts_steps`` agent steps as random
    steps, over all actors together; a unit resumed past them gets none."""
    unit = warmed_up_unit
    L, agent, ctx = unit.learner, unit.agent, unit.ctx
    assert ctx.steps_done == 500 and agent.counters["updates"] > 0
    assert sum(L.stats["random_steps"]) == 300 and all(n > 0 for n in L.stats["random_steps"])
    stored = agent.replay.actions[agent.replay.tree.get(np.arange(agent.replay.slots)) > 0]
    assert len(np.unique(stored)) == 18  # the warm-up's transitions cover every action

    bare = tmp_path / "ckpt"  # the checkpoint without its memory
    shutil.copytree(unit.ckpt, bare, ignore=shutil.ignore_patterns(REPLAY_DIR))
    resumed, again, ctx2 = learner(unit.config, budget_steps=700, num_actions=18)
    again.load(bare)
    assert again.replay is None  # no saved memory: it refills, yet no random steps again
    ctx2.frames = ctx.frames
    resumed.train()
    assert ctx2.steps_done == 700 and resumed.stats["random_steps"] == [0, 0]


def test_more_actor_cpus_than_ray_has_is_a_usage_error(local_ray):
    L, agent, ctx = learner(apex_config(actors=2, actor_cpus=64.0), budget_steps=100)
    with pytest.raises(UsageError, match="need 128 CPUs but Ray has 4"):
        L.train()
    assert L.actors == []


def test_an_actor_that_cannot_start_reports_its_usage_error(local_ray):
    L, agent, ctx = learner(apex_config(actors=1), budget_steps=100)
    ctx.task = "chain-999"
    with pytest.raises(UsageError, match="unknown chain task 'chain-999'"):
        L.train()
    assert L.actors == []


def test_missing_ray_is_a_one_line_usage_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    with pytest.raises(UsageError, match=r"^Ray is not installed; pip install 'benchgen\[ray\]'$"):
        RainbowIQNConfig(actors=2)
    RainbowIQNConfig(actors=0)  # the single-process agent never needs Ray
    from benchgen_agents.rainbow_iqn import apex

    with pytest.raises(UsageError, match="Ray is not installed"):
        apex.import_ray()


@pytest.mark.parametrize(
    "field, value",
    [
        ("actors", -1),
        ("actor_envs", -2),
        ("actor_chunk_steps", 0),
        ("weight_sync_updates", 0),
        ("actor_cpus", -1.0),
        ("synchronized", "yes"),
    ],
)
def test_apex_settings_are_validated(field, value):
    with pytest.raises(UsageError, match=field):
        RainbowIQNConfig(**{field: value})


def test_replay_streams_written_separately_match_a_replay_of_their_own():
    """The learner writes each actor's streams with ``streams=``; it must complete the same
    transitions, in the same order, as the actor's own replay fed the same steps."""
    rng = np.random.default_rng(0)
    kw = dict(obs_shape=(4, 2, 2), obs_dtype=np.uint8, frame_stack=4, n_step=3, gamma=0.9, priority_exponent=0.5)
    learner_memory = PrioritizedReplay(capacity=4 * 200, num_envs=4, **kw)
    actor_memory = PrioritizedReplay(capacity=2 * 200, num_envs=2, **kw)
    streams = np.array([2, 3])
    frames = rng.integers(0, 255, (2, 3, 2, 2), np.uint8)
    obs = np.concatenate([frames[:, :1]] * 4, axis=1)
    for e in range(2):
        actor_memory.start_episode(e, obs[e])
        learner_memory.start_episode(int(streams[e]), obs[e])
    for other in (0, 1):  # the other actor's streams stay untouched
        learner_memory.start_episode(other, obs[0])
    for _ in range(150):
        nxt = np.concatenate([obs[:, 1:], rng.integers(0, 255, (2, 1, 2, 2), np.uint8)], axis=1)
        term, trunc = rng.random(2) < 0.05, rng.random(2) < 0.05
        final = nxt.copy()
        if (term | trunc).any():
            nxt = np.where((term | trunc)[:, None, None, None], np.repeat(nxt[:, -1:], 4, axis=1), nxt)
        actions, rewards = rng.integers(0, 3, 2), rng.normal(size=2).astype(np.float32)
        a = actor_memory.add(obs, actions, rewards, term, trunc, nxt, final)
        b = learner_memory.add(obs, actions, rewards, term, trunc, nxt, final, streams=streams)
        assert len(a) == len(b)
        ta, tb = actor_memory.transitions(a), learner_memory.transitions(b)
        for key in ("obs", "actions", "returns", "discounts", "next_obs"):
            assert np.array_equal(ta[key], tb[key]), key
        learner_memory.insert_priorities(b, np.full(len(b), 2.0))
        obs = nxt
    assert learner_memory.num_valid == actor_memory.num_valid
    assert learner_memory.pos[0] == learner_memory.pos[1] == 3  # only their start pads


def test_cli_run_records_every_actors_episodes_under_the_one_unit(tmp_path):
    out = tmp_path / "run"
    settings = dict(TINY, actors=2, actor_chunk_steps=10, weight_sync_updates=5)  # actor_envs: --num-envs
    settings.pop("torch_threads")
    args = [f"--set={k}={v}" for k, v in settings.items()]
    result = run_cli_subprocess(
        "run",
        "chain",
        "rainbow_iqn",
        "--tasks",
        "chain-8",
        "--frames",
        "6000",
        "--num-envs",
        "2",
        "--out",
        out,
        "--no-progress",
        *args,
        plugins="tests.fixture_plugins.vector_suite",
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    db = sqlite3.connect(out / "results.sqlite")
    units = db.execute("select unit_id, status, frames_done from units").fetchall()
    assert len(units) == 1 and units[0][1:] == ("done", 6000)
    rows = db.execute("select unit_id, env_index, episode, frames_total from episodes order by episode").fetchall()
    assert {r[0] for r in rows} == {units[0][0]}
    assert {r[1] for r in rows} == {0, 1, 2, 3}  # both actors' sub-environments
    assert [r[2] for r in rows] == list(range(len(rows)))  # one contiguous numbering for the unit
    assert all(a[3] <= b[3] for a, b in zip(rows, rows[1:])) and rows[-1][3] <= 6000
    checkpoint = out / db.execute("select last_checkpoint from units").fetchone()[0]  # relative to the run
    assert (checkpoint / "rainbow_iqn.pt").is_file()  # the learner saves as the single agent does
    assert json.loads((checkpoint / "checkpoint.json").read_text())["agent_config"]["actors"] == 2


def test_cli_without_ray_says_so_in_one_line_before_anything_is_written(tmp_path):
    fake = tmp_path / "noray" / "ray"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('No module named ray')\n")
    env = cli_env("tests.fixture_plugins.vector_suite")
    env["PYTHONPATH"] = os.pathsep.join([str(fake.parent), env["PYTHONPATH"]])
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchgen",
            "run",
            "chain",
            "rainbow_iqn",
            "--set",
            "actors=2",
            "--out",
            str(tmp_path / "run"),
        ],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].endswith("Ray is not installed; pip install 'benchgen[ray]'")
    assert not (tmp_path / "run").exists()
