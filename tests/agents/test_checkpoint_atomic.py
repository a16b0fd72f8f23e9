"""A checkpoint is never left half-written: an agent's save that is interrupted part-way (a kill,
a full disk) leaves the checkpoint that was there before whole and loadable, and no temporary file.

The save is interrupted inside the file writes themselves: ``checkpoint_io``'s files are opened
through a handle whose ``write`` writes half of one chunk and raises. Each agent is interrupted at
its first write, at one in the middle and at its last (the last file's, once the others are
written), and must still load what it saved before; a save that is not interrupted loads back.
"""

from __future__ import annotations

import builtins

import gymnasium as gym
import numpy as np
import pytest

from benchgen.agent import AgentEnvironment
from benchgen_agents.brute.agent import BruteAgent
from benchgen_agents.brute.config import BruteConfig
from benchgen_agents.common import checkpoint_io
from benchgen_agents.jerk.agent import JerkAgent, JerkInstance, Solution
from benchgen_agents.jerk.config import JerkConfig
from benchgen_agents.planning.brfs import BrFSAgent
from benchgen_agents.planning.config import BrFSConfig, UCTConfig
from benchgen_agents.planning.uct import UCTAgent
from benchgen_agents.random_agent import RandomAgent, RandomConfig
from benchgen_agents.sarsa.agent import SarsaAgent
from benchgen_agents.sarsa.config import SarsaConfig
from tests.agents.test_brute import Context as BruteContext
from tests.agents.test_brute import SequenceGame
from tests.fixture_plugins.platformer_suite import SEMANTICS, PlatformerVectorEnv

OBS = gym.spaces.Box(0, 1, (1,), np.float32)
ACTIONS = gym.spaces.Discrete(4)


class Interrupted(BaseException):
    """A kill arriving while a checkpoint is written (not an ``Exception``: nothing may swallow it)."""


class Writes:
    """Counts the writes into checkpoint files; the ``fail_at``-th writes half its chunk and raises."""

    def __init__(self, fail_at: int | None = None):
        self.count, self.fail_at = 0, fail_at

    def open(self, path, mode="r", *args, **kwargs):
        return _Handle(builtins.open(path, mode, *args, **kwargs), self)


