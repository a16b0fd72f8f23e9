"""Environments in other processes: the part of the agent contract for distributed agents.

An agent may step the unit's environment in other processes or on other nodes (Ape-X actors,
the workers of a joint learner) and still have every episode recorded under its unit, numbered
with the unit's other episodes, and every frame counted in the unit's budget:

1. ``factory = ctx.remote_envs()`` (:meth:`benchgen.agent.TrainingContext.remote_envs`) is a
   picklable :class:`RemoteEnvFactory`. Ship it to the other process and call
   ``env, collector = factory(num_envs, seed, worker=i)`` there: the unit's suite env (its
   tasks, ``mode="train"``) under an :class:`EpisodeCollector`, under the suite's agent-side
   wrappers for this agent; the stack of the unit's own env, with the collector in the place
   of the recorder.
2. Step ``env`` as the unit's own env (reset it once, before the first step: the collector
   refuses a reset mid-episode, as the recorder does). From time to time call
   ``collector.report()`` and ship the :class:`RemoteEpisodes` it returns to the unit's process.
3. There, ``ctx.report_remote_episodes(report)`` counts the report's frames in the unit's frame
   counter (so ``ctx.steps_done`` and ``ctx.finished`` include them) and commits its episodes
   under the unit, numbered after the episodes recorded before them.

Integrity: a score is recorded only if the suite env produced it. The collector takes its facts
from the suite env's ``pop_episode_ends`` (below every agent wrapper) and seals each report
(HMAC-SHA256 over the report's bytes) with the key of the context that made the factory; the
context opens only reports sealed with its own key, each once and in the order the collector
made them (:class:`EpisodeInbox`). A changed score, a report made by hand, a report of another
unit, one reported twice or out of order are refused (``RuntimeError``) and nothing of them is
recorded. No public call seals chosen facts; the key travels inside the factory to processes
the agent starts, so the seal keeps the protocol checkable, it does not stop agent code that
sets out to read the key (agents run in the runner's process in any case).

``factory(num_envs, seed, worker=w, workers=W)`` builds worker ``w``'s share of a data-parallel
agent's ``W`` workers (see :meth:`RemoteEnvFactory.suite_env`).

A worker's episodes are recorded with ``env_index = worker * num_envs + i``, ``i`` being the
sub-environment of its env: workers built with the same ``num_envs`` and distinct ``worker``
numbers record distinct indices. Frames count when their report arrives: play never reported
(a chunk in flight when the budget is spent) is not counted, and the agent decides how much
remote play to ask for with ``ctx.budget_steps - ctx.steps_done`` in mind.
"""

from __future__ import annotations

import abc
import dataclasses
import hashlib
import hmac
import json
import secrets
from typing import Any

import gymnasium as gym
import numpy as np

from benchgen.suite import EpisodeEnd, SuiteVectorEnv


class EpisodeTracker(gym.vector.VectorWrapper):
    """The wrapper right above a suite env: the recorder in the unit's process, an
    :class:`EpisodeCollector` elsewhere. It counts frames, refuses a reset while an episode is
    under way, and hands each step's finished episodes (the suite's own :class:`EpisodeEnd`
    facts) to :meth:`take`."""

    def __init__(self, env: SuiteVectorEnv, frames_done: int = 0):
        super().__init__(env)
        self.suite_env = env
        self.frames_per_step = env.frames_per_step
        #: emulator frames used, all sub-environments together
        self.frames_done = frames_done
        self._steps_into_episode = np.zeros(env.num_envs, dtype=np.int64)

    def reset(self, *, seed=None, options=None):
        """Reset the suite env; refused while an episode is under way, because the running
        episodes would end unrecorded (the suite env starts the next episode by itself)."""
        running = np.flatnonzero(self._steps_into_episode)
        if running.size:
            raise RuntimeError(
                f"the agent reset the env while sub-environments {running.tolist()} were mid-episode; "
                "their episodes would be lost. Suite envs autoreset (SAME_STEP): reset once, before the first step"
            )
        return self.env.reset(seed=seed, options=options)

    def step(self, actions):
        obs, rewards, terminated, truncated, infos = self.env.step(actions)
        self.frames_done += self.num_envs * self.frames_per_step
        self._steps_into_episode += 1
        ends = self.suite_env.pop_episode_ends()
        # the suite's own episode ends, not the agent's terminated flags (a protocol may signal a
        # lost life as a terminated training episode while the recorded episode goes on)
        for end in ends:
            self._steps_into_episode[end.env_index] = 0
        if ends:
            self.take(ends)
        return obs, rewards, terminated, truncated, infos

    def take(self, ends: list[EpisodeEnd]) -> None:
        """What to do with the episodes that finished in a step (``frames_done`` includes it)."""
        raise NotImplementedError


