"""Joint agents (Nichol et al. 2018): ``ppo_joint``, ``rainbow_joint`` and ``rainbow_iqn_joint`` specs, and the runner's
joint -> zero-shot -> fine-tune chain end to end, checked in the results store: episodes per
phase and task, per-task scores in the report, and checkpoint provenance."""

from __future__ import annotations

import importlib.util
import json
import sqlite3
from pathlib import Path

import pytest

from benchgen.tuned import tuned_values
from benchgen_agents import joint, ppo
from benchgen_atari_saber.suite import AtariSaberSuite
from benchgen_sonic.suite import SonicSuite
from tests.conftest import run_cli, run_cli_subprocess

TEST_PLUGINS = "tests.fixture_plugins.toy_suite,tests.fixture_plugins.platformer_suite"


def test_joint_specs_share_the_single_task_algorithms():
    specs = {s.name: s for s in joint.SPECS}
    base = ppo.SPECS[0]
    pj = specs["ppo_joint"]
    assert pj.joint and not base.joint
    assert (pj.config_class, pj.factory, pj.default_num_envs) == (
        base.config_class,
        base.factory,
        base.default_num_envs,
    )
    # the single agent's suite settings, plus the paper's data-parallel setup (188 virtual workers on
    # Sonic, hosted by however many processes run)
    sonic, atari = SonicSuite(), AtariSaberSuite()
    assert pj.algorithm == base.algorithm == "ppo"
    assert tuned_values(sonic, pj.algorithm, joint=True) == {
        **tuned_values(sonic, "ppo"),
        "virtual_workers": 188,
        "envs_per_worker": 1,
    }
    assert tuned_values(atari, pj.algorithm, joint=True) == tuned_values(atari, "ppo")
    if importlib.util.find_spec("benchgen_agents.rainbow_iqn") is not None:
        from benchgen_agents.rainbow import SPECS as RAINBOW
        from benchgen_agents.rainbow_iqn import SPECS as RAINBOW_IQN

        rj, iqn = specs["rainbow_joint"], specs["rainbow_iqn_joint"]
        assert rj.joint and (rj.config_class, rj.factory) == (RAINBOW[0].config_class, RAINBOW[0].factory)
        # Algorithm 2's setup on Sonic (32 workers x 8 joint environments, batch 256), joint environments
        setup = {"workers": 32, "envs_per_worker": 8, "batch_size": 256}
        assert rj.algorithm == RAINBOW[0].algorithm == "rainbow"
        assert tuned_values(sonic, rj.algorithm, joint=True) == {**tuned_values(sonic, "rainbow"), **setup}
        assert (rj.task_sampling, pj.task_sampling, iqn.task_sampling) == ("episode", "fixed", "fixed")
        assert iqn.joint and (iqn.config_class, iqn.factory) == (RAINBOW_IQN[0].config_class, RAINBOW_IQN[0].factory)


def _store(out: Path):
    conn = sqlite3.connect(out / "results.sqlite")
    conn.row_factory = sqlite3.Row
    units = {r["unit_id"]: dict(r) for r in conn.execute("SELECT * FROM units ORDER BY ordinal")}
    episodes = [dict(r) for r in conn.execute("SELECT * FROM episodes ORDER BY id")]
    conn.close()
    return units, episodes


def _check_chain(
    out: Path,
    train: list[str],
    test: list[str],
    zeroshot_episodes: int,
    seed: int = 0,
    from_checkpoint: str | None = None,
) -> str:
    """Assert the chain's store; return the checkpoint the zero-shot/fine-tune units started from."""
    units, episodes = _store(out)
    assert all(u["status"] == "done" for u in units.values())
    by_phase = {}
    for ep in episodes:
        by_phase.setdefault(ep["phase"], {}).setdefault(ep["task"], []).append(ep)
    if from_checkpoint is None:
        (joint_unit,) = [u for u in units.values() if u["phase"] == "joint"]
        assert json.loads(joint_unit["tasks"]) == train
        assert set(by_phase["joint"]) == set(train)  # every train task played episodes
        start = joint_unit["last_checkpoint"]
        assert Path(start).name == f"{joint_unit['budget_frames']:012d}"  # its final checkpoint
    else:
        assert "joint" not in by_phase
        start = from_checkpoint
    zeroshot = [u for u in units.values() if u["phase"] == "zeroshot"]
    assert sorted(json.loads(u["tasks"])[0] for u in zeroshot) == sorted(train + test)
    for u in zeroshot:
        assert u["init_checkpoint"] == start and not u["learn"]
    for task in train + test:
        assert len(by_phase["zeroshot"][task]) >= zeroshot_episodes
    finetune = [u for u in units.values() if u["phase"] == "finetune"]
    assert sorted(json.loads(u["tasks"])[0] for u in finetune) == sorted(test)
    for u in finetune:
        assert u["init_checkpoint"] == start and u["frames_done"] >= u["budget_frames"]
        saved = json.loads((out / u["last_checkpoint"] / "checkpoint.json").read_text())  # stored relative to the run
        assert saved["init_checkpoint"] == start and saved["phase"] == "finetune"
    assert set(by_phase["finetune"]) == set(test)
    report = json.loads((out / "report" / "report.json").read_text())
    assert set(report["phases"]["zeroshot"]["final"]["score"]) == set(train + test)  # per-task scores
    assert set(report["phases"]["finetune"]["final"]["score"]) == set(test)
    return start


