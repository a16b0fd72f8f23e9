"""benchgen's PPO on Procgen: its learner's FLOP rate against the dense matmul rate, and its
steps/s against a plain single-file PPO of the same algorithm and network, in the same run.

Contenders, each learning ``--rollouts`` rollouts from scratch on the same task (``--game``, the
``easy200`` protocol's training levels) with the suite's tuned PPO settings
(``plugins/procgen/tuned/ppo.yaml``: the Procgen paper's) except for the rollout's size:

* **benchgen**: the ``ppo`` agent (stable-baselines3 PPO, ``policy=ImpalaCnnPolicy``) built as a
  run builds it, learning through ``PPOAgent.learn`` on the suite's env
  (``ProcgenSuite.make_env``: the suite's vector env with its episode recording) under a minimal
  training context (a step counter; no checkpoints or TensorBoard files), with its default
  ``update_chunk`` (256 samples per forward/backward pass on the CPU);
* **benchgen before** (skipped with ``--no-before``): benchgen as it was before its speed-ups:
  ``update_chunk=0`` (stable-baselines3's own ``PPO.train``, one pass per minibatch) and the IMPALA
  CNN on NCHW tensors (``ImpalaCNN.channels_last`` False);
* **plain**: a CleanRL-style single-file PPO written below (torch only): the same IMPALA CNN
  (``benchgen_agents.ppo.impala_cnn.ImpalaCNN``, same precision) with linear policy and value heads
  initialized as SB3's, on raw ``ProcgenGym3Env`` (the suite's options, levels and seed), uint8
  rollout storage, baselines' reward normalization (VecNormalize(ob=False), gamma 0.99), GAE,
  3 epochs of shuffled minibatches with per-minibatch advantage normalization, SB3's clipped
  surrogate and clipped value loss, entropy bonus, gradient clipping, Adam (eps 1e-5); each
  minibatch in one forward/backward pass, as CleanRL does (the network is benchgen's: channels-last
  on the CPU).

Settings: ``--num-envs`` 64 (the paper's) x ``--n-steps`` 32 steps a rollout (the paper: 256) and
minibatches of ``--batch-size`` 2048 (the paper's), 3 epochs: per collected step the same work as
the paper's 64 x 256 rollout cut into 8 minibatches of 2,048 (one batch-64 forward pass, one
env step, three forward and backward passes of a minibatch sample), at an eighth of a rollout's time.

Printed per contender: steps/s (agent steps of its rollouts over the seconds from building the
model to the end of its last update) and the ratio benchgen / plain (target >= 1.0); the
learner's FLOP rate: the FLOPs of the update (``torch.utils.flop_counter.FlopCounterMode``:
convolutions and matrix products of the forward and backward pass, counted on 256 samples and
scaled to the epochs x rollout samples an update passes through) over the measured time of
SB3's ``train()`` (benchgen) or of the update loop (plain) on the real rollout; against the
dense matmul rate of the same dtype (``torch.mm``, float32 and bfloat16, on a 2048 square and on
2048 x 2048 x 256, the dense layer's shape at a 2048 minibatch; probed before every contender,
best probe), target >= 0.8. One torch thread (``torch.set_num_threads(1)``), the games stepped
in the same thread (``num_threads=0``). ``--clock cpu`` (the default) times with the process's
CPU time, which leaves out the time other processes hold the core.

Measured 2026-11-28 (``--precisions bfloat16,float32 --rounds 2``, 17 minutes) on the 2-core
development machine (AMD EPYC with AVX512-BF16) beside two long training runs, an Atari 100K game
and the Procgen PPO proof run (load average 4 to 5 on 2 cores), CPU clock; medians of 2 rounds:

* bfloat16: steps/s benchgen 195, before 78, plain 135: benchgen / plain 1.45 (target >= 1.0);
  update 9.3 s, 0.54 of the dense rate (before 0.20, plain 0.36; target >= 0.8);
* float32: steps/s benchgen 114, before 48, plain 80: benchgen / plain 1.41; update 16.8 s,
  0.68 of the dense rate (before 0.28, plain 0.48).

Dense matmul rate, one thread: float32 96.8 GFLOP/s, bfloat16 218.7 GFLOP/s; an update is
1.11 TFLOP (180 MFLOP a sample, forward and backward, x 3 epochs x 2,048 samples). Before its
speed-ups (SB3's one pass per minibatch, NCHW network: "before") benchgen's update took 2.7x
(bfloat16) and 2.5x (float32) as long. An earlier run of 3 rounds in bfloat16 with every
contender on the NCHW network measured benchgen with SB3's own update at 1.10x the plain PPO
(81 against 73 steps/s) and the chunked update alone at 1.65x (121). The FLOP rate stays below
the 0.8 target: in a profile of a 256-sample training pass in bfloat16, the convolutions (16 and
32 channels: thin for oneDNN's AVX-512 kernels) take about 56% of the time, the max-pools and
their backward about 20%, zero-filling and ReLUs most of the rest; in float32 the convolutions
take about 73%.

Each run also times the network's convolutions alone (each of its 13 layers forward and backward
on 256 samples, best of three; 98% of an update's FLOPs): the most an update of this network can
reach on the machine, printed beside the update's rate. Measured 2026-11-28 (``--precisions
bfloat16,float32 --rounds 1 --no-before``, 7 minutes, CPU clock, beside the same two runs, load 3.5
to 5.7) after the development machine's virtual CPU had moved to an Intel Xeon host (AVX512-BF16,
no AMX), where bfloat16 matrix products run at half float32's rate: dense float32 165.0 GFLOP/s,
bfloat16 82.9; float32 steps/s benchgen 132, plain 91 (1.46), update 14.1 s at 0.48 of the dense
rate, the convolutions alone at 0.66; bfloat16 benchgen 92, plain 76 (1.22), update 20.0 s at 0.67,
the convolutions alone at 0.86. So in float32 the 0.8 target lies above what the convolutions
alone reach here (oneDNN's kernels for 3-to-16 and 16-channel layers); in bfloat16 the gap between
0.67 and 0.86 is the max-pools, ReLUs and zero-fills of the profile above.

    python benchmarks/bench_procgen_ppo.py [--precisions bfloat16,float32] [--rounds 1] [--rollouts 2]
        [--num-envs 64] [--n-steps 32] [--batch-size 2048] [--no-before] [--clock cpu|wall]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn
from value_bench_common import add_clock_argument, clock, flop_counts, load_average, matmul_rate

from benchgen.agent import AgentEnvironment, TrainingContext

#: GEMMs of the dense reference: a 2048 square, and the dense layer's shape at a 2048 minibatch
GEMM_SHAPES = ((2048, 2048, 2048), (2048, 2048, 256))
#: samples the FLOPs are counted on (scaled linearly: every operation is per sample)
FLOP_SAMPLES = 256


def tuned(args, precision: str, chunk: int | None) -> dict:
    """The suite's tuned PPO settings with this benchmark's rollout size, precision and threads."""
    from benchgen.tuned import tuned_values
    from benchgen_procgen.suite import ProcgenSuite

    values = dict(tuned_values(ProcgenSuite(), "ppo"))
    values.update(
        n_steps=args.n_steps,
        batch_size=args.batch_size,
        n_epochs=args.epochs,
        precision=precision,
        torch_threads=1,
        device="cpu",
        update_chunk=chunk,
    )
    return values


class StepContext(TrainingContext):
    """The runner's side of ``learn``: a step counter (``maybe_checkpoint`` is called once per vector step)."""

    def __init__(self, num_envs: int, budget_steps: int, seed: int):
        self.num_envs, self.budget_steps, self.seed, self.unit_dir = num_envs, budget_steps, seed, Path(".")
        self.steps = 0

    @property
    def steps_done(self) -> int:
        return self.steps

    def maybe_checkpoint(self) -> None:
        self.steps += self.num_envs

    def log_scalar(self, tag: str, value: float) -> None:
        pass


