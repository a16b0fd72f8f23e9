"""Replay baselines' first PPO round (``baselines_round.py``'s .npz) through benchgen's update: the
same first weights, the same rollout, the same minibatches, and compare how far each moves the policy.

benchgen's IMPALA CNN is built as the ``ppo`` agent builds it and given baselines' weights (kernels
from TensorFlow's HWIO to torch's OIHW; the dense layer's input from TensorFlow's HWC flattening to
torch's CHW). Each minibatch goes through ``benchgen_agents.ppo.update.backward_in_chunks`` (chunks
of 256, as on the CPU), then the gradient-norm clip and torch's Adam step, as ``ppo_update`` takes
them. Options make each known difference from baselines match it, one at a time:

* ``--value-loss ppo2``: baselines' value term (``PPOConfig.value_loss``), else SB3's;
* ``--tf-epsilon``: TensorFlow 1's Adam adds epsilon before the bias correction, i.e. torch's eps
  set to 1e-5 / sqrt(1 - 0.999^t) before step t;
* ``--tf-pool``: TensorFlow's 'same' max-pool pads only after the last pixel (torch's padding=1
  pads both sides, so its windows sit one pixel earlier).

With all three the replay is baselines' round (the action head's weights move by the same amount
to four digits, every minibatch's clip fraction the same), which is what makes the others a fair
measure of each difference. ``python replay_round.py ROUND.npz --value-loss ppo2 --tf-epsilon --tf-pool``
"""

from __future__ import annotations

import argparse
from types import SimpleNamespace

import gymnasium as gym
import numpy as np
import torch
import torch.nn.functional as F

from benchgen_agents.ppo.impala_cnn import ImpalaCNN, ImpalaCnnActorCriticPolicy
from benchgen_agents.ppo.update import Minibatch, backward_in_chunks

LR, CLIP, CHUNK = 5e-4, 0.2, 256


