"""Comparison tests load the toy suite and its scoring plugin (references, baselines)."""

from __future__ import annotations

import pytest

from tests.compare.helpers import PLUGINS


@pytest.fixture(autouse=True)
def _toy_scoring(_fresh_registry, monkeypatch):
    from benchgen import registry

    monkeypatch.setenv("BENCHGEN_PLUGINS", PLUGINS)
    registry.reset_registry()
    yield
    registry.reset_registry()


@pytest.fixture
def two_agents(tmp_path):
    """Synthetic runs of the hand-computed case: agent_a (3 seeds) and agent_b (2 seeds)."""
    from tests.compare.helpers import A, B, make_run

    root = tmp_path / "runs"
    make_run(root / "a", "agent_a", A)
    make_run(root / "b", "agent_b", B)
    return root