def run_benchgen(args, precision: str, seed: int, timer, before: bool = False) -> dict:
    """benchgen's ppo agent learning ``args.rollouts`` rollouts (``before``: as before its speed-ups):
    steps, seconds, seconds in ``train()``, FLOPs of an update."""
    from benchgen_agents.ppo import PPOConfig, make_agent
    from benchgen_agents.ppo.chunked import ChunkedPPO
    from benchgen_agents.ppo.impala_cnn import ImpalaCNN
    from benchgen_procgen.suite import ProcgenSuite

    chunk = 0 if before else None
    ImpalaCNN.channels_last = not before

    suite = ProcgenSuite()
    env = suite.make_env([args.game] * args.num_envs, seed)
    agent = make_agent(
        PPOConfig(**tuned(args, precision, chunk)),
        AgentEnvironment(env.single_observation_space, env.single_action_space, 1, suite="procgen"),
    )
    rollout = args.num_envs * args.n_steps
    # one vector step past the last rollout: the agent stops at its budget, after that rollout's update
    ctx = StepContext(args.num_envs, args.rollouts * rollout + args.num_envs, seed)
    train_seconds: list[float] = []
    original = ChunkedPPO.train

    def timed_train(model):
        start = timer()
        original(model)
        train_seconds.append(timer() - start)

    ChunkedPPO.train = timed_train
    try:
        start = timer()
        agent.learn(env, ctx)
        seconds = timer() - start
    finally:
        ChunkedPPO.train = original
        ImpalaCNN.channels_last = True
        env.close()
    flops = update_flops(agent.model.policy, args)
    return {"steps": ctx.steps, "seconds": seconds, "train": train_seconds, "flops": flops}


