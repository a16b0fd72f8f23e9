"""Agents set torch's process-wide thread count; give every test the count it started with."""

from __future__ import annotations

import pytest
import torch


@pytest.fixture(autouse=True)
def _restore_torch_threads():
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)