class SamePaddingPool(torch.nn.Module):
    """TensorFlow's 3x3/2 'same' max-pool on an even side: one pixel of padding, after the last."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.max_pool2d(F.pad(x, (0, 1, 0, 1), value=float("-inf")), 3, 2)


def benchgen_policy(saved, tf_pool: bool) -> tuple[ImpalaCnnActorCriticPolicy, torch.nn.Linear]:
    """The agent's policy (float32) holding baselines' first weights."""
    policy = ImpalaCnnActorCriticPolicy(
        gym.spaces.Box(0, 255, (3, 64, 64), np.uint8),
        gym.spaces.Discrete(15),
        lambda _: LR,
        features_extractor_class=ImpalaCNN,
        features_extractor_kwargs={"features_dim": 256, "precision": "float32"},
        net_arch=[],
        extractor_init="glorot",
    )
    weights = {str(name): saved[f"before/{k}"] for k, name in enumerate(saved["names"])}
    convs = []
    for stage in policy.features_extractor.stages:
        convs += [stage.conv, stage.res0.conv0, stage.res0.conv1, stage.res1.conv0, stage.res1.conv1]
        if tf_pool:
            stage.pool = SamePaddingPool()
    dense = policy.features_extractor.dense
    with torch.no_grad():
        for k, conv in enumerate(convs):  # build_impala_cnn names its layers in this order
            conv.weight.copy_(torch.as_tensor(weights[f"ppo2_model/pi/layer_{k}/kernel:0"]).permute(3, 2, 0, 1))
            conv.bias.copy_(torch.as_tensor(weights[f"ppo2_model/pi/layer_{k}/bias:0"]))
        kernel = weights[f"ppo2_model/pi/layer_{len(convs)}/kernel:0"]  # (8*8*32 in HWC order, 256)
        kernel = kernel.reshape(8, 8, 32, -1).transpose(2, 0, 1, 3).reshape(2048, -1)
        dense.weight.copy_(torch.as_tensor(kernel.T))
        dense.bias.copy_(torch.as_tensor(weights[f"ppo2_model/pi/layer_{len(convs)}/bias:0"]))
        for head, scope in ((policy.action_net, "pi"), (policy.value_net, "vf")):
            head.weight.copy_(torch.as_tensor(weights[f"ppo2_model/{scope}/w:0"].T))
            head.bias.copy_(torch.as_tensor(weights[f"ppo2_model/{scope}/b:0"]))
    return policy, policy.action_net


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("round", help="baselines_round.py's .npz")
    parser.add_argument("--value-loss", choices=("sb3", "ppo2"), default="sb3")
    parser.add_argument("--tf-epsilon", action="store_true")
    parser.add_argument("--tf-pool", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1)
    saved = np.load(args.round)
    policy, head = benchgen_policy(saved, args.tf_pool)
    head_before = head.weight.detach().clone()
    observations = torch.as_tensor(np.ascontiguousarray(saved["obs"].transpose(0, 3, 1, 2)))
    returns = torch.as_tensor(saved["returns"], dtype=torch.float32)
    values = torch.as_tensor(saved["values"], dtype=torch.float32)
    tensors = {
        "observations": observations,
        "actions": torch.as_tensor(saved["actions"]).long(),
        "old_values": values,
        "old_log_probs": -torch.as_tensor(saved["neglogpacs"], dtype=torch.float32),
        "advantages": returns - values,  # baselines' advantages: returns - values, as GAE's are
        "returns": returns,
    }
    with torch.no_grad():
        first = slice(0, 512)
        _, log_prob, _ = policy.evaluate_actions(observations[first], tensors["actions"][first])
    gap = (log_prob - tensors["old_log_probs"][first]).abs().max().item()
    print(f"the loaded network's log-probabilities against baselines' rollout: largest difference {gap:.1e}")

    settings = SimpleNamespace(ent_coef=0.01, vf_coef=0.5, normalize_advantage=True, value_loss=args.value_loss)
    optimizer = policy.optimizer  # torch's Adam, eps 1e-5 (SB3's for PPO), fresh as in round one
    if args.tf_epsilon:
        steps = [0]

        def tensorflow_epsilon(opt, *_):
            steps[0] += 1
            for group in opt.param_groups:
                group["eps"] = 1e-5 / np.sqrt(1 - 0.999 ** steps[0])

        optimizer.register_step_pre_hook(tensorflow_epsilon)
    parameters = list(policy.parameters())
    clipped = []
    order = saved["order"]
    size = order.shape[1] // 8
    for epoch in order:
        for start in range(0, len(epoch), size):
            index = torch.as_tensor(epoch[start : start + size])
            part = {k: v[index] for k, v in tensors.items()}
            batch = Minibatch(size, lambda s, part=part: {k: v[s] for k, v in part.items()}, part["advantages"])
            optimizer.zero_grad()
            stats = backward_in_chunks(policy, batch, CHUNK, settings, CLIP, CLIP)
            torch.nn.utils.clip_grad_norm_(parameters, 0.5)
            optimizer.step()
            clipped.append(stats["clip_fraction"])
    theirs = saved["stats"][:, 4]
    names = [str(n) for n in saved["names"]]
    head_theirs = np.abs(
        saved[f"after/{names.index('ppo2_model/pi/w:0')}"] - saved[f"before/{names.index('ppo2_model/pi/w:0')}"]
    )
    print("options:", vars(args))
    print("clip fraction per minibatch, benchgen: ", np.round(clipped, 4).tolist())
    print("clip fraction per minibatch, baselines:", np.round(theirs, 4).tolist())
    print(f"mean clip fraction: benchgen {np.mean(clipped):.4f}, baselines {theirs.mean():.4f}")
    moved = (head.weight.detach() - head_before).abs().mean().item()
    print(f"policy head's mean absolute change: benchgen {moved:.3e}, baselines {head_theirs.mean():.3e}")


if __name__ == "__main__":
    main()
