"""Prioritized n-step replay that stores each observation frame once (numpy only).

Layout. The memory is split into one ring buffer ("stream") per sub-environment, each
``capacity // num_envs`` slots, so a stream's slots follow its environment's time order. A
slot holds one *frame* (the newest ``C / frame_stack`` channels of an observation; the whole
vector for flat observations), the action taken from that observation, the raw reward, and
end-of-episode flags. An episode of T steps occupies ``frame_stack - 1 + T + 1`` slots::

    [pad_1 .. pad_{S-1}] [s_0,a_0,r_0] [s_1,a_1,r_1] ... [s_{T-1},a_{T-1},r_{T-1}] [s_T]

The pads hold the first observation's older frames exactly as the environment gave them
(zeros or copies of the first frame, whatever its frame stack does), and the last slot holds
``info["final_obs"]``. So a stacked state is always the ``S`` consecutive slots ending at its
own, never reaching into the previous episode, and the bootstrap state of a time-limit
truncation is the true final observation. Per stored transition that is one 84x84 frame plus
6 bytes (action, reward, flags) plus the sum tree's 16: about 7,079 bytes against the
7,056-byte floor, with ``S`` extra slots per episode.

Validity is the priority: a slot is sampled only while its sum-tree priority is positive. A
transition gets the running maximum priority (Rainbow; PER) once its n-step future is written
(n later frames, or the episode's end), and loses it when the ring overwrites it or one of
the frames its stacked state is built from.

n-step returns (Rainbow eq. 2) are computed at sample time from the stored raw rewards,
clipped: ``G = sum_{k<m} gamma^k clip(r_{t+k})`` with ``m = n`` or the steps left in the
episode. Termination cuts the return and removes the bootstrap (discount 0); truncation (time
or stuck limits, a runner stop) also cuts the return but bootstraps from the final observation
with ``gamma^m``, because the state was not terminal (Pardo et al. 2018, "Time Limits in RL").
An episode abandoned without an end (the environment is reset when training resumes) leaves
its last n-1 transitions invalid.

Sampling is proportional to ``p_i = (loss_i + eps)^omega`` through a sum tree, stratified into
``batch`` equal segments (PER appendix B.2.1), vectorized over the batch; importance weights
are ``w_i = (N * P(i))^-beta`` divided by the batch's largest weight (PER section 3.4, as the
Rainbow code SABER built on does).

Why by hand: stable-baselines3's ``ReplayBuffer`` (in benchgen's stack) has neither priorities nor
n-step returns, and stores each stacked observation whole (4 frames a transition: about 28 GB
at SABER's 1M transitions of 84x84x4 against the 7 GB here). Dopamine's replay
(``OutOfGraphPrioritizedReplayBuffer``) stores frames once and builds n-step returns at sample
time as this one does, but ships inside dopamine-rl with TensorFlow, JAX and gin, and keeps one
stream (no sub-environments); so this module follows its design in numpy alone.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from benchgen.errors import UsageError

#: slot flags
TERMINATED, TRUNCATED, END, PAD = 1, 2, 4, 8
#: PER's epsilon: keeps every priority positive (a zero priority means "not sampleable")
PRIORITY_EPS = 1e-6
_SLIDING_CHECKS = 64  # regular writes per stream checked against the rebuilt frame stack


class SumTree:
    """A binary sum tree over ``capacity`` leaves in one float64 array, batch operations only.

    Node 1 is the root, node ``i`` has children ``2i`` and ``2i+1``, leaves are nodes
    ``size .. size + capacity - 1`` with ``size`` the next power of two. Parents are recomputed
    from their children (never by adding deltas), so the sums do not drift.
    """

    def __init__(self, capacity: int):
        self.capacity = int(capacity)
        self.size = 1 << max(0, (self.capacity - 1).bit_length())
        self.depth = self.size.bit_length() - 1
        self.nodes = np.zeros(2 * self.size, np.float64)

    @property
    def total(self) -> float:
        return float(self.nodes[1])

    def get(self, indices: np.ndarray) -> np.ndarray:
        return self.nodes[np.asarray(indices) + self.size]

    def update(self, indices: np.ndarray, values: np.ndarray) -> None:
        """Set leaves ``indices`` to ``values`` (the last one wins for repeated indices)."""
        indices = np.asarray(indices, np.int64).ravel()
        values = np.broadcast_to(np.asarray(values, np.float64), indices.shape)
        if indices.size == 0:
            return
        _, last = np.unique(indices[::-1], return_index=True)
        keep = indices.size - 1 - last
        nodes = indices[keep] + self.size
        self.nodes[nodes] = values[keep]
        for _ in range(self.depth):  # one vectorized step per tree level
            nodes = nodes >> 1
            self.nodes[nodes] = self.nodes[2 * nodes] + self.nodes[2 * nodes + 1]

    def find(self, mass: np.ndarray) -> np.ndarray:
        """Leaf index for each prefix-sum value in ``mass`` (descends all values at once)."""
        mass = np.array(mass, np.float64)
        nodes = np.ones(mass.shape, np.int64)
        for _ in range(self.depth):
            left = 2 * nodes
            left_sum = self.nodes[left]
            right = mass >= left_sum
            mass = np.where(right, mass - left_sum, mass)
            nodes = left + right
        return nodes - self.size

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` leaves, drawn with probability proportional to their values, stratified."""
        total = self.total
        if not total > 0:
            raise RuntimeError("cannot sample from an empty sum tree")
        leaves = self.find((np.arange(n) + rng.random(n)) * (total / n))
        # Float rounding can walk past the last positive leaf; draw those few again.
        for _ in range(8):
            bad = (leaves >= self.capacity) | (self.get(np.minimum(leaves, self.capacity - 1)) <= 0)
            if not bad.any():
                return leaves
            leaves[bad] = self.find(rng.random(int(bad.sum())) * total)
        raise RuntimeError("sum tree sampling kept landing on empty leaves")