def jsonable(value: Any) -> Any:
    """A numpy scalar or array as plain Python (what JSON and the results store hold)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value


class CollectorKey:
    """The secret a context's collectors seal their reports with. Opaque: it has no public
    method, so no public call seals facts a collector did not take from a suite env."""

    def __init__(self, secret: bytes):
        self._secret = secret

    def _seal(self, payload: bytes) -> bytes:
        return hmac.new(self._secret, payload, hashlib.sha256).digest()

    def __repr__(self) -> str:
        return "CollectorKey(...)"


@dataclasses.dataclass(frozen=True)
class RemoteEpisodes:
    """One :meth:`EpisodeCollector.report`: the episodes finished and the frames used since the
    collector's previous report, as sealed bytes. Pass it, unchanged, to
    ``ctx.report_remote_episodes``; :attr:`frames` and :attr:`episodes` are copies to read."""

    payload: bytes
    """The facts, as JSON."""
    seal: bytes
    """HMAC-SHA256 of ``payload`` under the context's :class:`CollectorKey`."""

    @property
    def frames(self) -> int:
        """Emulator frames the collector's env used for this report."""
        return int(json.loads(self.payload)["frames"])

    @property
    def episodes(self) -> list[EpisodeEnd]:
        """The finished episodes' facts (copies: changing them changes nothing recorded)."""
        return [EpisodeEnd(**e) for e in json.loads(self.payload)["episodes"]]


class EpisodeCollector(EpisodeTracker):
    """The recorder's stand-in in another process: counts frames and keeps the suite env's
    finished-episode facts until :meth:`report` seals them for the unit's process. Built by a
    :class:`RemoteEnvFactory`; it never touches scores."""

    def __init__(self, env: SuiteVectorEnv, key: CollectorKey, worker: int = 0):
        super().__init__(env)
        self.key = key
        #: which of the agent's workers this is (``env_index = worker * num_envs + i``)
        self.worker = int(worker)
        self._id = secrets.token_hex(8)  # tells this collector's report sequence from others'
        self._sequence = 0
        self._reported_frames = 0
        self._ends: list[EpisodeEnd] = []

    def take(self, ends: list[EpisodeEnd]) -> None:
        self._ends.extend(ends)

    def report(self) -> RemoteEpisodes:
        """The episodes finished and the frames used since the last report, sealed."""
        offset = self.worker * self.num_envs
        facts = {
            "collector": self._id,
            "sequence": self._sequence,
            "frames": self.frames_done - self._reported_frames,
            "episodes": [dict(dataclasses.asdict(end), env_index=offset + int(end.env_index)) for end in self._ends],
        }
        payload = json.dumps(facts, default=jsonable).encode()
        self._sequence += 1
        self._reported_frames = self.frames_done
        self._ends = []
        return RemoteEpisodes(payload, self.key._seal(payload))


class EpisodeInbox:
    """The receiving end, in the unit's process: the key its factories' collectors seal with,
    and :meth:`open`, which accepts only their reports, each once and in order."""

    def __init__(self):
        self.key = CollectorKey(secrets.token_bytes(32))
        self._next: dict[str, int] = {}  # collector -> sequence number of its next report

    def open(self, report: RemoteEpisodes) -> tuple[list[EpisodeEnd], int]:
        """(finished episodes, frames used) of a genuine report; ``RuntimeError`` otherwise."""
        genuine = (
            isinstance(report, RemoteEpisodes)
            and isinstance(report.payload, bytes)
            and isinstance(report.seal, bytes)
            and hmac.compare_digest(self.key._seal(report.payload), report.seal)
        )
        if not genuine:
            raise RuntimeError(
                "refused a remote episode report that no collector of this unit's ctx.remote_envs() "
                "sealed (changed or made by hand); pass collector.report() on unchanged"
            )
        facts = json.loads(report.payload)
        expected = self._next.get(facts["collector"], 0)
        if facts["sequence"] != expected:
            raise RuntimeError(
                f"refused remote episode report {facts['sequence']} of a collector whose next report "
                f"is {expected}; pass each collector.report() on once, in order"
            )
        self._next[facts["collector"]] = expected + 1
        return report.episodes, report.frames


class RemoteEnvFactory(abc.ABC):
    """What ``ctx.remote_envs()`` returns: picklable; ``factory(num_envs, seed, worker=0)``
    builds, in the process that calls it, ``(env, collector)``: the unit's suite env under an
    :class:`EpisodeCollector` under the suite's agent wrappers (see :mod:`benchgen.remote`).

    The runner implements it; a test drives an agent without a run by subclassing it with a
    suite env of its own and sealing with the key of an :class:`EpisodeInbox`."""

    def __init__(self, key: CollectorKey):
        self.key = key

    @abc.abstractmethod
    def suite_env(self, num_envs: int, seed: int, worker: int = 0, workers: int = 1) -> SuiteVectorEnv:
        """The unit's suite env with ``num_envs`` sub-environments, seeded with ``seed``. A joint
        unit's tasks: with ``workers == 1`` at least one sub-environment per task; the workers of
        a data-parallel agent (``workers > 1``) divide them, worker ``w``'s sub-environment ``i``
        playing task ``(w * num_envs + i) % T``."""

    def agent_wrappers(self, env: gym.vector.VectorEnv) -> gym.vector.VectorEnv:
        """The suite's agent-side wrappers for the agent, over the collector (none by default)."""
        return env

    def __call__(
        self, num_envs: int, seed: int, worker: int = 0, workers: int = 1
    ) -> tuple[gym.vector.VectorEnv, EpisodeCollector]:
        collector = EpisodeCollector(self.suite_env(num_envs, seed, worker, workers), self.key, worker)
        return self.agent_wrappers(collector), collector