def update_flops(policy, args) -> float:
    """FLOPs of one update of benchgen's policy: forward and backward over epochs x rollout samples."""
    from torch.utils.flop_counter import FlopCounterMode

    obs = torch.randint(0, 256, (FLOP_SAMPLES, 3, 64, 64), dtype=torch.uint8)
    actions = torch.zeros(FLOP_SAMPLES, dtype=torch.long)
    with FlopCounterMode(display=False) as counter:
        values, log_prob, entropy = policy.evaluate_actions(obs, actions)
        (values.sum() + log_prob.sum() + entropy.sum()).backward()
    policy.zero_grad()
    return counter.get_total_flops() / FLOP_SAMPLES * args.epochs * args.num_envs * args.n_steps


# -- the plain PPO (CleanRL style) --------------------------------------------------------------
class PlainAgent(nn.Module):
    """The IMPALA CNN with linear policy and value heads, initialized as SB3's ActorCriticPolicy
    (orthogonal: gain sqrt(2) in the CNN, 0.01 for the policy head, 1 for the value head)."""

    def __init__(self, actions: int, precision: str):
        import gymnasium as gym

        from benchgen_agents.ppo.impala_cnn import ImpalaCNN

        super().__init__()
        self.cnn = ImpalaCNN(gym.spaces.Box(0, 255, (3, 64, 64), np.uint8), 256, precision=precision)
        self.pi = nn.Linear(256, actions)
        self.v = nn.Linear(256, 1)
        for module, gain in ((self.cnn, 2**0.5), (self.pi, 0.01), (self.v, 1.0)):
            for layer in module.modules():
                if isinstance(layer, (nn.Linear, nn.Conv2d)):
                    nn.init.orthogonal_(layer.weight, gain)
                    nn.init.zeros_(layer.bias)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        hidden = self.cnn(obs.float() / 255.0)
        return self.pi(hidden), self.v(hidden).squeeze(-1)


class ReturnNormalizer:
    """baselines' VecNormalize(ob=False): rewards divided by the running std of the discounted return, clipped."""

    def __init__(self, n: int, gamma: float, clip: float = 10.0, eps: float = 1e-8):
        self.ret, self.gamma, self.clip, self.eps = np.zeros(n), gamma, clip, eps
        self.mean, self.var, self.count = 0.0, 1.0, 1e-4

    def __call__(self, rewards: np.ndarray, dones: np.ndarray) -> np.ndarray:
        self.ret = self.ret * self.gamma + rewards
        batch_mean, batch_var, n = self.ret.mean(), self.ret.var(), len(self.ret)
        delta, total = batch_mean - self.mean, self.count + n
        self.mean += delta * n / total
        self.var = (self.var * self.count + batch_var * n + delta**2 * self.count * n / total) / total
        self.count = total
        out = np.clip(rewards / np.sqrt(self.var + self.eps), -self.clip, self.clip)
        self.ret[dones] = 0.0
        return out


