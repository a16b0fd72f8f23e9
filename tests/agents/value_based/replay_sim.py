"""A scripted multi-environment stream for replay tests: every frame carries a unique id, so a
stacked state read back from the replay can be matched with the observation the env gave."""

from __future__ import annotations

import numpy as np


def encode(frame_id: int) -> np.ndarray:
    """A (1, 2, 2) uint8 frame holding ``frame_id`` in base 256."""
    return np.array([(frame_id >> (8 * k)) & 255 for k in range(4)], np.uint8).reshape(1, 2, 2)


def decode(frame: np.ndarray) -> int:
    flat = np.asarray(frame, np.int64).reshape(-1)
    return int(sum(int(v) << (8 * k) for k, v in enumerate(flat)))


class Step:
    """One transition as the environment produced it."""

    def __init__(self, env, episode, t, obs, reward, end=None):
        self.env, self.episode, self.t, self.obs, self.reward, self.end = env, episode, t, obs, reward, end


class ScriptedStreams:
    """``schedules[e]`` lists (length, "term"|"trunc") episodes of sub-environment ``e``; a
    negative length leaves the episode open at the end. Observations are sliding stacks of
    ``stack`` frames, padded at reset with zeros or with copies of the first frame."""

    def __init__(self, schedules, stack=4, pad="zeros", seed=0):
        self.schedules, self.stack, self.pad = schedules, stack, pad
        self.rng = np.random.default_rng(seed)
        self.next_id = 1
        self.episodes: dict[tuple[int, int], list[Step]] = {}
        self.final_obs: dict[tuple[int, int], np.ndarray] = {}
        self.by_id: dict[int, tuple[int, int, int]] = {}  # newest frame id -> (env, episode, t)

    def _new_frame(self, key, t):
        fid = self.next_id
        self.next_id += 1
        self.by_id[fid] = (*key, t)
        return encode(fid)

    def _first(self, key):
        frame = self._new_frame(key, 0)
        older = [np.zeros_like(frame) if self.pad == "zeros" else frame] * (self.stack - 1)
        return np.concatenate([*older, frame])

    def _advance(self, stack, key, t):
        return np.concatenate([stack[1:], self._new_frame(key, t)])

    def run(self, replay, after_step=None):
        """Feed every schedule through ``replay.add`` in lockstep, calling ``after_step()`` after each."""
        n = len(self.schedules)
        queues = [list(s) for s in self.schedules]
        ep_index = [0] * n
        t = [0] * n
        obs = np.stack([self._first((e, 0)) for e in range(n)])
        for e in range(n):
            replay.start_episode(e, obs[e])
            self.episodes[(e, 0)] = []
        while any(queues):
            rewards = self.rng.normal(size=n).astype(np.float32) * 3
            term = np.zeros(n, bool)
            trunc = np.zeros(n, bool)
            nxt = np.empty_like(obs)
            final = [None] * n
            for e in range(n):
                key = (e, ep_index[e])
                # an env whose script is over keeps playing one open episode
                length, kind = queues[e][0] if queues[e] else (-1, None)
                t[e] += 1
                if length > 0 and t[e] == length:
                    term[e], trunc[e] = kind == "term", kind == "trunc"
                    final[e] = self._advance(obs[e], key, t[e])
                    self.final_obs[key] = final[e]
                    self.episodes[key].append(Step(e, key[1], t[e] - 1, obs[e], float(rewards[e]), kind))
                    queues[e].pop(0)
                    ep_index[e] += 1
                    t[e] = 0
                    self.episodes[(e, ep_index[e])] = []
                    nxt[e] = self._first((e, ep_index[e]))
                else:
                    self.episodes[key].append(Step(e, key[1], t[e] - 1, obs[e], float(rewards[e])))
                    nxt[e] = self._advance(obs[e], key, t[e])
            replay.add(obs, np.zeros(n, np.int64), rewards, term, trunc, nxt, final)
            obs = nxt
            if after_step is not None:
                after_step()
        self.last_obs = obs

    def expected(self, key, t, n_step, gamma):
        """(return, discount, next observation, sampleable?) of step ``t`` of episode ``key``."""
        steps = self.episodes[key]
        ended = bool(steps) and steps[-1].end is not None
        length = len(steps)
        m = min(n_step, length - t)
        ret = sum(gamma**j * steps[t + j].reward for j in range(m))
        if t + m < length:
            nxt = steps[t + m].obs
        else:
            nxt = self.final_obs.get(key)
        terminal = ended and t + m == length and steps[-1].end == "term"
        ready = ended or t + n_step < length  # s_{t+n} written, or the episode ended
        return ret, (0.0 if terminal else gamma**m), nxt, ready
