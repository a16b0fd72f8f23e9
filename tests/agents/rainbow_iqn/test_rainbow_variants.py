"""``variant``: ``paper`` (the field defaults) and ``saber_code`` (SABER's released code), each
value documented; the variant supplies defaults that explicit settings override; the resolved
values land in run.json; an unknown variant is one line, exit 2, nothing written."""

from __future__ import annotations

import dataclasses
import json

import pytest

from benchgen.agent import AgentSpec
from benchgen.config import build_dataclass, field_docs
from benchgen.errors import UsageError
from benchgen_agents.rainbow_iqn import SPECS, RainbowIQNConfig
from benchgen_agents.rainbow_iqn.config import VARIANTS
from tests.conftest import run_cli

SABER_CODE = {
    "noisy_sigma0": 0.1,
    "learning_starts_frames": 320_000,  # 80K agent steps at 4 frames per step
    "target_update_frames": 128_000,  # 32K agent steps
    "actor_priorities": True,
}
#: small networks so that a CLI run takes seconds (none of them is a field the variants set)
SMALL = dict(
    hidden_size=32,
    mlp_hidden_size=32,
    num_tau_samples=8,
    num_tau_prime_samples=8,
    num_quantile_samples=4,
    cosine_embedding_dim=16,
    batch_size=8,
)


def test_the_variants_are_paper_and_saber_code_and_saber_code_is_the_issues_values():
    assert set(VARIANTS) == {"paper", "saber_code"}
    assert VARIANTS["paper"] == {}  # the paper variant is the field defaults
    assert VARIANTS["saber_code"] == SABER_CODE
    assert SPECS[0].variants is VARIANTS and RainbowIQNConfig().variant == "paper"
    paper = RainbowIQNConfig()
    assert (paper.noisy_sigma0, paper.learning_starts_frames, paper.target_update_frames) == (0.5, 80_000, 32_000)
    assert paper.actor_priorities is False


#: what each field's docstring says of each variant's value
DOCUMENTED = {
    "noisy_sigma0": ("paper: 0.5", "saber_code: 0.1"),
    "learning_starts_frames": ("paper: 80k frames", "saber_code: 320k frames = 80k agent steps"),
    "target_update_frames": ("paper: 32k frames", "saber_code: 128k frames = 32k agent steps"),
    "actor_priorities": ("paper: false", "saber_code: true"),
}


def test_every_value_of_every_variant_is_documented_on_its_field_with_its_source():
    docs = {k: " ".join(v.split()).lower() for k, v in field_docs(RainbowIQNConfig).items()}
    assert set(DOCUMENTED) == set(SABER_CODE)
    for field, fragments in DOCUMENTED.items():
        for fragment in fragments:
            assert fragment in docs[field], (field, fragment)
        assert "saber's code" in docs[field] and ("rainbow" in docs[field] or "noisynet" in docs[field])
    for name in VARIANTS:
        assert f'"{name}"' in docs["variant"]
    for field in SABER_CODE:
        assert field in docs["variant"]


def test_rainbow_iqn_joint_has_the_same_variants():
    from benchgen_agents.joint import SPECS as JOINT

    joint = next(s for s in JOINT if s.name == "rainbow_iqn_joint")
    assert joint.variants == VARIANTS


def test_variant_defaults_and_registration_checks():
    spec = SPECS[0]
    assert spec.variant_defaults() == {} and spec.variant_defaults("saber_code") == SABER_CODE
    with pytest.raises(UsageError, match=r"^unknown rainbow_iqn variant 'saber'; did you mean 'saber_code'\?"):
        spec.variant_defaults("saber")
    with pytest.raises(UsageError, match="unknown rainbow_iqn variant"):
        RainbowIQNConfig(variant="dopamine")  # a config built in Python is checked too

    @dataclasses.dataclass
    class NoVariantField:
        lr: float = 1.0

    with pytest.raises(TypeError, match="has no 'variant' field"):
        AgentSpec("x", NoVariantField, lambda c, e: None, variants={"a": {}})
    with pytest.raises(TypeError, match=r"variant 'a' of agent 'x' sets unknown config fields \['typo'\]"):
        AgentSpec("x", RainbowIQNConfig, lambda c, e: None, variants={"a": {"typo": 1}})
    assert AgentSpec("x", NoVariantField, lambda c, e: None).variant_defaults("anything") == {}


def run_chain(tmp_path, *args):
    out = tmp_path / "run"
    small = [f"--set={k}={v}" for k, v in SMALL.items()]
    proc = run_cli(
        "run",
        "chain",
        "rainbow_iqn",
        "--tasks",
        "chain-8",
        "--frames",
        "80",
        "--out",
        out,
        "--no-progress",
        *small,
        *args,
        plugins="tests.fixture_plugins.vector_suite",
        timeout=300,
    )
    return proc, out


def test_saber_code_resolves_to_its_values_in_run_json(tmp_path):
    proc, out = run_chain(tmp_path, "--set", "variant=saber_code")
    assert proc.returncode == 0, proc.stderr[-3000:]
    recorded = json.loads((out / "run.json").read_text())["agent_config"]
    assert recorded["variant"] == "saber_code"
    assert {k: recorded[k] for k in SABER_CODE} == SABER_CODE
    assert (recorded["learning_starts_steps"], recorded["target_update_steps"]) == (80_000, 32_000)
    assert recorded["hidden_size"] == 32 and recorded["learning_rate"] == 5e-5  # the rest as before
    # a resumed run rebuilds the same config from what run.json holds (the variant is not re-applied)
    fields = {f.name for f in dataclasses.fields(RainbowIQNConfig) if f.init}
    rebuilt = build_dataclass(RainbowIQNConfig, {k: v for k, v in recorded.items() if k in fields}, "saved")
    assert dataclasses.asdict(rebuilt) == recorded


def test_explicit_settings_beat_the_variant(tmp_path):
    config = tmp_path / "settings.yaml"
    config.write_text("variant: saber_code\nnoisy_sigma0: 0.3\n")
    proc, out = run_chain(tmp_path, "--config", config, "--set", "learning_starts_frames=8000")
    assert proc.returncode == 0, proc.stderr[-3000:]
    recorded = json.loads((out / "run.json").read_text())["agent_config"]
    assert recorded["variant"] == "saber_code"
    assert (recorded["noisy_sigma0"], recorded["learning_starts_frames"]) == (0.3, 8000)  # given: they win
    assert (recorded["target_update_frames"], recorded["actor_priorities"]) == (128_000, True)  # the variant's


def test_an_unknown_variant_is_one_line_exit_2_and_nothing_written(tmp_path):
    proc, out = run_chain(tmp_path, "--set", "variant=saber")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "benchgen: error: unknown rainbow_iqn variant 'saber'; did you mean 'saber_code'? (known: paper, saber_code)"
    ]
    assert not out.exists()
