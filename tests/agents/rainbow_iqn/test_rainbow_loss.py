"""The IQN quantile Huber loss against hand-computed values."""

from __future__ import annotations

import pytest
import torch

from benchgen_agents.rainbow_iqn.network import quantile_huber_loss


def test_hand_computed_case_kappa_1():
    # z = [0, 1] at tau = [0.25, 0.75]; targets [0.5, 3].  delta_ij = target_j - z_i:
    #   i=0: [0.5, 3.0]  Huber [0.125, 2.5]  weight |0.25 - 0| = 0.25       -> [0.03125, 0.625]
    #   i=1: [-0.5, 2.0] Huber [0.125, 1.5]  weights |0.75 - 1|, |0.75 - 0| -> [0.03125, 1.125]
    # sum over i: [0.0625, 1.75]; mean over j: 0.90625
    z = torch.tensor([[0.0, 1.0]])
    taus = torch.tensor([[0.25, 0.75]])
    targets = torch.tensor([[0.5, 3.0]])
    assert quantile_huber_loss(z, taus, targets, 1.0).item() == pytest.approx(0.90625)


def test_kappa_scales_the_huber_threshold_and_divides():
    # kappa = 2: |3| > 2 -> 2 * (3 - 1) = 4, and every term is divided by kappa.
    #   i=0: [0.125/2 * 0.25, 4/2 * 0.25] = [0.015625, 0.5]; i=1: [0.015625, 2/2 * 0.75 = 0.75]
    z = torch.tensor([[0.0, 1.0]])
    taus = torch.tensor([[0.25, 0.75]])
    targets = torch.tensor([[0.5, 3.0]])
    assert quantile_huber_loss(z, taus, targets, 2.0).item() == pytest.approx((0.03125 + 1.25) / 2)


def test_summed_over_online_quantiles_averaged_over_target_quantiles():
    # Every pair contributes 0.25 (delta = +-1, tau = 0.5, Huber 0.5).
    one_online = quantile_huber_loss(torch.zeros(1, 1), torch.full((1, 1), 0.5), torch.tensor([[1.0, -1.0]]), 1.0)
    two_online = quantile_huber_loss(torch.zeros(1, 2), torch.full((1, 2), 0.5), torch.tensor([[1.0]]), 1.0)
    assert one_online.item() == pytest.approx(0.25)  # mean over N' = 2
    assert two_online.item() == pytest.approx(0.5)  # sum over N = 2


def test_per_sample_and_gradient_direction():
    # Two samples in one batch are independent; the gradient pushes a quantile toward its target.
    z = torch.tensor([[0.0], [5.0]], requires_grad=True)
    taus = torch.tensor([[0.5], [0.5]])
    loss = quantile_huber_loss(z, taus, torch.tensor([[0.5], [5.0]]), 1.0)
    assert loss.shape == (2,)
    assert loss[1].item() == 0.0
    loss.sum().backward()
    assert z.grad[0, 0].item() < 0 and z.grad[1, 0].item() == 0.0