class _Handle:
    def __init__(self, handle, writes: Writes):
        self._handle, self._writes = handle, writes

    def write(self, data):
        self._writes.count += 1
        if self._writes.count == self._writes.fail_at:
            self._handle.write(bytes(data)[: len(data) // 2])
            raise Interrupted
        return self._handle.write(data)

    def __getattr__(self, name):
        return getattr(self._handle, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return self._handle.__exit__(*exc)


# -- each agent: made with some state, changed, and what a load restores -------------------------
def _rng_state(agent):
    return agent.rng.bit_generator.state


def make_random():
    return RandomAgent(RandomConfig(), AgentEnvironment(OBS, ACTIONS))


def make_uct():
    return UCTAgent(UCTConfig(), AgentEnvironment(OBS, ACTIONS, 4))


def make_brfs():
    return BrFSAgent(BrFSConfig(), AgentEnvironment(OBS, ACTIONS, 4))


def make_brute(tmp_path=None):
    agent = BruteAgent(BruteConfig(epsilon=0.05), AgentEnvironment(OBS, SequenceGame.single_action_space, 4))
    if tmp_path is not None:  # a tree to save
        game = SequenceGame(0.0)
        agent.learn(game, BruteContext(game, 50, tmp_path))
    return agent


def brute_state(agent):
    edges, queue = [], [agent.root]
    while queue:
        node = queue.pop()
        for action, edge in sorted(node.edges.items()):
            edges.append((action, *edge[:4]))
            queue.append(edge[4])
    return _rng_state(agent), agent.episodes, edges


def advance_brute(agent):
    agent.rng.random()
    agent.episodes += 1
    agent.root.child(0)  # a new edge
    agent.root.edges[0][0] += 1


def make_jerk(tmp_path=None):
    space = PlatformerVectorEnv(["walls-30"], 0).single_action_space
    agent = JerkAgent(JerkConfig(), AgentEnvironment(None, space, action_semantics=SEMANTICS, suite="platformer"))
    if tmp_path is not None:  # two sub-environments' solutions to save
        for i in range(2):
            inst = JerkInstance(agent.config, agent.semantics, np.random.default_rng(i))
            inst.solutions = [Solution(np.arange(5 + i, dtype=np.int16), [1.0, 2.0]), Solution(np.ones(3, np.int16))]
            inst.solutions[1].rewards.append(0.5)
            agent.instances.append(inst)
    return agent


def jerk_state(agent):
    instances = agent.instances or agent._loaded  # (a loaded agent keeps them until it learns)
    return [
        (inst.rng.bit_generator.state, [(s.actions.tolist(), s.rewards) for s in inst.solutions]) for inst in instances
    ]


def advance_jerk(agent):
    for inst in agent.instances:
        inst.rng.random()
        inst.solutions.append(Solution(np.full(4, 2, np.int16), [3.0]))


def make_sarsa(tmp_path=None):
    agent = SarsaAgent(SarsaConfig(features="basic", background_samples=16), AgentEnvironment(OBS, ACTIONS))
    if tmp_path is not None:  # weights, a background and a first reward to save
        agent.learner.update(agent.learner.rows(np.array([3, 70, 900])), action=1, delta=1.0)
        agent.background = np.random.default_rng(0).integers(0, 128, (210, 160), dtype=np.uint8)
        agent.started, agent.first_reward = True, 2.0
    return agent


def sarsa_state(agent):
    learner = {k: np.asarray(v).tolist() for k, v in agent.learner.state().items()}
    background = None if agent.background is None else agent.background.tolist()
    return _rng_state(agent), learner, background, agent.started, agent.first_reward


def advance_sarsa(agent):
    agent.rng.random()
    agent.learner.update(agent.learner.rows(np.array([5, 1000])), action=2, delta=-1.0)
    agent.first_reward = 4.0


def _plain(make):
    return lambda tmp_path=None: make()


def _advance_rng(agent):
    agent.rng.random()


AGENTS = {
    # name: (make(tmp_path) -> an agent with state to save (make() -> a fresh one), its state, change it)
    "sarsa": (make_sarsa, sarsa_state, advance_sarsa),
    "jerk": (make_jerk, jerk_state, advance_jerk),
    "brute": (make_brute, brute_state, advance_brute),
    "uct": (_plain(make_uct), _rng_state, _advance_rng),
    "brfs": (_plain(make_brfs), _rng_state, _advance_rng),
    "random": (_plain(make_random), _rng_state, _advance_rng),
}


def _files(directory):
    return {p.name: p.read_bytes() for p in directory.iterdir()}


@pytest.mark.parametrize("name", AGENTS)
def test_a_save_and_load_round_trip_restores_the_agent(name, tmp_path):
    make, state, _ = AGENTS[name]
    agent = make(tmp_path / "work")
    (tmp_path / "ckpt").mkdir()
    agent.save(tmp_path / "ckpt")
    fresh = make()
    fresh.load(tmp_path / "ckpt")
    assert state(fresh) == state(agent)
    assert not [p for p in (tmp_path / "ckpt").iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("name", AGENTS)
def test_an_interrupted_save_leaves_the_previous_checkpoint_whole_and_no_temporary_file(name, tmp_path, monkeypatch):
    make, state, advance = AGENTS[name]
    agent = make(tmp_path / "work")
    ckpt, scratch = tmp_path / "ckpt", tmp_path / "scratch"
    ckpt.mkdir(), scratch.mkdir()
    agent.save(ckpt)
    before, saved = _files(ckpt), state(agent)
    advance(agent)
    assert state(agent) != saved

    counting = Writes()
    monkeypatch.setattr(checkpoint_io, "open", counting.open, raising=False)
    agent.save(scratch)  # how many writes a save makes
    assert counting.count > 0, "the agent's save does not write through checkpoint_io"

    for fail_at in sorted({1, (counting.count + 1) // 2, counting.count}):
        monkeypatch.setattr(checkpoint_io, "open", Writes(fail_at).open, raising=False)
        with pytest.raises(Interrupted):
            agent.save(ckpt)
        assert _files(ckpt) == before, f"interrupted at write {fail_at} of {counting.count}"
        restored = make()
        restored.load(ckpt)
        assert state(restored) == saved

    monkeypatch.undo()
    agent.save(ckpt)  # the next save, not interrupted, replaces the checkpoint
    restored = make()
    restored.load(ckpt)
    assert state(restored) == state(agent)
    assert sorted(_files(ckpt)) == sorted(before)
