"""What ``baselines_round.py`` and ``baselines_train.py`` share: baselines @ 9ee399f made importable
under TensorFlow 2.15 and numpy 1.26, the command-line options both take, and train-procgen's
coinrun environment (train_procgen/train.py @ 1a2ae21: easy, levels 0-199, 64 environments,
``VecExtractDictObs``, ``VecMonitor``, ``VecNormalize(ob=False)``) in one TensorFlow session of one thread.

Two things are given to baselines' unchanged code: ``tensorflow`` resolves to ``tf.compat.v1`` with
TensorFlow 2's behaviour off (TensorFlow 1.15 has no Python 3.11 wheel), and numpy's ``np.bool``
alias, removed in numpy 1.24, is put back (``baselines/common/vec_env/shmem_vec_env.py`` reads it).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import tensorflow.compat.v1 as tf1

tf1.disable_v2_behavior()
sys.modules["tensorflow"] = tf1  # baselines imports ``tensorflow`` and uses its TF1 API
np.bool = bool

N_ENVS = 64


def parse(description: str, add_arguments) -> argparse.Namespace:
    """The script's options (``add_arguments(parser)`` adds its own) plus ``--seed`` and
    ``--baselines``, a folder holding baselines @ 9ee399f, which is then importable."""
    parser = argparse.ArgumentParser(description=description)
    add_arguments(parser)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--baselines", default=None, help="a folder holding baselines @ 9ee399f (else installed)")
    args = parser.parse_args()
    if args.baselines:
        sys.path.insert(0, args.baselines)
    return args


def coinrun_env(seed: int):
    """train-procgen's training environment, seeded, in a fresh one-thread TensorFlow session."""
    from baselines.common.vec_env import VecExtractDictObs, VecMonitor, VecNormalize
    from procgen import ProcgenEnv

    tf1.set_random_seed(seed)
    np.random.seed(seed)
    venv = ProcgenEnv(
        num_envs=N_ENVS,
        env_name="coinrun",
        num_levels=200,
        start_level=0,
        distribution_mode="easy",
        num_threads=0,
        rand_seed=seed,
    )
    venv = VecNormalize(VecMonitor(VecExtractDictObs(venv, "rgb"), filename=None, keep_buf=100), ob=False)
    one_thread = tf1.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)
    tf1.Session(config=one_thread).__enter__()
    return venv
