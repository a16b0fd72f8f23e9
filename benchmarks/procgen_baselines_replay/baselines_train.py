"""openai/train-procgen's ``train_fn`` (train_procgen/train.py @ 1a2ae21) on this machine: baselines'
PPO2 on coinrun, easy, levels 0-199, one worker, no MPI, its log (progress.csv: clip fraction,
approxkl, entropy per round) beside openai's released ``progress-coinrun-train.csv``. Runs in the
environment ``setup.sh`` builds (``baselines_setup.py``: how baselines runs there).

    python baselines_train.py STEPS OUT_DIR [--seed 0] [--baselines PATH]
"""

from __future__ import annotations

from baselines_setup import coinrun_env, parse


def main() -> None:
    def arguments(parser):
        parser.add_argument("steps", type=int)
        parser.add_argument("out", help="the folder baselines' logger writes progress.csv to")

    args = parse(__doc__.split("\n\n")[0], arguments)
    from baselines import logger
    from baselines.common.models import build_impala_cnn
    from baselines.ppo2 import ppo2

    logger.configure(dir=args.out, format_strs=["csv", "stdout"])
    venv = coinrun_env(args.seed)
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
