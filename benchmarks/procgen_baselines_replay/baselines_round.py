"""openai baselines' PPO2, as openai/train-procgen runs it, for one rollout and one update on coinrun;
everything the update saw and did is saved for ``replay_round.py``, which replays it through
benchgen's update (issue 44: stepping through the published implementation beside benchgen's).

Runs in its own environment (``setup.sh``): baselines @ 9ee399f needs TensorFlow 1's graph API,
which TensorFlow 2.15 still carries as ``tf.compat.v1``, and TensorFlow 2.15 needs numpy < 2
(``baselines_setup.py``: how baselines' unchanged code is made to run there).

The settings are train-procgen's (train_procgen/train.py @ 1a2ae21, ``train_fn``): 64 environments,
easy mode, levels 0-199, 256 steps, 8 minibatches, 3 epochs, lr 5e-4, clip 0.2, entropy 0.01,
gamma 0.999, lambda 0.95, vf_coef 0.5, max_grad_norm 0.5, ``VecNormalize(ob=False)``; one worker,
no MPI (its easy-mode runs had one training worker; the test worker added no gradient).

    python baselines_round.py OUT.npz [--seed 0] [--baselines PATH]
"""

from __future__ import annotations

import numpy as np
import tensorflow.compat.v1 as tf1
from baselines_setup import N_ENVS, coinrun_env, parse

N_STEPS, MINIBATCHES, EPOCHS = 256, 8, 3


def main() -> None:
    args = parse(__doc__.split("\n\n")[0], lambda p: p.add_argument("out", help="the .npz file to write"))
    from baselines.common.models import build_impala_cnn
    from baselines.common.policies import build_policy
    from baselines.ppo2.model import Model
    from baselines.ppo2.runner import Runner

    venv = coinrun_env(args.seed)
    policy = build_policy(venv, lambda x: build_impala_cnn(x, depths=[16, 32, 32]))
    batch = N_ENVS * N_STEPS
    model = Model(
        policy=policy,
        ob_space=venv.observation_space,
        ac_space=venv.action_space,
        nbatch_act=N_ENVS,
        nbatch_train=batch // MINIBATCHES,
        nsteps=N_STEPS,
        ent_coef=0.01,
        vf_coef=0.5,
        max_grad_norm=0.5,
        comm=None,
    )
    params = tf1.trainable_variables("ppo2_model")
    sess = tf1.get_default_session()
    before = sess.run(params)
    obs, returns, masks, actions, values, neglogpacs, _, _ = Runner(
        env=venv, model=model, nsteps=N_STEPS, gamma=0.999, lam=0.95
    ).run()
    # the minibatch order is drawn here and saved, so that the replay takes the same samples
    rng = np.random.RandomState(args.seed + 1)
    order = np.stack([rng.permutation(batch) for _ in range(EPOCHS)])
    stats = []  # ppo2's per-minibatch policy_loss, value_loss, policy_entropy, approxkl, clipfrac
    size = batch // MINIBATCHES
    for epoch in range(EPOCHS):
        for start in range(0, batch, size):
            i = order[epoch, start : start + size]
            stats.append(model.train(5e-4, 0.2, obs[i], returns[i], masks[i], actions[i], values[i], neglogpacs[i]))
    after = sess.run(params)
    stats = np.array(stats)
    print("baselines' first round, per minibatch clip fraction:", np.round(stats[:, 4], 4).tolist())
    print(
        f"mean approxkl {stats[:, 3].mean():.5f}, clip fraction {stats[:, 4].mean():.4f}, "
        f"value loss {stats[:, 1].mean():.4f}, entropy {stats[:, 2].mean():.4f}"
    )
    saved = dict(
        obs=obs,
        returns=returns,
        actions=actions,
        values=values,
        neglogpacs=neglogpacs,
        order=order,
        stats=stats,
        names=np.array([p.name for p in params]),
    )
    for k, (w0, w1) in enumerate(zip(before, after)):
        saved[f"before/{k}"], saved[f"after/{k}"] = w0, w1
    np.savez_compressed(args.out, **saved)
    print("wrote", args.out)


if __name__ == "__main__":
    main()
