"""The value-based agents on a CUDA device (skipped without one; CI has none: run on a GPU machine
with ``pytest tests/agents/value_based/test_cuda_path.py``).

On real Breakout transitions: the CUDA losses equal the CPU's for the same weights, batch, noise
and quantile fractions; the CUDA-graph learner step (``cuda_graph.py``) takes the same steps as
the eager one and draws fresh noise and fractions at every replay; a checkpoint written on the
GPU loads on the CPU and acts the same; bfloat16 losses stay near float32's; and a run through the
CLI trains on the GPU end to end.
"""

from __future__ import annotations

import importlib
import json

import numpy as np
import pytest
import torch

from benchgen.agent import AgentEnvironment
from benchgen.cli import main as cli
from benchgen_agents.value_based.augmentation import augment, draw_augmentation

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

AGENTS = ("dqn", "rainbow", "rainbow_iqn", "rainbow:der", "dqn:drq_eps")
CONFIGS = {"dqn": "DQNConfig", "rainbow": "RainbowConfig", "rainbow_iqn": "RainbowIQNConfig"}
TRANSITIONS = 600


def make(name: str, device: str, **overrides):
    """``name`` (``agent`` or ``agent:variant``) at its defaults on Atari shapes, learning at once."""
    import gymnasium as gym

    agent_name, _, variant = name.partition(":")
    module = importlib.import_module(f"benchgen_agents.{agent_name}")
    settings = dict(module.SPECS[0].variants.get(variant, {})) if variant else {}
    if variant:
        settings["variant"] = variant
    settings.update(replay_capacity=2000, learning_starts_frames=0, device=device, torch_threads=1)
    config = getattr(module, CONFIGS[agent_name])(**{**settings, **overrides})
    spaces = AgentEnvironment(gym.spaces.Box(0, 255, (4, 84, 84), np.uint8), gym.spaces.Discrete(18), 4)
    return module.make_agent(config, spaces)


@pytest.fixture(scope="module")
def breakout() -> list[tuple]:
    """Real Breakout transitions (the suite's SABER env, random actions), as the replay stores them."""
    from benchgen.api import make_env

    env = make_env("atari_saber", "breakout", num_envs=1, seed=0)
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=0)
    steps = []
    for _ in range(TRANSITIONS):
        actions = rng.integers(0, 18, 1)
        nxt, rewards, terminated, truncated, infos = env.step(actions)
        steps.append((obs, actions, rewards, terminated, truncated, nxt, infos.get("final_obs")))
        obs = nxt
    env.close()
    return steps


def fill(agent, transitions) -> None:
    agent.replay = agent.new_replay(1)
    agent.replay.start_episode(0, transitions[0][0][0])
    for step in transitions:
        agent.replay.add(*step)


def fixed_randomness(agent) -> None:
    """The noise buffers stay as they are, and IQN's fractions are a fixed grid drawn on the
    device without a generator: two agents with equal weights then compute the same function."""
    for net in (agent.online, agent.target):
        net.reset_noise = lambda generator: None
    agent._taus = lambda batch, count: ((torch.arange(count, device=agent.device) + 0.5) / count).expand(batch, count)


@pytest.fixture
def strict_float32():
    """float32 products and convolutions without TF32, to compare with the CPU."""
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


def relative_error(a: torch.Tensor, b: torch.Tensor) -> float:
    a, b = a.double().cpu(), b.double().cpu()
    return float((a - b).norm() / b.norm().clamp_min(1e-12))


@pytest.mark.parametrize("name", AGENTS)
def test_cuda_losses_equal_the_cpu_losses(name, breakout, strict_float32):
    cpu, gpu = make(name, "cpu"), make(name, "cuda")
    gpu.online.load_state_dict(cpu.online.state_dict())
    gpu.target.load_state_dict(cpu.target.state_dict())
    for agent in (cpu, gpu):
        fixed_randomness(agent)
    fill(cpu, breakout)
    batch = draw_augmentation(
        cpu.replay.sample(32, 0.4, np.random.default_rng(1)), cpu.config.augmentation, np.random.default_rng(2)
    )
    with torch.no_grad():
        losses_cpu, q_cpu = cpu.sample_losses(augment(batch, cpu._tensor))
        losses_gpu, q_gpu = gpu.sample_losses(augment(batch, gpu._tensor))
    assert losses_gpu.device.type == "cuda"
    assert relative_error(losses_gpu, losses_cpu) < 1e-4
    assert relative_error(q_gpu, q_cpu) < 1e-4
    obs = batch["obs"]
    assert (gpu.act(obs) == cpu.act(obs)).mean() >= 0.9  # argmax ties aside, the same greedy actions