def run_plain(args, precision: str, seed: int, timer) -> dict:
    """The plain PPO learning ``args.rollouts`` rollouts: steps, seconds, seconds in its updates."""
    from benchgen_procgen.env import group_seed, gym3_options, level_range, procgen_env_class
    from benchgen_procgen.games import ACTION_COMBOS
    from benchgen_procgen.protocols import EASY200

    s = tuned(args, precision, 0)
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    n, t_max = args.num_envs, args.n_steps
    start = timer()
    env = procgen_env_class()(
        num=n,
        env_name=args.game,
        rand_seed=group_seed(seed, 0),
        num_threads=0,
        **gym3_options(EASY200),
        **level_range(EASY200, args.game, False).options(),
    )
    net = PlainAgent(len(ACTION_COMBOS), precision)
    optimizer = torch.optim.Adam(net.parameters(), lr=s["learning_rate"], eps=1e-5)
    normalize = ReturnNormalizer(n, s["normalize_gamma"])
    obs = torch.zeros((t_max, n, 3, 64, 64), dtype=torch.uint8)
    actions, log_probs, rewards, dones, values = (torch.zeros((t_max, n)) for _ in range(5))
    _, ob, first = env.observe()
    next_obs = torch.from_numpy(ob["rgb"]).permute(0, 3, 1, 2).contiguous()
    next_done = torch.from_numpy(first).float()
    update_seconds, steps = [], 0
    for _ in range(args.rollouts):
        for t in range(t_max):
            obs[t], dones[t] = next_obs, next_done
            with torch.no_grad():
                logits, value = net(next_obs)
                dist = torch.distributions.Categorical(logits=logits)
                action = dist.sample()
            actions[t], log_probs[t], values[t] = action, dist.log_prob(action), value
            env.act(action.numpy())
            rew, ob, first = env.observe()
            rewards[t] = torch.from_numpy(normalize(rew, first))
            next_obs = torch.from_numpy(ob["rgb"]).permute(0, 3, 1, 2).contiguous()
            next_done = torch.from_numpy(first).float()
            steps += n
        update_start = timer()
        with torch.no_grad():  # GAE (Schulman et al. 2016)
            next_value = net(next_obs)[1]
            advantages = torch.zeros_like(rewards)
            last = torch.zeros(n)
            for t in reversed(range(t_max)):
                not_done = 1.0 - (next_done if t == t_max - 1 else dones[t + 1])
                following = next_value if t == t_max - 1 else values[t + 1]
                delta = rewards[t] + s["gamma"] * following * not_done - values[t]
                last = delta + s["gamma"] * s["gae_lambda"] * not_done * last
                advantages[t] = last
            returns = advantages + values
        b_obs = obs.reshape(-1, 3, 64, 64)
        b_actions, b_log_probs, b_adv, b_returns, b_values = (
            x.reshape(-1) for x in (actions, log_probs, advantages, returns, values)
        )
        size, clip, clip_vf = n * t_max, s["clip_range"], s["clip_range_vf"]
        for _ in range(s["n_epochs"]):
            order = rng.permutation(size)
            for begin in range(0, size, s["batch_size"]):
                mb = torch.from_numpy(order[begin : begin + s["batch_size"]])
                logits, value = net(b_obs[mb])
                dist = torch.distributions.Categorical(logits=logits)
                ratio = torch.exp(dist.log_prob(b_actions[mb].long()) - b_log_probs[mb])
                adv = b_adv[mb]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                pg_loss = -torch.min(adv * ratio, adv * torch.clamp(ratio, 1 - clip, 1 + clip)).mean()
                clipped = b_values[mb] + torch.clamp(value - b_values[mb], -clip_vf, clip_vf)
                v_loss = ((b_returns[mb] - clipped) ** 2).mean()
                loss = pg_loss - s["ent_coef"] * dist.entropy().mean() + s["vf_coef"] * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(net.parameters(), s["max_grad_norm"])
                optimizer.step()
                with torch.no_grad():  # CleanRL's statistics
                    float((torch.abs(ratio - 1) > clip).float().mean())
        update_seconds.append(timer() - update_start)
    seconds = timer() - start
    env.close()
    return {"steps": steps, "seconds": seconds, "train": update_seconds}


