"""Joint PPO's virtual workers (issue 29 item 5; Nichol et al. 2018, section 4.5): the paper's
worker count is the math (``virtual_workers``), the number of processes hosting them is speed
(``workers``). One process and two reach the same weights after a round; the accumulated update
is, by hand, the mean over the virtual workers of each one's gradient on its own minibatch; the
Sonic suite's tuned joint entry is the paper's 188 workers and plans on a small machine."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from benchgen.agent import AgentEnvironment
from benchgen.errors import UsageError
from benchgen.remote import EpisodeInbox
from benchgen_agents.data_parallel.engine import RoundPlan, hosted_share
from benchgen_agents.data_parallel.in_process import InProcessGroup
from benchgen_agents.ppo import data_parallel as dp
from benchgen_agents.ppo.agent import PPOAgent
from benchgen_agents.ppo.config import PPOConfig
from benchgen_agents.ppo.data_parallel import PPOWorkerProgram
from tests.agents.agent_harness import fresh_ppo_state
from tests.fixture_plugins.suite_factory import SuiteFactory

TASKS = ["chain-8", "chain-12"]
VIRTUAL = 4
N_STEPS = 16


def _setup(**overrides):
    inbox = EpisodeInbox()
    factory = SuiteFactory(inbox.key, "chain", TASKS)
    env, _ = factory(1, seed=0)
    environment = AgentEnvironment(env.single_observation_space, env.single_action_space, 4)
    env.close()
    settings = dict(
        policy="MlpPolicy",
        n_steps=N_STEPS,
        batch_size=8,  # 2 minibatches per epoch of a worker's 16 steps: each shuffles its own
        n_epochs=2,
        learning_rate=3e-3,
        lr_schedule="constant",
        clip_schedule="constant",
        normalize_advantage=True,  # per virtual worker's minibatch, as the paper's MPI workers
        device="cpu",
        virtual_workers=VIRTUAL,
        worker_cpus=0.25,
    )
    return inbox, factory, environment, PPOConfig(**(settings | overrides))


def _in_process_round(config, environment, factory, start, storage=None):
    program = PPOWorkerProgram(config, environment, PPOAgent, storage)
    group = InProcessGroup(factory, program, virtual_workers=VIRTUAL, envs_per_worker=1, unit_seed=7)
    group.start(start, steps_done=0)
    try:
        result = group.play_round(RoundPlan(N_STEPS, True, 0, 10**9))
        return result, program.last_batch()
    finally:
        group.stop()


def test_contiguous_shares():
    assert [hosted_share(r, 2, 4) for r in range(2)] == [[0, 1], [2, 3]]
    assert [hosted_share(r, 3, 188) for r in range(3)] == [
        list(range(0, 62)),
        list(range(62, 125)),
        list(range(125, 188)),
    ]


def test_one_process_and_two_reach_the_same_weights_after_a_round(local_ray):
    from benchgen_agents.data_parallel.engine import DataParallelGroup

    ray = local_ray
    inbox, factory, environment, config = _setup()
    start = fresh_ppo_state(config, environment)
    one, one_batch = _in_process_round(config, environment, factory, start)
    program = PPOWorkerProgram(config, environment, PPOAgent)
    group = DataParallelGroup(
        ray, factory, program, workers=2, virtual_workers=VIRTUAL, envs_per_worker=1, unit_seed=7, worker_cpus=0.25
    )
    group.start(start, steps_done=0)
    try:
        two = group.play_round(RoundPlan(N_STEPS, True, 0, 10**9))
        batches = ray.get([a.last_batch.remote() for a in group.actors])
    finally:
        group.stop()
    # the same virtual workers played the same episodes, hosted 4 in one process or 2 + 2
    assert [b["virtual"] for b in batches] == [[0, 1], [2, 3]]
    for name in ("observations", "actions", "advantages"):
        joined = np.concatenate([b[name] for b in batches], axis=1)
        assert np.array_equal(one_batch[name], joined), name
    assert [r.frames for r in one.reports] == [r.frames for r in two.reports]
    assert [len(r.episodes) for r in one.reports] == [len(r.episodes) for r in two.reports]
    # and took the same steps: equal up to the order of float sums
    assert one.state["n_updates"] == two.state["n_updates"] == config.n_epochs
    changed = False
    for key, value in one.state["policy"].items():
        torch.testing.assert_close(value, two.state["policy"][key], rtol=1e-5, atol=1e-6, msg=key)
        changed |= not torch.equal(value, start["policy"][key])
    assert changed


def _loss(policy, obs, actions, old_values, old_log_probs, advantages, returns, config, clip):
    """PPO's clipped loss (Schulman et al. 2017, eq. 9) with the value and entropy terms, written
    out here: advantages normalized over the minibatch, values clipped if ``clip_range_vf``."""
    values, log_prob, entropy = policy.evaluate_actions(obs, actions)
    values = values.flatten()
    if config.clip_range_vf is not None:
        values = old_values + (values - old_values).clamp(-config.clip_range_vf, config.clip_range_vf)
    adv = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    ratio = torch.exp(log_prob - old_log_probs)
    policy_loss = -torch.min(adv * ratio, adv * ratio.clamp(1 - clip, 1 + clip)).mean()
    value_loss = ((returns - values) ** 2).mean()
    return policy_loss + config.vf_coef * value_loss - config.ent_coef * entropy.mean()


@pytest.mark.parametrize("clip_range_vf", [None, 0.01])
def test_the_accumulated_update_is_the_mean_of_the_virtual_workers_gradients(tmp_path, clip_range_vf):
    """By hand: at each step, every virtual worker's loss on its own i-th minibatch, the mean of
    their gradients, clipped, one Adam step; rollouts memory-mapped (rollout_memory_gib=0); with
    and without value clipping (the one PPO update's, which joint PPO takes too)."""
    # a clip norm that does not bind: clipping would hide the scale of the gradients
    inbox, factory, environment, config = _setup(rollout_memory_gib=0.0, max_grad_norm=1e3, clip_range_vf=clip_range_vf)
    start = fresh_ppo_state(config, environment)
    result, batch = _in_process_round(config, environment, factory, start, storage=str(tmp_path / "rollouts"))
    assert sorted(p.name for p in (tmp_path / "rollouts").iterdir()) == [f"virtual{v}.npy" for v in range(VIRTUAL)]
    policy = PPOAgent(config, environment)._new_policy()
    policy.load_state_dict(start["policy"])
    policy.optimizer.load_state_dict(start["optimizer"])
    policy.set_training_mode(True)
    params = list(policy.parameters())

    def column(name, v, flat):  # worker v's rollout entries at its flat indices (env * n_steps + step)
        return torch.as_tensor(batch[name][flat % N_STEPS, v])

    for epoch in batch["minibatches"]:
        assert len(epoch) == VIRTUAL and all(len(mb) == 2 for mb in epoch)
        for i in range(2):
            grads = []
            for v in range(VIRTUAL):
                flat = epoch[v][i]
                policy.optimizer.zero_grad()
                loss = _loss(
                    policy,
                    column("observations", v, flat),
                    column("actions", v, flat).long(),
                    column("values", v, flat),
                    column("log_probs", v, flat),
                    column("advantages", v, flat),
                    column("returns", v, flat),
                    config,
                    config.clip_range,
                )
                loss.backward()
                grads.append([p.grad.clone() for p in params])
            for k, p in enumerate(params):
                p.grad = torch.stack([g[k] for g in grads]).mean(0)
            torch.nn.utils.clip_grad_norm_(params, config.max_grad_norm)
            policy.optimizer.step()
    for key, value in policy.state_dict().items():
        torch.testing.assert_close(result.state["policy"][key], value, rtol=1e-5, atol=1e-6, msg=key)
    # Adam's moments hold the gradients' scale (its step alone barely does): the mean, not the sum
    mine, by_hand = result.state["optimizer"]["state"], policy.optimizer.state_dict()["state"]
    for k in by_hand:
        for moment in ("exp_avg", "exp_avg_sq"):
            torch.testing.assert_close(mine[k][moment], by_hand[k][moment], rtol=1e-4, atol=1e-9, msg=moment)
    # each virtual worker shuffled its own rollout: different orders
    assert len({tuple(mb[0]) for mb in batch["minibatches"][0]}) > 1


def test_rollouts_that_fit_neither_memory_nor_disk_are_refused_with_what_they_need(tmp_path, monkeypatch):
    from gymnasium.spaces import Box

    frames = Box(0, 255, (84, 84, 4), np.uint8)
    config = PPOConfig(policy="CnnPolicy", n_steps=8192, batch_size=8192, virtual_workers=188)
    assert dp.rollout_storage(config, frames, 1, tmp_path) == tmp_path / "rollouts"  # 10 GiB > 4 GiB
    small = PPOConfig(policy="CnnPolicy", n_steps=128, batch_size=128, virtual_workers=4)
    assert dp.rollout_storage(small, frames, 1, tmp_path) is None
    monkeypatch.setattr(dp.shutil, "disk_usage", lambda path: type("U", (), {"free": 10 * dp.GIB})())
    # frame stacks keep one new 84x84 frame per step: 188 x 8192 x 7056 bytes
    with pytest.raises(UsageError, match=r"188 virtual workers keep 10\.1 GiB of rollouts"):
        dp.rollout_storage(config, frames, 1, tmp_path)


def test_workers_cannot_exceed_virtual_workers():
    with pytest.raises(ValueError, match="workers at most virtual_workers"):
        PPOConfig(workers=8, virtual_workers=4)


def test_sonic_joint_ppo_is_the_papers_188_workers_and_plans_on_a_small_machine():
    from benchgen.tuned import tuned_values
    from benchgen_agents import joint
    from benchgen_sonic.suite import SonicSuite

    values = tuned_values(SonicSuite(), "ppo", joint=True)
    assert values["virtual_workers"] == 188 and values["envs_per_worker"] == 1
    assert "workers" not in values  # processes: the machine's business, not the paper's
    config = PPOConfig(**values)
    spec = next(s for s in joint.SPECS if s.name == "ppo_joint")
    run = type("Run", (), {"executor": "local", "ray_address": None})()
    (line,) = spec.check_config(config, run)  # no refusal: one process hosts all 188
    assert "188 virtual workers" in line and "accumulated" in line
    assert dp.virtual_workers(config) == 188 and dp.envs_per_worker(config, 47) == 1