@pytest.mark.parametrize("name", AGENTS)
def test_graphed_updates_take_the_eager_updates_steps(name, breakout, strict_float32):
    eager, graphed = make(name, "cuda", cuda_graphs=False), make(name, "cuda", cuda_graphs=True)
    graphed.online.load_state_dict(eager.online.state_dict())
    graphed.target.load_state_dict(eager.target.state_dict())
    for agent in (eager, graphed):
        fixed_randomness(agent)
        fill(agent, breakout)
    steps = 8  # 3 eager, the capture, then replays: each on a new batch
    for step in range(steps):
        loss_eager, q_eager = eager.update(0.4)
        loss_graphed, q_graphed = graphed.update(0.4)
        assert loss_graphed == pytest.approx(loss_eager, rel=1e-3, abs=1e-6), step
        assert q_graphed == pytest.approx(q_eager, rel=1e-3, abs=1e-6), step
    assert eager._graphed is None and graphed._graphed is not None and graphed._graphed.graphs
    for p_eager, p_graphed in zip(eager.online.parameters(), graphed.online.parameters(), strict=True):
        assert relative_error(p_graphed, p_eager) < 1e-4
    assert not torch.equal(next(graphed.online.parameters()).cpu(), next(make(name, "cpu").online.parameters()))


def test_each_graph_replay_draws_fresh_noise_and_fractions(breakout):
    agent = make("rainbow_iqn", "cuda", learning_rate=1e-12)  # weights all but still: the draws differ
    fill(agent, breakout)
    batch = agent.replay.sample(32, 0.4, np.random.default_rng(1))
    step = agent._graphed_step()
    outputs = [step(batch).cpu() for _ in range(6)]  # 3 eager, then a capture and two replays
    assert step.graphs
    assert relative_error(outputs[5], outputs[4]) > 1e-3  # two replays: fresh taus and noise
    assert torch.isfinite(torch.stack(outputs)).all()


def test_a_gpu_checkpoint_loads_on_the_cpu_and_acts_the_same(breakout, tmp_path, strict_float32):
    gpu = make("rainbow_iqn", "cuda")
    fill(gpu, breakout)
    for _ in range(6):
        gpu.update(0.4)
    gpu.save(tmp_path)
    cpu = make("rainbow_iqn", "cpu")
    cpu.load(tmp_path)
    obs = np.stack([t[0][0] for t in breakout[::20]])
    with torch.no_grad():
        taus = torch.rand(len(obs), 32)
        q_gpu = gpu.online(gpu._tensor(obs), taus.cuda()).mean(dim=1)
        q_cpu = cpu.online(cpu._tensor(obs), taus).mean(dim=1)
    assert relative_error(q_gpu, q_cpu) < 1e-4
    fill(cpu, breakout)
    assert np.isfinite(cpu.update(0.4)).all()  # the CPU optimizer steps on the GPU run's state
    gpu.load(tmp_path)  # new network objects: the next update captures again
    fill(gpu, breakout)
    gpu.update(0.4)
    assert gpu._graphed.eager_steps == 1 and not gpu._graphed.graphs


def test_bfloat16_losses_stay_near_float32(breakout):
    fp32, bf16 = make("rainbow_iqn", "cuda"), make("rainbow_iqn", "cuda", precision="bfloat16")
    bf16.online.load_state_dict(fp32.online.state_dict())
    bf16.target.load_state_dict(fp32.target.state_dict())
    for agent in (fp32, bf16):
        fixed_randomness(agent)
    fill(fp32, breakout)
    batch = fp32.replay.sample(32, 0.4, np.random.default_rng(1))
    with torch.no_grad():
        assert relative_error(bf16.sample_losses(batch)[0], fp32.sample_losses(batch)[0]) < 5e-2


def test_a_cli_run_trains_on_the_gpu(tmp_path):
    out = tmp_path / "run"
    args = ["run", "atari_saber", "rainbow_iqn", "--tasks", "breakout", "--frames", "8000", "--num-envs", "2"]
    args += ["--set", "device=cuda", "--set", "learning_starts_frames=2000", "--set", "replay_capacity=5000"]
    assert cli([*args, "--out", str(out), "--no-progress"]) in (0, None)
    record = json.loads((out / "run.json").read_text())
    assert "cuda" in json.dumps(record)
    last = max(out.rglob("checkpoints/*/rainbow_iqn.json"))  # named by frames, zero-padded
    assert json.loads(last.read_text())["counters"]["updates"] >= (8000 - 2000) // 4 // 4 - 10