def convolutions_alone(precision: str, timer) -> tuple[float, float]:
    """FLOPs and seconds of the IMPALA CNN's convolutions alone, each timed on its own (forward and
    backward on a chunk of :data:`FLOP_SAMPLES`, channels-last, under the network's autocast; no
    input gradient for the first, which the update never asks): what any update of this network
    could reach if nothing but its convolutions took time. Written here because no profiler
    separates a layer's kernel time from the rest in one call."""
    import gymnasium as gym

    from benchgen_agents.ppo.impala_cnn import ImpalaCNN

    net = ImpalaCNN(gym.spaces.Box(0, 255, (3, 64, 64), np.uint8), precision=precision)
    inputs: list[tuple[nn.Conv2d, tuple[int, ...]]] = []
    hooks = [
        m.register_forward_pre_hook(lambda m, args: inputs.append((m, tuple(args[0].shape))))
        for m in net.modules()
        if isinstance(m, nn.Conv2d)
    ]
    with torch.no_grad():
        net(torch.rand(FLOP_SAMPLES, 3, 64, 64))
    for hook in hooks:
        hook.remove()
    flops = seconds = 0.0
    for index, (conv, shape) in enumerate(inputs):
        x = torch.randn(shape).contiguous(memory_format=torch.channels_last).requires_grad_(index > 0)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bfloat16"):
            out = conv(x)
        grad = torch.randn_like(out)

        def pass_(conv=conv, x=x, grad=grad):
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bfloat16"):
                y = conv(x)
            y.backward(grad)

        flops += flop_counts(pass_)["conv"]  # also oneDNN's first call, where it picks its kernel
        fastest = float("inf")
        for _ in range(3):
            start = timer()
            pass_()
            fastest = min(fastest, timer() - start)
        seconds += fastest
    return flops, seconds