def test_ppo_joint_chain_on_toy_then_from_checkpoint(tmp_path):
    out = tmp_path / "run"
    proc = run_cli(
        "run",
        "toy",
        "ppo_joint",
        "--split",
        "pair",
        # 1,000 frames per env: every env ends episodes of its task (at most 50 steps, 200 frames)
        "--frames",
        "3000",
        "--finetune",
        "--set",
        "run.finetune_budget=2000",
        "--set",
        "n_steps=32",
        "--set",
        "batch_size=64",
        "--set",
        "n_epochs=1",  # the chain is what is checked here; one pass over each rollout keeps it short
        "--set",
        "run.checkpoint_every=1500",  # periodic saves every 1,500, not every budget / 20
        "--set",
        "run.zeroshot_episodes=3",
        "--num-envs",
        "3",
        "--out",
        out,
        "--no-progress",
        plugins=TEST_PLUGINS,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    start = str(out / _check_chain(out, ["count-20", "count-50"], ["count-80"], zeroshot_episodes=3))  # stored relative
    units, episodes = _store(out)
    envs = {(e["env_index"], e["task"]) for e in episodes if e["phase"] == "joint"}
    assert envs == {(0, "count-20"), (1, "count-50"), (2, "count-20")}  # train tasks cycled over 3 envs
    assert units["joint-pair-s0"]["budget_frames"] == 3000  # the run's budget, in total over train tasks

    again = tmp_path / "from"
    # --frames only sizes the zero-shot units' frame cap here (budget / number of train tasks)
    proc = run_cli(
        "run",
        "toy",
        "ppo_joint",
        "--split",
        "pair",
        "--from",
        start,
        "--finetune",
        "--frames",
        "3000",
        "--set",
        "run.finetune_budget=2000",
        "--set",
        "n_steps=32",
        "--set",
        "batch_size=64",
        "--set",
        "n_epochs=1",
        "--set",
        "run.zeroshot_episodes=2",
        "--out",
        again,
        "--no-progress",
        plugins=TEST_PLUGINS,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    _check_chain(again, ["count-20", "count-50"], ["count-80"], zeroshot_episodes=2, from_checkpoint=start)

    # a zero-shot frame cap too small for any episode: the units finish, the report says so
    capped = tmp_path / "capped"
    proc = run_cli(
        "run",
        "toy",
        "ppo_joint",
        "--split",
        "pair",
        "--from",
        start,
        "--frames",
        "3000",
        "--set",
        "run.zeroshot_frames=8",
        "--set",
        "run.zeroshot_episodes=2",
        "--out",
        capped,
        "--no-progress",
        plugins=TEST_PLUGINS,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    units, episodes = _store(capped)
    assert {u["budget_frames"] for u in units.values()} == {8} and not episodes
    zeroshot = json.loads((capped / "report" / "report.json").read_text())["phases"]["zeroshot"]
    assert zeroshot["short"] == {"count-20 s0": 0, "count-50 s0": 0, "count-80 s0": 0}
    assert "Fewer than 2 episodes" in (capped / "report" / "report.md").read_text()


def test_ppo_joint_chain_cnn_on_platformer(tmp_path):
    out = tmp_path / "run"
    # sprint episodes last at most 40 timesteps: every phase completes several
    proc = run_cli(
        "run",
        "platformer",
        "ppo_joint",
        "--split",
        "sprint",
        "--timesteps",
        "400",
        "--finetune",
        "--set",
        "run.finetune_budget=200",
        "--set",
        "n_steps=32",
        "--set",
        "batch_size=64",
        "--set",
        "n_epochs=1",  # the chain is what is checked here; one pass over each rollout keeps it short
        "--set",
        "run.checkpoint_every=200",  # periodic saves every 200, not every budget / 20
        "--set",
        "run.zeroshot_episodes=2",
        "--num-envs",
        "2",
        "--out",
        out,
        "--no-progress",
        plugins=TEST_PLUGINS,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    _check_chain(out, ["sprint-10", "sprint-15"], ["sprint-20"], zeroshot_episodes=2)


@pytest.mark.skipif(importlib.util.find_spec("stable_retro") is None, reason="stable-retro is not installed")
def test_ppo_joint_chain_on_sonic_airstriker(tmp_path):
    """The Sonic suite's code on the free Airstriker ROM: train on one level, test on another."""
    split = tmp_path / "air.yaml"
    split.write_text("suite: sonic_airstriker\nname: air\ntrain: [airstriker-Level1]\ntest: [airstriker1000-Level1]\n")
    out = tmp_path / "run"
    proc = run_cli_subprocess(
        "run",
        "sonic_airstriker",
        "ppo_joint",
        "--split",
        split,
        "--timesteps",
        "128",
        "--finetune",
        "--set",
        "run.finetune_budget=64",  # one env: an episode ends by timestep 50
        "--set",
        "n_steps=32",
        "--set",
        "batch_size=32",
        "--set",
        "run.checkpoint_every=64",  # periodic saves every 64, not every budget / 20
        "--set",
        "run.zeroshot_episodes=1",
        # 2 virtual workers instead of the paper's 188 (each an emulator process), accumulated in the
        # unit's own process (no workers setting: no Ray); fine-tuning runs one regular PPO
        "--set",
        "virtual_workers=2",
        "--num-envs",
        "1",
        "--out",
        out,
        "--no-progress",
        plugins="tests.sonic.airstriker_plugin",
        timeout=600,
    )
    units, _ = _store(out)
    assert units and all(u["status"] == "done" for u in units.values()), proc.stderr[-3000:]
    _check_chain(out, ["airstriker-Level1"], ["airstriker1000-Level1"], zeroshot_episodes=1)


def test_ppo_joint_chain_on_atari(tmp_path):
    """Two train games, one test game, SABER protocol with its episodes capped at 500 frames
    (``max_episode_frames``): every phase's episodes end within its budget, whatever the policy."""
    from benchgen.registry import Registry

    if "atari_saber" not in Registry().suites:
        pytest.skip("the atari_saber suite is not installed in this checkout")
    split = tmp_path / "mini.yaml"
    split.write_text("suite: atari_saber\nname: mini\ntrain: [pong, breakout]\ntest: [space_invaders]\n")
    # SABER's own cap is 100 hours: a Pong game played at random lasts ~3,500 frames
    protocol = tmp_path / "saber_short.yaml"
    protocol.write_text("base: saber\nmax_episode_frames: 500\n")
    out = tmp_path / "run"
    proc = run_cli(
        "run",
        "atari_saber",
        "ppo_joint",
        "--split",
        split,
        "--protocol",
        protocol,
        # 1,500 frames per env and train task (3 capped episodes); zero-shot units stop at 1,500
        # frames (the budget over 2 train tasks), 2 envs end their first episode at 1,000
        "--frames",
        "3000",
        "--finetune",
        "--set",
        "run.finetune_budget=2000",
        "--set",
        "n_steps=64",
        "--set",
        "batch_size=128",
        "--set",
        "n_epochs=1",  # the chain is what is checked here; one pass over each rollout keeps it short
        "--set",
        "run.checkpoint_every=1500",  # periodic saves every 1,500, not every budget / 20
        "--set",
        "run.zeroshot_episodes=1",
        "--num-envs",
        "2",
        "--out",
        out,
        "--no-progress",
        plugins=None,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    _check_chain(out, ["pong", "breakout"], ["space_invaders"], zeroshot_episodes=1)


@pytest.mark.skipif(
    importlib.util.find_spec("benchgen_agents.rainbow_iqn.agent") is None,
    reason="the rainbow_iqn agent is not in this checkout",
)
@pytest.mark.parametrize(
    "agent, head_settings",
    [
        ("rainbow_joint", ["--set", "num_atoms=11"]),
        (
            "rainbow_iqn_joint",
            ["--set", "num_tau_samples=8", "--set", "num_tau_prime_samples=8", "--set", "num_quantile_samples=8"],
        ),
    ],
)
def test_rainbow_joint_chain_on_platformer(tmp_path, agent, head_settings):
    """Rainbow (C51) and Rainbow-IQN through the chain on 40-step episodes, with small heads,
    hidden layers and batches (CPU time, and checkpoints of a few MB); they learn from frame 400 on."""
    out = tmp_path / "run"
    proc = run_cli(
        "run",
        "platformer",
        agent,
        "--split",
        "sprint",
        "--timesteps",
        "200",
        "--finetune",
        "--set",
        "run.finetune_budget=100",
        "--set",
        "learning_starts_frames=400",
        "--set",
        "replay_capacity=1000",
        "--set",
        "target_update_frames=200",
        "--set",
        "batch_size=8",
        "--set",
        "hidden_size=32",
        *head_settings,
        "--set",
        "run.zeroshot_episodes=1",
        "--num-envs",
        "2",
        "--set",
        "run.checkpoint_every=1000",  # not one save every budget / 20: a Rainbow checkpoint holds its replay
        "--out",
        out,
        "--no-progress",
        plugins=TEST_PLUGINS,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    _check_chain(out, ["sprint-10", "sprint-15"], ["sprint-20"], zeroshot_episodes=1)