class PrioritizedReplay:
    """Per-environment frame streams with n-step returns and proportional prioritization."""

    def __init__(
        self,
        capacity: int,
        num_envs: int,
        obs_shape: tuple[int, ...],
        obs_dtype,
        frame_stack: int,
        n_step: int,
        gamma: float,
        priority_exponent: float,
        reward_clip: float = 1.0,
        num_actions: int = 256,
    ):
        if len(obs_shape) not in (1, 3):
            raise UsageError(f"the replay stores (C, H, W) images or flat vectors, not shape {obs_shape}")
        if len(obs_shape) == 1 and frame_stack != 1:
            frame_stack = 1  # a vector is stored whole
        if obs_shape[0] % frame_stack:
            raise UsageError(
                f"observations have {obs_shape[0]} channels, not a multiple of frame_stack={frame_stack}; set frame_stack"
            )
        self.num_envs = int(num_envs)
        self.stream_capacity = int(capacity) // self.num_envs
        self.frame_stack = S = int(frame_stack)
        self.n_step = int(n_step)
        if self.stream_capacity < self.n_step + 2 * S + 1:
            raise UsageError(
                f"replay_capacity={capacity} leaves {self.stream_capacity} slots per environment for {num_envs} "
                f"environments; it needs at least {self.n_step + 2 * S + 1} per environment"
            )
        self.obs_shape = tuple(int(d) for d in obs_shape)
        self.frame_shape = (self.obs_shape[0] // S, *self.obs_shape[1:])
        self.gamma = float(gamma)
        self.priority_exponent = float(priority_exponent)
        self.reward_clip = float(reward_clip)
        slots = self.stream_capacity * self.num_envs
        # np.zeros: pages are only touched (and counted by the OS) when written.
        self.frames = np.zeros((slots, *self.frame_shape), np.dtype(obs_dtype))
        self.actions = np.zeros(slots, np.uint8 if num_actions <= 256 else np.int32)
        self.rewards = np.zeros(slots, np.float32)
        self.flags = np.zeros(slots, np.uint8)
        self.tree = SumTree(slots)
        self._base = np.arange(self.num_envs, dtype=np.int64) * self.stream_capacity
        self.pos = np.zeros(self.num_envs, np.int64)  # next slot of each stream
        self.ep_len = np.zeros(self.num_envs, np.int64)  # regular slots of the open episode
        self.in_episode = np.zeros(self.num_envs, bool)
        self.max_priority = 1.0  # Rainbow code: new transitions get the largest priority seen
        self.num_valid = 0  # sampleable transitions
        self.num_added = 0  # transitions written since this memory was created
        self._checks_left = np.full(self.num_envs, _SLIDING_CHECKS if S > 1 else 0)

    # -- sizes ---------------------------------------------------------------------------------
    @staticmethod
    def estimate_bytes(capacity: int, obs_shape, obs_dtype, frame_stack: int) -> int:
        """Bytes a memory of ``capacity`` slots allocates (for the fits-in-memory check)."""
        stack = frame_stack if len(obs_shape) == 3 else 1
        frame = int(np.prod(obs_shape)) // stack * np.dtype(obs_dtype).itemsize
        tree = 2 * (1 << max(0, (int(capacity) - 1).bit_length())) * 8
        return int(capacity) * (frame + 1 + 4 + 1) + tree

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.frames, self.actions, self.rewards, self.flags, self.tree.nodes))

    @property
    def slots(self) -> int:
        return self.stream_capacity * self.num_envs

    # -- writing -------------------------------------------------------------------------------
    def _window(self, env: np.ndarray, start: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """Global slot indices ``start + offsets`` (ring arithmetic) of streams ``env``."""
        return self._base[env][:, None] + (start[:, None] + offsets) % self.stream_capacity

    def _set_priorities(self, indices: np.ndarray, values: np.ndarray) -> None:
        indices = np.asarray(indices, np.int64).ravel()
        values = np.broadcast_to(np.asarray(values, np.float64), indices.shape)
        uniq, first = np.unique(indices[::-1], return_index=True)
        new = values[::-1][first]
        self.num_valid += int((new > 0).sum()) - int((self.tree.get(uniq) > 0).sum())
        self.tree.update(uniq, new)

    def _write_special(self, env: int, frame: np.ndarray, flag: int) -> None:
        """Write an end or pad slot (no transition starts there)."""
        p = int(self.pos[env])
        g = self._base[env] + p
        self.frames[g] = frame
        self.actions[g] = 0
        self.rewards[g] = 0.0
        self.flags[g] = flag
        self._set_priorities(self._window(np.array([env]), np.array([p]), np.arange(self.frame_stack)), 0.0)
        self.pos[env] = (p + 1) % self.stream_capacity

    def _frames_of(self, obs: np.ndarray) -> np.ndarray:
        """Split one observation into its ``frame_stack`` stored frames, oldest first."""
        return np.asarray(obs).reshape(self.frame_stack, *self.frame_shape)

    def start_episode(self, env: int, first_obs: np.ndarray) -> None:
        """Begin a new episode in stream ``env`` (an open one is abandoned)."""
        for frame in self._frames_of(first_obs)[:-1]:
            self._write_special(env, frame, PAD)
        self.ep_len[env] = 0
        self.in_episode[env] = True

    def add(self, obs, actions, rewards, terminated, truncated, next_obs, final_obs=None, streams=None) -> np.ndarray:
        """Store one vector step: ``obs`` (N, ...) the observations acted on, then what
        ``env.step`` returned. ``final_obs`` (``info["final_obs"]``, indexable by env) is needed
        for the sub-environments whose episode ended; their next episode starts from ``next_obs``.

        ``streams`` (default: all, in order) names the stream of each row, so that a learner fed
        by several actors writes each actor's sub-environments into their own streams. Returns
        the indices of the transitions this step completed (their n-step future is now written;
        they got ``max_priority``), in an order that depends only on this call's data: a replay
        fed the same steps for the same streams completes the same transitions in the same order
        (Ape-X actors use that to compute initial priorities before the learner inserts)."""
        streams = np.arange(self.num_envs) if streams is None else np.asarray(streams, np.int64)
        if not self.in_episode[streams].all():
            raise RuntimeError("start_episode() must be called for every stream before add()")
        obs = np.asarray(obs)
        terminated = np.asarray(terminated, bool)
        truncated = np.asarray(truncated, bool) & ~terminated
        S, n, N = self.frame_stack, self.n_step, len(streams)
        if self._checks_left[streams].any():
            self._check_sliding_stack(obs, streams)
        pos = self.pos[streams]
        g = self._base[streams] + pos
        self.frames[g] = obs.reshape(N, S, *self.frame_shape)[:, -1]
        self.actions[g] = actions
        self.rewards[g] = rewards
        self.flags[g] = terminated * TERMINATED | truncated * TRUNCATED
        # Overwriting slot p invalidates the old transitions at p .. p+S-1 (their stacks used it);
        # writing s_t completes the n-step future of the transition n slots back.
        ready = self.ep_len[streams] >= n
        stale = self._window(streams, pos, np.arange(S)).ravel()
        completed = [self._base[streams[ready]] + (pos[ready] - n) % self.stream_capacity]
        self._set_priorities(
            np.concatenate([stale, completed[0]]),
            np.concatenate([np.zeros(N * S), np.full(len(completed[0]), self.max_priority)]),
        )
        self.pos[streams] = (pos + 1) % self.stream_capacity
        self.ep_len[streams] += 1
        self.num_added += N
        for row in np.flatnonzero(terminated | truncated):
            # The final observation's frame closes the episode; its last min(T, n) transitions
            # now have their (shortened) n-step future and become sampleable.
            e = int(streams[row])
            self._write_special(e, self._frames_of(final_obs[row])[-1], END)
            end = int(self.pos[e]) - 1
            k = int(min(self.ep_len[e], n))
            window = self._window(np.array([e]), np.array([end]), -np.arange(1, k + 1))[0]
            self._set_priorities(window, self.max_priority)
            completed.append(window)
            self.start_episode(e, np.asarray(next_obs)[row])
        return np.concatenate(completed)

    def _check_sliding_stack(self, obs: np.ndarray, streams: np.ndarray) -> None:
        """The first writes of each stream check that observations are a sliding frame stack."""
        for row in np.flatnonzero(self._checks_left[streams]):
            e = int(streams[row])
            self._checks_left[e] -= 1
            older = self._window(np.array([e]), np.array([self.pos[e]]), np.arange(-self.frame_stack + 1, 0))[0]
            if not np.array_equal(self.frames[older].reshape(-1), self._frames_of(obs[row])[:-1].reshape(-1)):
                raise UsageError(
                    f"observations are not a sliding stack of frame_stack={self.frame_stack} frames; "
                    "set frame_stack to the environment's stack size (1 if it does not stack frames)"
                )

    # -- reading -------------------------------------------------------------------------------
    def transitions(self, indices: np.ndarray) -> dict[str, np.ndarray]:
        """States, actions, n-step returns, bootstrap discounts and next states of ``indices``."""
        indices = np.asarray(indices, np.int64)
        B, S, n = len(indices), self.frame_stack, self.n_step
        env, p = np.divmod(indices, self.stream_capacity)
        ahead = self._window(env, p, np.arange(n))  # slots t .. t+n-1
        rewards = self.rewards[ahead]
        if self.reward_clip > 0:
            rewards = np.clip(rewards, -self.reward_clip, self.reward_clip)
        flags = self.flags[ahead]
        ended = (flags & (TERMINATED | TRUNCATED)) != 0
        # reward k counts while no earlier step of the window ended the episode
        alive = np.ones((B, n), bool)
        alive[:, 1:] = ~np.logical_or.accumulate(ended[:, :-1], axis=1)
        steps = alive.sum(axis=1)  # m: rewards in the return (n, or fewer at an episode end)
        returns = (rewards * alive * self.gamma ** np.arange(n)).sum(axis=1)
        terminal = (((flags & TERMINATED) != 0) & alive).any(axis=1)  # the episode ended in a terminal state
        discounts = np.where(terminal, 0.0, self.gamma**steps)
        stack = np.arange(-S + 1, 1)
        obs = self.frames[self._window(env, p, stack)].reshape(B, *self.obs_shape)
        next_obs = self.frames[self._window(env, p + steps, stack)].reshape(B, *self.obs_shape)
        return {
            "indices": indices,
            "obs": obs,
            "actions": self.actions[indices].astype(np.int64),
            "returns": returns.astype(np.float32),
            "discounts": discounts.astype(np.float32),
            "next_obs": next_obs,
            "steps": steps,
        }

    def sample(self, batch_size: int, beta: float, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """A prioritized batch with its importance-sampling weights (PER eq. 1 and section 3.4)."""
        indices = self.tree.sample(batch_size, rng)
        batch = self.transitions(indices)
        probs = self.tree.get(indices) / self.tree.total  # P(i) = p_i^omega / sum_k p_k^omega
        weights = (self.num_valid * probs) ** -beta
        batch["weights"] = (weights / weights.max()).astype(np.float32)
        return batch

    def update_priorities(self, indices: np.ndarray, losses: np.ndarray) -> None:
        """Priorities from per-sample losses: p = (loss + eps)^omega (PER eq. 1; SABER). With
        omega = 0 (uniform replay, DQN) every priority is 1 and stays 1: nothing to write."""
        if self.priority_exponent == 0:
            return
        priorities = (np.asarray(losses, np.float64) + PRIORITY_EPS) ** self.priority_exponent
        self._set_priorities(indices, priorities)
        self.max_priority = max(self.max_priority, float(priorities.max()))

    def insert_priorities(self, indices: np.ndarray, losses: np.ndarray) -> None:
        """Initial priorities computed elsewhere (Ape-X actors) for transitions that ``add`` just
        completed: like :meth:`update_priorities`, but a transition that is no longer sampleable
        (the ring overwrote it since) stays so."""
        indices = np.asarray(indices, np.int64)
        live = self.tree.get(indices) > 0
        if live.any():
            self.update_priorities(indices[live], np.asarray(losses)[live])

    # -- persistence ---------------------------------------------------------------------------
    _ARRAYS = ("frames", "actions", "rewards", "flags")

    def save(self, directory: Path) -> None:
        """Write the memory into ``directory`` (``.npy`` arrays and a JSON header)."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        for name in self._ARRAYS:
            np.save(directory / f"{name}.npy", getattr(self, name))
        np.save(directory / "tree.npy", self.tree.nodes)
        np.save(directory / "streams.npy", np.stack([self.pos, self.ep_len, self.in_episode, self._checks_left]))
        header = {
            "num_envs": self.num_envs,
            "stream_capacity": self.stream_capacity,
            "obs_shape": list(self.obs_shape),
            "frame_stack": self.frame_stack,
            "max_priority": self.max_priority,
            "num_valid": self.num_valid,
            "num_added": self.num_added,
        }
        (directory / "replay.json").write_text(json.dumps(header))

    def load(self, directory: Path) -> None:
        """Restore what :meth:`save` wrote into this (identically shaped) memory."""
        directory = Path(directory)
        header = json.loads((directory / "replay.json").read_text())
        mine = {
            "num_envs": self.num_envs,
            "stream_capacity": self.stream_capacity,
            "obs_shape": list(self.obs_shape),
            "frame_stack": self.frame_stack,
        }
        if any(header[k] != v for k, v in mine.items()):
            raise UsageError(f"the saved replay in {directory} has another shape ({header}); it cannot be loaded here")
        # allow_pickle=False (numpy's default, said here because it matters): a checkpoint is data, and an
        # object array in a crafted .npy would be unpickled; numpy refuses it with a ValueError instead.
        for name in self._ARRAYS:
            getattr(self, name)[...] = np.load(directory / f"{name}.npy", mmap_mode="r", allow_pickle=False)
        self.tree.nodes[...] = np.load(directory / "tree.npy", allow_pickle=False)
        self.pos, self.ep_len, in_episode, self._checks_left = np.load(directory / "streams.npy", allow_pickle=False)
        self.in_episode = in_episode.astype(bool)
        self.max_priority = float(header["max_priority"])
        self.num_valid = int(header["num_valid"])
        self.num_added = int(header["num_added"])

    @staticmethod
    def saved_num_envs(directory: Path) -> int | None:
        """Sub-environments of a memory saved in ``directory`` (None if there is none)."""
        path = Path(directory) / "replay.json"
        return json.loads(path.read_text())["num_envs"] if path.is_file() else None
