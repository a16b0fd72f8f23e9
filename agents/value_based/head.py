"""What a value head module provides: its network, its loss, and acting from its values.

The three heads (``dqn/network.py``: Q-learning, Mnih et al. 2015; ``rainbow/network.py``: C51,
Bellemare et al. 2017; ``rainbow_iqn/network.py``: IQN, Dabney et al. 2018) each subclass
:class:`Head`; nothing in this package imports them. An agent class mixes one head into :class:`~.agent.ValueBasedAgent`
(``class RainbowAgent(CategoricalHead, ValueBasedAgent)``), and the Ape-X actors of
Rainbow-IQN mix it into their own class: the head only needs the attributes listed below, so
learners and actors compute the same targets and losses.
"""

from __future__ import annotations

import abc

import numpy as np
import torch

from .layers import has_noisy_layers


class Head(abc.ABC):
    """A value head. Needs ``config``, ``device``, ``online``, ``target`` (networks built by
    :meth:`build_network`) and ``generator`` (a ``torch.Generator`` on ``device``)."""

    #: True while the target net's weights are the online net's: the learner sets it right after
    #: a target copy and clears it with every optimizer step (DrQ(epsilon) copies after every
    #: update, so its double-Q targets need one pass at the next states instead of two)
    target_is_online: bool = False

    @abc.abstractmethod
    def build_network(self, obs_shape: tuple[int, ...], num_actions: int) -> torch.nn.Module:
        """The online network for these spaces; the target network is a copy. It has
        ``reset_noise(generator)`` and ``set_noise(enabled)`` (no-ops without noisy layers)."""

    @abc.abstractmethod
    def sample_losses(self, batch: dict[str, np.ndarray]) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-sample losses (B,) of a replay batch (``obs``, ``actions``, ``returns``,
        ``discounts``, ``next_obs``: the replay's n-step transitions) and the online estimate
        of Q for the taken actions (B,). Differentiable unless called under ``torch.no_grad``;
        the losses also become the batch's new priorities."""

    @abc.abstractmethod
    def greedy_actions(self, obs: np.ndarray) -> np.ndarray:
        """argmax_a Q(x, a) for a batch of observations, with the online net's current noise setting."""

    # -- shared helpers -------------------------------------------------------------------------
    def _autocast(self):
        """bfloat16 matrix products when ``precision="bfloat16"``, else a no-op context. Without
        autocast's weight cache: a CUDA graph cannot capture it (PyTorch's CUDA Graphs notes), and
        each region here casts a weight once anyway."""
        return torch.autocast(
            self.device.type,
            dtype=torch.bfloat16,
            enabled=self.config.precision == "bfloat16",
            cache_enabled=False,
        )

    def _tensor(self, array: np.ndarray | torch.Tensor) -> torch.Tensor:
        """A batch entry on the device (a tensor already there, e.g. a CUDA graph's input, as is)."""
        if isinstance(array, torch.Tensor):
            return array.to(self.device, non_blocking=True)
        return torch.from_numpy(np.ascontiguousarray(array)).to(self.device, non_blocking=True)

    def _batch_tensors(self, batch: dict[str, np.ndarray]) -> tuple[torch.Tensor, ...]:
        """(obs, actions, returns, discounts, next_obs) of a replay batch, on the device."""
        return tuple(self._tensor(batch[k]) for k in ("obs", "actions", "returns", "discounts", "next_obs"))

    def _bootstrap_selector(self) -> torch.nn.Module:
        """The network whose values pick the bootstrap action a*: the online net (double Q,
        van Hasselt et al. 2016; Rainbow) or the target net (DQN's max over the target's values)."""
        return self.online if self.config.double_q else self.target

    @torch.no_grad()
    def _bootstrap_outputs(self, next_obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(outputs of the net that picks a*, outputs of the target net) at the next states, each
        with fresh noise: one pass when the target net also picks a* (DQN), two with double Q,
        except while the target's weights are the online net's and no noise sets the two passes
        apart (:attr:`target_is_online`): the one pass is then both, exactly. For heads whose
        network takes only observations (expected value, categorical)."""
        selector = self._bootstrap_selector()
        selector.reset_noise(self.generator)
        with self._autocast():
            selector_out = selector(next_obs)
        if selector is self.target or (self.target_is_online and not has_noisy_layers(self.target)):
            return selector_out, selector_out
        self.target.reset_noise(self.generator)  # double Q: a* from the online net, its value from the target
        with self._autocast():
            return selector_out, self.target(next_obs)
