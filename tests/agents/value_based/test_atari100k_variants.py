"""The Atari 100K variants learn from pixels with their own settings: ``rainbow variant=der``
(Data-Efficient Rainbow: its two-layer torso, 20-step returns, an update per step, noisy nets
0.1) and ``dqn variant=drq_eps`` (DrQ(epsilon): shift and intensity augmentation, 10-step double
dueling Q-learning, a target copy per update, Adam).

The task (``pixel_cue.py``): name the side of the screen a bar is on; +1 right, -1 wrong, so
random play and any fixed action average 0 per step and a learner that reads the image nears 1.
Each variant keeps every setting of its variant but the learning start (300 steps instead of
1,600, to keep the check short) and trains for a few hundred updates; its greedy policy must
then average at least 0.6 per step over 200 steps (0.6 is over 8 standard deviations of random
play's mean over 200 steps). Measured on the 2-core development machine beside another busy
process, seed 0: DER 0.97 after 1,500 steps (35 s), DrQ(epsilon) 0.95 after 800 steps (49 s).

The real-game runs are ``benchmarks/atari100k_runs.sh`` (docs/measurements/atari100k.md).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from benchgen_agents.dqn import DQNConfig
from benchgen_agents.dqn import make_agent as make_dqn
from benchgen_agents.dqn.config import VARIANTS as DQN_VARIANTS
from benchgen_agents.rainbow import RainbowConfig
from benchgen_agents.rainbow import make_agent as make_rainbow
from benchgen_agents.rainbow.config import VARIANTS as RAINBOW_VARIANTS
from tests.agents.agent_harness import Context, CountingEnv, environment_of
from tests.agents.value_based.pixel_cue import make_vec

REQUIRED = 0.6  # greedy reward per step; random play and any fixed action: 0
EVAL_STEPS = 200
VARIANTS = {
    # variant: (config class, factory, the variant's defaults, training budget in agent steps)
    "der": (RainbowConfig, make_rainbow, RAINBOW_VARIANTS["der"], 1_500),
    "drq_eps": (DQNConfig, make_dqn, DQN_VARIANTS["drq_eps"], 800),
}


def greedy_reward_per_step(agent, env) -> float:
    obs, _ = env.reset(seed=12345)
    total = 0.0
    for _ in range(EVAL_STEPS):
        obs, rewards, *_ = env.step(agent.act(obs, greedy=True))
        total += float(rewards.sum())
    return total / EVAL_STEPS


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_the_variant_learns_to_read_the_screen(variant):
    config_class, make_agent, defaults, budget = VARIANTS[variant]
    settings = {**defaults, "variant": variant}
    settings.update(learning_starts_frames=4 * 300, device="cpu", torch_threads=1, log_every_updates=100_000)
    config = config_class(**settings)
    env = CountingEnv(make_vec())
    agent = make_agent(config, environment_of(env))
    assert config.update_period_steps == 1 and config.learning_rate == 1e-4  # the variant's own settings
    agent.learn(env, Context(env, budget, seed=0))
    assert agent.counters["updates"] >= budget - 300 - 1
    before = np.mean(env.returns[:5])  # random play during the learning start
    score = greedy_reward_per_step(agent, env)
    assert abs(before) < 8, before
    assert score >= REQUIRED, f"{variant}: greedy reward {score:.2f} per step after {budget} steps"


def short_drq_run(steps: int) -> tuple:
    """DrQ(epsilon) with its variant's settings but a 100-step learning start, after ``steps``
    agent steps on the pixel task, and how often its target net ran a forward pass."""
    settings = {**DQN_VARIANTS["drq_eps"], "variant": "drq_eps"}
    settings.update(learning_starts_frames=4 * 100, device="cpu", torch_threads=1, log_every_updates=100_000)
    env = CountingEnv(make_vec())
    agent = make_dqn(DQNConfig(**settings), environment_of(env))
    return agent, target_passes_while_learning(agent, env, steps)


def target_passes_while_learning(agent, env, steps: int) -> int:
    """How many forward passes ``agent.target`` runs while it learns for ``steps`` agent steps
    (the agent builds its networks anew from the unit's seed when it starts: the hook is global)."""
    passes = []
    hook = torch.nn.modules.module.register_module_forward_hook(
        lambda module, *_: passes.append(1) if module is agent.target else None
    )
    try:
        agent.learn(env, Context(env, steps, seed=0))
    finally:
        hook.remove()
    return len(passes)


def test_drq_eps_double_q_takes_one_pass_while_its_target_is_the_online_net(monkeypatch):
    """DrQ(epsilon) copies the target after every update, so at each update the target's weights
    are the online net's: its double-Q targets take the online pass at the next states for both
    roles, and the weights it learns are exactly those of the two-pass computation."""
    import benchgen_agents.value_based.head as head

    agent, target_passes = short_drq_run(130)
    assert agent.counters["updates"] >= 25 and agent.target_is_online
    assert target_passes == 0
    monkeypatch.setattr(head, "has_noisy_layers", lambda network: True)  # the two-pass computation
    two_pass, two_pass_target_passes = short_drq_run(130)
    assert two_pass_target_passes == two_pass.counters["updates"]
    for name, weight in agent.online.state_dict().items():
        assert torch.equal(weight, two_pass.online.state_dict()[name]), name


def test_a_target_copy_with_noisy_layers_keeps_its_own_pass():
    """Noisy nets draw their own noise per pass (DER): equal weights do not make equal passes, so
    the target keeps its pass after a copy."""
    settings = {**RAINBOW_VARIANTS["der"], "variant": "der"}
    settings.update(learning_starts_frames=4 * 100, device="cpu", torch_threads=1, log_every_updates=100_000)
    settings.update(target_update_frames=4)  # a copy after every update, as DrQ(epsilon)
    env = CountingEnv(make_vec())
    agent = make_rainbow(RainbowConfig(**settings), environment_of(env))
    target_passes = target_passes_while_learning(agent, env, 120)
    assert agent.target_is_online and agent.counters["updates"] >= 15
    assert target_passes >= agent.counters["updates"]


@pytest.mark.parametrize("torso", ["nature", "data_efficient"])
def test_the_learners_channels_last_pass_computes_what_the_acting_pass_does(torso):
    """The torso runs its gradient pass on channels-last images (faster on oneDNN) and its other
    passes in the default layout: the same features and gradients either way, and the caller's
    observations (uint8 frames, or DrQ's float augmented ones, one channel included) untouched."""
    from benchgen_agents.value_based.layers import Torso

    torch.manual_seed(0)
    for channels, dtype in ((4, torch.uint8), (1, torch.float32)):
        net = Torso((channels, 84, 84), 64, torso)
        obs = torch.randint(0, 256, (3, channels, 84, 84)).to(dtype)
        before = obs.clone()
        with torch.no_grad():
            acting = net(obs)
        learning = net(obs)
        assert torch.allclose(acting, learning, atol=1e-5) and torch.equal(obs, before)
        learning.sum().backward()
        weight = net.body[0].weight
        reference = torch.autograd.grad(net.body(obs.float() / 255.0).sum(), weight)[0]
        assert torch.allclose(weight.grad, reference, rtol=1e-4, atol=1e-4)


def test_drq_augmentation_is_an_edge_padded_random_crop_times_an_intensity_factor():
    """DrQ's shift: each stacked observation padded by 4 repeated edge pixels and cropped back at
    its own offset (all its frames together), then scaled by its factor in [0.9, 1.1]; the next
    states get draws of their own; the same generator state gives the same batch."""
    from benchgen_agents.value_based.augmentation import PAD, augment, draw_augmentation

    rng = np.random.default_rng(0)
    batch = {key: rng.integers(0, 256, (16, 4, 84, 84), dtype=np.uint8) for key in ("obs", "next_obs")}
    drawn = draw_augmentation(batch, "shift_intensity", np.random.default_rng(3))
    to_tensor = torch.as_tensor
    out = augment(drawn, to_tensor)
    for key in ("obs", "next_obs"):
        padded = np.pad(batch[key], ((0, 0), (0, 0), (PAD, PAD), (PAD, PAD)), mode="edge").astype(np.float32)
        for i, ((top, left), factor) in enumerate(zip(drawn[f"{key}_shift"], drawn[f"{key}_scale"], strict=True)):
            expected = padded[i, :, top : top + 84, left : left + 84] * factor
            assert np.array_equal(out[key][i].numpy(), expected)
        assert 0.9 <= drawn[f"{key}_scale"].min() and drawn[f"{key}_scale"].max() <= 1.1
        assert len({tuple(s) for s in drawn[f"{key}_shift"]}) > 1  # offsets differ between samples
    assert not np.array_equal(drawn["obs_shift"], drawn["next_obs_shift"])
    again = augment(draw_augmentation(batch, "shift_intensity", np.random.default_rng(3)), to_tensor)
    assert all(torch.equal(out[key], again[key]) for key in ("obs", "next_obs"))
    assert draw_augmentation(batch, "none", np.random.default_rng(3)) is batch


def test_dopamine_s_2021_batch_shift_moves_the_whole_batch_by_one_offset_below_eight():
    """``shift_intensity_batch``: one top and one left offset for all samples of an entry, 0-7
    (Dopamine's 2021 ``_random_crop``), still each sample's own intensity factor; the crop itself is
    the per-image one's."""
    from benchgen_agents.value_based.augmentation import PAD, augment, draw_augmentation

    rng = np.random.default_rng(1)
    batch = {key: rng.integers(0, 256, (8, 4, 84, 84), dtype=np.uint8) for key in ("obs", "next_obs")}
    seen = set()
    for seed in range(40):
        drawn = draw_augmentation(batch, "shift_intensity_batch", np.random.default_rng(seed))
        for key in ("obs", "next_obs"):
            assert len({tuple(s) for s in drawn[f"{key}_shift"]}) == 1
            assert len(set(drawn[f"{key}_scale"].tolist())) > 1  # factors still per sample
            seen.update(drawn[f"{key}_shift"][0].tolist())
    assert seen == set(range(2 * PAD))  # 0-7: never the per-image draw's 8
    out = augment(drawn, torch.as_tensor)
    padded = np.pad(batch["obs"], ((0, 0), (0, 0), (PAD, PAD), (PAD, PAD)), mode="edge").astype(np.float32)
    top, left = drawn["obs_shift"][0]
    assert np.array_equal(
        out["obs"].numpy(), padded[:, :, top : top + 84, left : left + 84] * drawn["obs_scale"][:, None, None, None]
    )
