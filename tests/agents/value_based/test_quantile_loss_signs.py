"""The IQN quantile Huber loss when TD errors exceed kappa on both sides (the hand cases of
tests/agents/rainbow_iqn/test_rainbow_loss.py have large positive errors only): the loss, and its
gradient, clipped to the quantile weight on each side."""

from __future__ import annotations

import pytest
import torch

from benchgen_agents.rainbow_iqn.network import quantile_huber_loss


def test_quantile_huber_loss_for_large_errors_of_both_signs():
    # z = [0] at tau = 0.25; targets [3, -3, -0.5], kappa 1:
    #   delta  3   : Huber 1 * (3 - 0.5) = 2.5, weight |0.25 - 0| = 0.25 -> 0.625
    #   delta -3   : Huber 2.5,              weight |0.25 - 1| = 0.75 -> 1.875
    #   delta -0.5 : Huber 0.125,            weight 0.75              -> 0.09375
    # mean over the three targets: (0.625 + 1.875 + 0.09375) / 3 = 0.864583...
    z = torch.tensor([[0.0]], requires_grad=True)
    loss = quantile_huber_loss(z, torch.tensor([[0.25]]), torch.tensor([[3.0, -3.0, -0.5]]), 1.0)
    assert loss.item() == pytest.approx((0.625 + 1.875 + 0.09375) / 3)
    loss.backward()
    # gradient: (-0.25 * 1 + 0.75 * 1 + 0.75 * 0.5) / 3 = 0.875 / 3 (the two large errors: clipped to +-1)
    assert z.grad.item() == pytest.approx(0.875 / 3)


def test_kappa_2_for_a_large_negative_error():
    # z = [0, 1] at tau = [0.25, 0.9]; target [-3], kappa 2:
    #   i=0: delta -3 > kappa: Huber 2 * (3 - 1) = 4, / kappa = 2, weight |0.25 - 1| = 0.75 -> 1.5
    #   i=1: delta -4:         Huber 2 * (4 - 1) = 6, / kappa = 3, weight |0.9 - 1| = 0.1  -> 0.3
    # summed over the online quantiles: 1.8
    z = torch.tensor([[0.0, 1.0]])
    loss = quantile_huber_loss(z, torch.tensor([[0.25, 0.9]]), torch.tensor([[-3.0]]), 2.0)
    assert loss.item() == pytest.approx(1.8)
