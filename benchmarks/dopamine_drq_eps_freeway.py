"""Dopamine's own DrQ(epsilon) agent on Freeway's first 12,288 agent steps (issue 26's Freeway study).

benchgen's DrQ(epsilon) gets Freeway's chicken across the road in about 4 runs of 10 within the
first 12,288 steps, where 73 of Agarwal et al. 2021's 100 published runs scored (docs/measurements/atari100k.md).
This script asks the same question of the implementation those runs came from: Dopamine's
``Atari100kRainbowAgent`` with the settings of its ``labs/atari_100k/configs/DrQ_eps.gin`` (bound
below; the pip wheel leaves the configs out), fed by ale-py through gymnasium's ``AtariPreprocessing``
(the pipeline Dopamine's ``atari_lib`` implements: frame skip 4 with the max of the last two frames,
grayscale, 84x84 by area interpolation, the minimal action set, no sticky actions), and Dopamine's
runner loop (rewards clipped to [-1, 1] for the agent, the raw score recorded). It plays the same
budget as ``benchmarks/freeway_early_runs.sh`` (six training episodes, then 10 evaluation episodes
at epsilon 0.001) and exports the episodes in the columns ``freeway_early_table.py`` reads, as style
``dopamine_agent``.

Dopamine is not a benchgen dependency (it pins gym<=0.25 and needs TensorFlow); install it beside,
in a virtual environment of its own:

    python3 -m venv /tmp/dopamine && /tmp/dopamine/bin/pip install 'jax[cpu]' flax optax gin-config \\
        tensorflow-cpu absl-py opencv-python-headless ale-py==0.12.1 gymnasium==1.4.0 \\
        && /tmp/dopamine/bin/pip install --no-deps dopamine-rl==4.1.2
    /tmp/dopamine/bin/python benchmarks/dopamine_drq_eps_freeway.py --seeds 0,1,2

Measured with dopamine-rl 4.1.2 (its March 2026 code: the per-image shift of 0-7 pixels; in 2021
one shift per batch, benchgen's ``batch_shift`` style), jax 0.10.2, flax 0.12.8.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
import types
from pathlib import Path

# Dopamine's networks module imports its Atari environment module, which imports OpenAI baselines'
# wrappers and the legacy gym, and its continuous-control networks, which import TensorFlow
# Probability's JAX substrate, all at import time. This script builds no Dopamine environment and no
# continuous-control network, and none of those installs beside gymnasium 1.x, numpy 2 and jax 0.10
# (TFP's substrate fails on this jax), so empty modules stand in for those imports (TFP's
# distributions and bijectors answer any name with an empty class, for the class statements that
# subclass them).
for _name in ("baselines", "baselines.common", "baselines.common.atari_wrappers", "gym"):
    sys.modules.setdefault(_name, types.ModuleType(_name))
_tfp_jax = types.ModuleType("tensorflow_probability.substrates.jax")
_tfp_jax.distributions = types.ModuleType("distributions")
_tfp_jax.bijectors = types.ModuleType("bijectors")
for _part in (_tfp_jax.distributions, _tfp_jax.bijectors):
    _part.__getattr__ = lambda name: type(name, (), {})
_tfp_substrates = types.ModuleType("tensorflow_probability.substrates")
_tfp_substrates.jax = _tfp_jax
for _name, _module in (
    ("tensorflow_probability", types.ModuleType("tensorflow_probability")),
    ("tensorflow_probability.substrates", _tfp_substrates),
    ("tensorflow_probability.substrates.jax", _tfp_jax),
):
    sys.modules.setdefault(_name, _module)

import ale_py  # noqa: E402
import gin  # noqa: E402
import gymnasium  # noqa: E402
import jax  # noqa: E402
import numpy as np  # noqa: E402
from dopamine.jax.agents.dqn import dqn_agent  # noqa: E402,F401  (registers its gin configurables)
from dopamine.labs.atari_100k import atari_100k_rainbow_agent  # noqa: E402

# labs/atari_100k/configs/DrQ_eps.gin (Dopamine, March 2026; the same values as its September 2021
# version), the agent's bindings. Its runner's are this script's loop below: the 27,000-step cap and
# no sticky actions as there; 10 evaluation episodes (the study's, not 100); the life-loss ending of
# training episodes left out, as Freeway has no lives.
DRQ_EPS_BINDINGS = """
JaxDQNAgent.gamma = 0.99
JaxDQNAgent.update_horizon = 10
JaxDQNAgent.min_replay_history = 1600
JaxDQNAgent.update_period = 1
JaxDQNAgent.target_update_period = 1
JaxDQNAgent.epsilon_train = 0.01
JaxDQNAgent.epsilon_eval = 0.001
JaxDQNAgent.epsilon_decay_period = 5000
JaxDQNAgent.optimizer = 'adam'
JaxFullRainbowAgent.noisy = False
JaxFullRainbowAgent.dueling = True
JaxFullRainbowAgent.double_dqn = True
JaxFullRainbowAgent.distributional = False
JaxFullRainbowAgent.num_atoms = 1
JaxFullRainbowAgent.num_updates_per_train_step = 1
JaxFullRainbowAgent.replay_scheme = 'uniform'
JaxFullRainbowAgent.epsilon_fn = @jax.agents.dqn.dqn_agent.linearly_decaying_epsilon
Atari100kRainbowAgent.data_augmentation = True
create_optimizer.learning_rate = 0.0001
create_optimizer.eps = 0.00015
ReplayBuffer.max_capacity = 1000000
ReplayBuffer.batch_size = 32
PrioritizedSamplingDistribution.max_capacity = 1000000
"""

TRAINING_STEPS = 12_288  # six Freeway episodes of 2,048 agent steps, as freeway_early_runs.sh
EVALUATION_EPISODES = 10
MAX_EPISODE_STEPS = 27_000  # Atari 100K's cap (Runner.max_steps_per_episode)
FRAME_SKIP = 4


def make_env() -> gymnasium.Env:
    """Freeway as Dopamine's Atari 100K runs play it (no sticky actions, minimal action set)."""
    gymnasium.register_envs(ale_py)
    env = gymnasium.make("ALE/Freeway-v5", frameskip=1, repeat_action_probability=0.0, full_action_space=False)
    return gymnasium.wrappers.AtariPreprocessing(
        # Freeway has no lives, so the life-loss ending of training episodes never applies
        env,
        noop_max=0,
        frame_skip=FRAME_SKIP,
        screen_size=84,
        terminal_on_life_loss=False,
        grayscale_obs=True,
        scale_obs=False,
    )