def gemm_rates(timer) -> dict[str, float]:
    """The best float32 and bfloat16 ``torch.mm`` FLOP/s over :data:`GEMM_SHAPES`."""
    return {
        "float32": matmul_rate(GEMM_SHAPES, reps=2, timer=timer)[0],
        "bfloat16": matmul_rate(GEMM_SHAPES, reps=2, timer=timer, dtype=torch.bfloat16)[0],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="coinrun")
    parser.add_argument("--precisions", default="bfloat16", help="comma-separated: bfloat16,float32")
    parser.add_argument("--rounds", type=int, default=1, help="rounds of every contender (order rotated); medians")
    parser.add_argument("--rollouts", type=int, default=2, help="rollouts (and updates) each contender learns")
    parser.add_argument("--num-envs", type=int, default=64)
    parser.add_argument("--n-steps", type=int, default=32, help="steps per sub-environment per rollout")
    parser.add_argument("--batch-size", type=int, default=2048)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument(
        "--no-before", dest="before", action="store_false", help="skip benchgen as before its speed-ups"
    )
    parser.add_argument("--seed", type=int, default=0)
    add_clock_argument(parser)
    parser.set_defaults(clock="cpu")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    timer = clock(args.clock, 1)
    precisions = [p.strip() for p in args.precisions.split(",") if p.strip()]
    contenders = ["benchgen", *(["benchgen_before"] if args.before else []), "plain"]
    print(
        f"procgen {args.game} (easy200), {args.num_envs} envs x {args.n_steps} steps a rollout, minibatch "
        f"{args.batch_size}, {args.epochs} epochs, {args.rollouts} rollouts per contender, {args.rounds} round(s), "
        f"1 torch thread, {args.clock} clock; {load_average()}",
        flush=True,
    )
    # warm-up, not counted: each contender's first build and pass (imports, the package's assets, oneDNN kernels)
    tiny = argparse.Namespace(**{**vars(args), "rollouts": 1, "n_steps": 4, "batch_size": 128, "epochs": 1})
    for precision in precisions:
        run_benchgen(tiny, precision, args.seed, timer)
        run_plain(tiny, precision, args.seed, timer)
    results: dict[tuple[str, str], list[dict]] = {}
    dense: dict[str, list[float]] = {"float32": [], "bfloat16": []}
    for r in range(args.rounds):
        for precision in precisions:
            order = contenders[r % len(contenders) :] + contenders[: r % len(contenders)]
            for who in order:
                for dtype, rate in gemm_rates(timer).items():
                    dense[dtype].append(rate)
                seed = args.seed + r
                if who == "plain":
                    out = run_plain(args, precision, seed, timer)
                else:
                    out = run_benchgen(args, precision, seed, timer, before=who == "benchgen_before")
                results.setdefault((precision, who), []).append(out)
                print(
                    f"round {r} {precision:8} {who:20} {out['steps'] / out['seconds']:7.1f} steps/s   update "
                    + " ".join(f"{x:.1f}" for x in out["train"])
                    + " s",
                    flush=True,
                )
    ceiling: dict[str, list[tuple[float, float]]] = {p: [] for p in precisions}  # (FLOPs, seconds)
    for _ in range(args.rounds):
        for precision in precisions:
            for dtype, rate in gemm_rates(timer).items():
                dense[dtype].append(rate)
            ceiling[precision].append(convolutions_alone(precision, timer))
    flops = {p: statistics.median(o["flops"] for o in results[(p, "benchgen")]) for p in precisions}
    best = {k: max(v) for k, v in dense.items()}
    print(
        f"dense matmul rate (best probe, {len(dense['float32'])} probes): float32 {best['float32'] / 1e9:.1f} "
        f"GFLOP/s, bfloat16 {best['bfloat16'] / 1e9:.1f} GFLOP/s; update FLOPs "
        + ", ".join(f"{p} {f / 1e12:.2f} TFLOP" for p, f in flops.items())
    )
    for precision in precisions:
        rate = {
            who: statistics.median(o["steps"] / o["seconds"] for o in results[(precision, who)]) for who in contenders
        }
        plain = rate["plain"]
        print(
            f"{precision}: steps/s "
            + ", ".join(f"{who} {v:.1f}" for who, v in rate.items())
            + "; benchgen / plain "
            + ", ".join(f"{rate[w] / plain:.3f} ({w})" for w in contenders if w != "plain")
            + " (target >= 1.0); median of the per-round ratios "
            + ", ".join(
                f"{statistics.median(a['steps'] / a['seconds'] / (b['steps'] / b['seconds']) for a, b in zip(results[(precision, w)], results[(precision, 'plain')])):.3f}"
                for w in contenders
                if w != "plain"
            )
        )
        for who in contenders:
            seconds = statistics.median(x for o in results[(precision, who)] for x in o["train"])
            achieved = flops[precision] / seconds
            print(
                f"  {who:20} update {seconds:6.1f} s: {achieved / 1e9:5.1f} GFLOP/s, "
                f"{achieved / best[precision]:.2f} of the {precision} matmul rate (target >= 0.8)"
            )
        conv_flops = ceiling[precision][0][0]  # the same in every round
        conv_rate = max(f / t for f, t in ceiling[precision])
        conv_share = conv_flops / FLOP_SAMPLES * args.epochs * args.num_envs * args.n_steps / flops[precision]
        print(
            f"  the network's convolutions alone (best of {len(ceiling[precision])}): {conv_rate / 1e9:5.1f} GFLOP/s, "
            f"{conv_rate / best[precision]:.2f} of the {precision} matmul rate ({conv_share:.0%} of "
            "an update's FLOPs): about the most an update of this network can reach here"
        )
    print(f"end: {load_average()}")
    return 0


if __name__ == "__main__":
    start = time.perf_counter()
    code = main()
    print(f"wall time {time.perf_counter() - start:.0f} s")
    raise SystemExit(code)
