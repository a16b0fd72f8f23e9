"""openai/train-procgen's ``train_fn`` (train_procgen/train.py @ 1a2ae21) on this machine: baselines'
PPO2 on coinrun, easy, levels 0-199, one worker, no MPI, its log (progress.csv: clip fraction,
approxkl, entropy per round) beside openai's released ``progress-coinrun-train.csv``. Runs in the
environment ``setup.sh`` builds, as ``baselines_round.py`` does (see its docstring for the two shims).

    python baselines_train.py STEPS OUT_DIR [--seed 0] [--baselines PATH]
"""

from __future__ import annotations

import argparse
import sys

import tensorflow.compat.v1 as tf1

tf1.disable_v2_behavior()
sys.modules["tensorflow"] = tf1  # baselines imports ``tensorflow`` and uses its TF1 API

import numpy as np  # noqa: E402

np.bool = bool  # removed in numpy 1.24; baselines' shmem_vec_env.py still names it


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("steps", type=int)
    parser.add_argument("out", help="the folder baselines' logger writes progress.csv to")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--baselines", default=None, help="a folder holding baselines @ 9ee399f (else installed)")
    args = parser.parse_args()
    if args.baselines:
        sys.path.insert(0, args.baselines)
    from baselines import logger
    from baselines.common.models import build_impala_cnn
    from baselines.common.vec_env import VecExtractDictObs, VecMonitor, VecNormalize
    from baselines.ppo2 import ppo2
    from procgen import ProcgenEnv

    tf1.set_random_seed(args.seed)
    np.random.seed(args.seed)
    logger.configure(dir=args.out, format_strs=["csv", "stdout"])
    venv = ProcgenEnv(
        num_envs=64,
        env_name="coinrun",
        num_levels=200,
        start_level=0,
        distribution_mode="easy",
        num_threads=0,
        rand_seed=args.seed,
    )
    venv = VecNormalize(VecMonitor(VecExtractDictObs(venv, "rgb"), filename=None, keep_buf=100), ob=False)
    one_thread = tf1.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)
    tf1.Session(config=one_thread).__enter__()
    ppo2.learn(  # train.py's call, but comm=None (one worker)
        env=venv,
        network=lambda x: build_impala_cnn(x, depths=[16, 32, 32], emb_size=256),
        total_timesteps=args.steps,
        save_interval=0,
        nsteps=256,
        nminibatches=8,
        lam=0.95,
        gamma=0.999,
        noptepochs=3,
        log_interval=1,
        ent_coef=0.01,
        mpi_rank_weight=1,
        clip_vf=True,
        comm=None,
        lr=5e-4,
        cliprange=0.2,
        update_fn=None,
        init_fn=None,
        vf_coef=0.5,
        max_grad_norm=0.5,
    )


if __name__ == "__main__":
    main()