def first_observation(env, agent, max_noops: int, seed: int | None) -> np.ndarray:
    """A new episode's first observation, after Dopamine's runner's no-op start: 0 to max_noops - 1
    no-op agent steps, drawn from the agent's own random key (DataEfficientAtariRunner's
    _initialize_episode)."""
    observation, _ = env.reset(seed=seed)
    if max_noops > 0:
        agent._rng, key = jax.random.split(agent._rng)
        for _ in range(int(jax.random.randint(key, (), 0, max_noops))):
            observation, _, terminated, truncated, _ = env.step(0)
            if terminated or truncated:
                observation, _ = env.reset()
    return observation[None, ..., None]  # one environment, one channel, as the agent stores frames


def run(seed: int, max_noops: int, training_steps: int = TRAINING_STEPS) -> list[dict]:
    """Whole training episodes until training_steps agent steps, then the evaluation episodes, in
    the loop of Dopamine's DataEfficientAtariRunner._run_parallel with one environment: the agent
    trains and acts in step(), is given each transition (reward clipped) by log_transition, and is
    told of an episode's end; the raw score is recorded."""
    env = make_env()
    agent = atari_100k_rainbow_agent.Atari100kRainbowAgent(num_actions=env.action_space.n, seed=seed)
    rows, steps, episode, start = [], 0, 0, time.time()
    for phase in ("train", "train_eval"):
        agent.eval_mode = phase == "train_eval"
        agent.reset_all(first_observation(env, agent, max_noops, seed if episode == 0 else None))
        played, score, length = 0, 0.0, 0
        while (steps < training_steps) if phase == "train" else (played < EVALUATION_EPISODES):
            actions = agent.step()
            observation, reward, terminated, truncated, _ = env.step(int(actions[0]))
            score, length = score + float(reward), length + 1
            episode_end = terminated or truncated or length == MAX_EPISODE_STEPS
            new_observation = observation[None, ..., None]
            if episode_end:
                steps += length if phase == "train" else 0
                rows.append(
                    {
                        "task": "freeway",
                        "seed": seed,
                        "episode": episode,
                        "frames_total": steps * FRAME_SKIP,
                        "length_frames": length * FRAME_SKIP,
                        "score": score,
                        "phase": phase,
                        "wall_time": time.time(),
                    }
                )
                print(f"seed {seed} {phase} episode {episode}: {score:g} ({time.time() - start:.0f} s)", flush=True)
                episode, played, score, length = episode + 1, played + 1, 0.0, 0
                new_observation = first_observation(env, agent, max_noops, None)
                agent.reset_one(env_id=0)
            agent.log_transition(
                new_observation, actions, np.clip([reward], -1, 1), np.array([terminated]), np.array([episode_end])
            )
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0", help="comma-separated seeds")
    parser.add_argument(
        "--max-noops",
        type=int,
        default=30,
        help="Dopamine's runner's no-op starts: 0 to N-1 no-op agent steps (its default 30; 0: none, as benchgen)",
    )
    parser.add_argument(
        "--training-steps",
        type=int,
        default=TRAINING_STEPS,
        help="agent steps of training, in whole episodes (default the study's 12,288; more: style dopamine_agent_long)",
    )
    parser.add_argument(
        "--results", type=Path, default=Path(__file__).parent / "results" / "atari100k" / "freeway_early"
    )
    args = parser.parse_args(argv)
    gin.parse_config(DRQ_EPS_BINDINGS)
    style = "dopamine_agent" if args.max_noops == 30 else f"dopamine_agent_noops{args.max_noops}"
    if args.training_steps != TRAINING_STEPS:
        style += "_long"
    for seed in (int(s) for s in args.seeds.split(",")):
        out = args.results / f"drq_eps-{style}-seed{seed}.csv"
        if out.exists():
            print(f"done: {out}")
            continue
        rows = run(seed, args.max_noops, args.training_steps)
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        print(f"wrote {out}")


if __name__ == "__main__":
    main()
