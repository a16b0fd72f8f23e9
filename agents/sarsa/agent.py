"""The Sarsa(lambda) feature agent of the ALE papers: Bellemare et al. 2013's learner with its
Basic, BASS, DISCO, LSH and RAM features, and Liang et al. 2016's with Blob-PROST (the Sarsa of
Machado et al. 2018's Table 1).

It reads the emulator, not the suite's observations: the palette-indexed screen or the RAM
(``AgentNeeds.capabilities``, :mod:`benchgen.capabilities`), as those papers' agents did. One
sub-environment: Sarsa(lambda) learns on one stream of experience. Training:

1. the background (Basic, BASS, DISCO): ``background_samples`` steps of uniformly random play,
   each screen counted in a per-pixel colour histogram (:class:`BackgroundHistogram`);
2. DISCO's classes: ``disco_samples`` more random steps whose screens' objects it sorts into classes;
3. then, every step: the active features of the new screen, epsilon-greedy over ``Q`` (ties
   broken at random), and the Sarsa(lambda) update (:mod:`.learner`); at an episode's end
   (game over or the protocol's cap, as the papers' ALE ended episodes) the target is the reward
   alone and the traces are cleared.

Evaluation (``act``) is greedy, each sub-environment's screens read from its own emulator.
A run resumes from its last checkpoint at the start of a new episode.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np

from benchgen.agent import Agent, AgentEnvironment
from benchgen.errors import UsageError
from benchgen_agents.ale_features import FEATURE_SETS, make_extractor
from benchgen_agents.ale_features.common import SCREEN_SHAPE, BackgroundHistogram
from benchgen_agents.ale_features.ram import RAM_BYTES
from benchgen_agents.common.checkpoint_io import as_json, as_npz, save_files
from benchgen_agents.sarsa.config import SarsaConfig
from benchgen_agents.sarsa.learner import TRACES, SparseSarsaLambda

#: the checkpoint's files
STATE_FILE, ARRAYS_FILE = "sarsa.json", "sarsa_arrays.npz"


def check_sarsa_config(config: SarsaConfig, run=None) -> list[str]:
    """One-line ``UsageError`` for settings that cannot run; called while a run is planned."""
    if config.features not in FEATURE_SETS:
        raise UsageError(f"unknown feature set '{config.features}'; set features= one of {', '.join(FEATURE_SETS)}")
    if config.trace not in TRACES:
        raise UsageError(f"unknown trace '{config.trace}'; set trace= one of {', '.join(TRACES)}")
    if config.reward_scaling not in ("first_reward", "none"):
        raise UsageError("reward_scaling must be first_reward or none")
    p = config.resolved()
    if not (0 < p["alpha"] and 0 <= p["lam"] <= 1 and 0 <= p["gamma"] <= 1 and 0 <= p["epsilon"] <= 1):
        raise UsageError("Sarsa needs alpha > 0 and lam, gamma, epsilon in [0, 1]")
    if config.background_samples < 0 or config.disco_samples < 0 or config.trace_threshold < 0:
        raise UsageError("background_samples, disco_samples and trace_threshold must be 0 or more")
    if min(config.lsh_vectors, config.lsh_nonzero, config.lsh_buckets, config.blob_neighbourhood) < 1:
        raise UsageError("lsh_vectors, lsh_nonzero, lsh_buckets and blob_neighbourhood must be 1 or more")
    if config.lsh_nonzero > 7 * SCREEN_SHAPE[0] * SCREEN_SHAPE[1]:
        raise UsageError(f"lsh_nonzero is at most the screen's {7 * SCREEN_SHAPE[0] * SCREEN_SHAPE[1]:,} bits")
    num_envs = getattr(run, "num_envs", None)
    if num_envs is not None and num_envs != 1:
        raise UsageError(f"Sarsa(lambda) learns on one sub-environment; run it with --num-envs 1, not {num_envs}")
    return []


class SarsaAgent(Agent):
    """Sarsa(lambda), linear in the chosen feature set's binary features."""

    def __init__(self, config: SarsaConfig, environment: AgentEnvironment):
        super().__init__(config, environment)
        check_sarsa_config(config)
        if not hasattr(self.action_space, "n"):
            raise UsageError(f"Sarsa needs a discrete action space, got {self.action_space}")
        self.params = config.resolved()
        self.num_actions = int(self.action_space.n)
        self.seed = int(config.seed_offset)  # replaced by the unit's seed when training starts
        self.rng = np.random.default_rng(self.seed)
        self.extractor = self._extractor()
        self.learner = SparseSarsaLambda(
            self.extractor.num_features,
            self.num_actions,
            alpha=self.params["alpha"],
            gamma=self.params["gamma"],
            lam=self.params["lam"],
            trace=config.trace,
            trace_threshold=config.trace_threshold,
        )
        wants_background = self.extractor.uses_background and config.background_samples > 0
        self.histogram = BackgroundHistogram() if wants_background else None
        if hasattr(self.extractor, "finish") and config.disco_samples == 0:
            self.extractor.finish()  # no samples: no classes, only what an empty class list gives
        self.background: np.ndarray | None = None
        self.first_reward = 0.0  # magnitude of the first non-zero reward (0: none yet)
        self.started = False  # training seeded and begun (a resumed agent keeps its seed)
        self._streams: dict[int, object] = {}  # act(): one extractor per sub-environment

    def _extractor(self):
        c = self.config
        return make_extractor(
            c.features,
            self.seed,
            lsh_vectors=c.lsh_vectors,
            lsh_nonzero=c.lsh_nonzero,
            lsh_buckets=c.lsh_buckets,
            blob_neighbourhood=c.blob_neighbourhood,
        )

    # -- reading the emulator ----------------------------------------------------------------
    def _screen(self, i: int) -> np.ndarray:
        """Sub-environment ``i``'s palette screen; a smaller one (another suite's) in the top-left
        corner of an Atari-sized one, so that every feature index stays in its range."""
        if self.emulators is None:
            raise UsageError(
                "the Sarsa feature agent reads the emulator; run it with `benchgen run` on a suite that offers it"
            )
        screen = self.emulators.palette_screen(i)
        if screen.shape == SCREEN_SHAPE:
            return screen
        if screen.ndim != 2 or screen.shape[0] > SCREEN_SHAPE[0] or screen.shape[1] > SCREEN_SHAPE[1]:
            raise UsageError(
                f"the ALE feature sets read screens of at most 210 x 160 palette indices, not {screen.shape}"
            )
        canvas = np.zeros(SCREEN_SHAPE, dtype=np.uint8)
        canvas[: screen.shape[0], : screen.shape[1]] = screen
        return canvas

    def _input(self, i: int) -> np.ndarray:
        if self.extractor.inputs != "ram":
            return self._screen(i)
        if self.emulators is None:
            raise UsageError(
                "the Sarsa feature agent reads the emulator; run it with `benchgen run` on a suite that offers it"
            )
        ram = self.emulators.ram(i)
        if len(ram) > RAM_BYTES:
            raise UsageError(f"the RAM features read at most the Atari console's {RAM_BYTES} bytes, not {len(ram)}")
        return np.pad(ram, (0, RAM_BYTES - len(ram)))  # a smaller RAM: its bits first, zeros after

    def _rows(self, extractor, i: int) -> np.ndarray:
        return self.learner.rows(extractor(self._input(i), self.background))

    def _choose(self, q: np.ndarray, epsilon: float) -> int:
        if epsilon > 0 and self.rng.random() < epsilon:
            return int(self.rng.integers(self.num_actions))
        best = np.flatnonzero(q == q.max())
        return int(best[0] if len(best) == 1 else self.rng.choice(best))

    def _scaled(self, reward: float) -> float:
        if self.config.reward_scaling == "none":
            return reward
        if reward != 0 and self.first_reward == 0:
            self.first_reward = abs(reward)
        return reward / self.first_reward if self.first_reward else 0.0

    # -- training ------------------------------------------------------------------------------
    def learn(self, env, ctx) -> None:
        if env.num_envs != 1:
            raise UsageError(
                f"Sarsa(lambda) learns on one sub-environment; run it with --num-envs 1, not {env.num_envs}"
            )
        if not self.started:
            self.seed = int(ctx.seed) + int(self.config.seed_offset)
            self.rng = np.random.default_rng(self.seed)
            if self.config.features == "lsh":  # its random vectors come from the unit's seed
                self.extractor = self._extractor()
            self.started = True
        env.reset(seed=ctx.reset_seed)
        self._learn_background(env, ctx)
        self._discover_classes(env, ctx)
        if ctx.finished:
            return
        eps, gamma = self.params["epsilon"], self.params["gamma"]
        learner, extractor = self.learner, self.extractor
        learner.clear_traces()
        extractor.reset()
        rows = self._rows(extractor, 0)
        action = self._choose(learner.values(rows), eps)
        while not ctx.finished:
            _, reward, terminated, truncated, _ = env.step(np.array([action]))
            r = self._scaled(float(reward[0]))
            q = learner.values(rows)[action]  # with the weights of the last update
            if terminated[0] or truncated[0]:
                learner.update(rows, action, r - q)
                learner.clear_traces()
                extractor.reset()
                rows = self._rows(extractor, 0)  # the new episode's first screen (autoreset)
                action = self._choose(learner.values(rows), eps)
            else:
                next_rows = self._rows(extractor, 0)
                next_q = learner.values(next_rows)
                next_action = self._choose(next_q, eps)
                learner.update(rows, action, r + gamma * next_q[next_action] - q)
                rows, action = next_rows, next_action
            ctx.maybe_checkpoint()

    def _learn_background(self, env, ctx) -> None:
        """Random play until the histogram holds ``background_samples`` screens."""
        if self.histogram is None or self.background is not None:
            return
        while self.histogram.samples < self.config.background_samples and not ctx.finished:
            self.histogram.add(self._screen(0))
            env.step(np.array([int(self.rng.integers(self.num_actions))]))
            ctx.maybe_checkpoint()
        if self.histogram.samples >= self.config.background_samples:
            self.background = self.histogram.background()
            self.histogram = None

    def _discover_classes(self, env, ctx) -> None:
        """DISCO: random play until its classes are found on ``disco_samples`` screens."""
        extractor = self.extractor
        if not hasattr(extractor, "finish") or extractor.classes is not None:
            return
        while extractor.samples < self.config.disco_samples and not ctx.finished:
            extractor.observe(self._screen(0), self.background)
            env.step(np.array([int(self.rng.integers(self.num_actions))]))
            ctx.maybe_checkpoint()
        if extractor.samples >= self.config.disco_samples:
            extractor.finish()

    # -- acting ----------------------------------------------------------------------------
    def act(self, observations, greedy: bool = True) -> np.ndarray:
        actions = np.empty(len(observations), dtype=np.int64)
        for i in range(len(observations)):
            stream = self._streams.get(i)
            if stream is None:  # each sub-environment's own (Blob-PROST remembers the last screen)
                stream = self._streams[i] = copy.copy(self._playing_extractor())
                stream.reset()
            rows = self._rows(stream, i)
            actions[i] = self._choose(self.learner.values(rows), 0.0 if greedy else self.params["epsilon"])
        return actions

    def _playing_extractor(self):
        """The extractor evaluation plays with: training's, or, where the budget ended (or an
        evaluation round came) before DISCO found its classes, a copy that finishes discovery with
        the screens sampled so far, as discovery would with ``disco_samples`` of them; training's
        own discovery goes on unchanged."""
        if getattr(self.extractor, "classes", True) is not None:
            return self.extractor
        finished = copy.deepcopy(self.extractor)
        finished.finish()
        return finished

    def use_emulators(self, emulators) -> None:
        super().use_emulators(emulators)
        self._streams = {}  # another env: its sub-environments start afresh

    # -- checkpoints -------------------------------------------------------------------------
    def save(self, directory: Path) -> None:
        directory = Path(directory)
        arrays = {f"learner_{k}": v for k, v in self.learner.state().items()}
        if self.background is not None:
            arrays["background"] = self.background
        if self.histogram is not None:
            arrays["histogram"] = self.histogram.counts
        state = {
            "features": self.config.features,
            "seed": self.seed,
            "started": self.started,
            "first_reward": self.first_reward,
            "histogram_samples": None if self.histogram is None else self.histogram.samples,
            "bit_generator": self.rng.bit_generator.state,
        }
        if hasattr(self.extractor, "finish"):  # DISCO: its discovery so far and its classes
            state["disco"] = self.extractor.state()
        save_files({directory / ARRAYS_FILE: as_npz(arrays), directory / STATE_FILE: as_json(state)})

    def load(self, directory: Path) -> None:
        directory = Path(directory)
        if not (directory / STATE_FILE).is_file():
            return  # another agent's checkpoint: nothing of ours to restore
        state = json.loads((directory / STATE_FILE).read_text())
        if state["features"] != self.config.features:
            raise UsageError(
                f"this checkpoint learned {state['features']} features, not {self.config.features}; "
                f"set features={state['features']}"
            )
        self.seed, self.started, self.first_reward = int(state["seed"]), bool(state["started"]), state["first_reward"]
        self.rng.bit_generator.state = state["bit_generator"]
        if self.config.features == "lsh":
            self.extractor = self._extractor()
        with np.load(directory / ARRAYS_FILE) as arrays:
            self.learner.load_state({k[len("learner_") :]: arrays[k] for k in arrays.files if k.startswith("learner_")})
            self.background = arrays["background"] if "background" in arrays.files else None
            if "histogram" in arrays.files:
                self.histogram = BackgroundHistogram()
                self.histogram.counts[:] = arrays["histogram"]
                self.histogram.samples = int(state["histogram_samples"])
            else:
                self.histogram = None
            if "disco" in state:
                self.extractor.load_state(state["disco"])
        self._streams = {}
