"""How an environment's observations travel: uint8 through the suite env, the env's own values to agents.

benchgen's environment contract fixes the suite env's observations as a ``uint8`` ``Box`` (the
conformance kit checks it), while most Gymnasium environments observe something else: a float
vector (classic control), an integer state (toy text) or a tuple of them (Blackjack). An
:class:`ObservationCodec` carries each kind losslessly through the suite env and gives agents,
above the recorder, the environment's values again:

=================  ==========================================  ===================================
kind               suite env (``uint8``)                       agents
=================  ==========================================  ===================================
``uint8``          a ``uint8`` ``Box`` (images), unchanged     unchanged
``one_hot``        spaces made only of ``Discrete``,           the same 0/1 vector as ``float32``
                   ``MultiDiscrete`` and ``MultiBinary``
                   (also inside ``Tuple``/``Dict``):
                   gymnasium's ``flatten`` (one-hot per
                   discrete value), as 0/1 bytes
``float32_bytes``  anything else gymnasium can flatten to a    the flat ``float32`` vector, every
                   ``Box`` (float vectors): the flat vector    value exactly as the env gave it
                   as ``float32``, its 4 little-endian bytes   (``float64`` values are rounded to
                   per value                                   ``float32`` once, here)
=================  ==========================================  ===================================

A space that flattens to no ``Box`` (``Graph``, ``Sequence``, ``Text``) has no codec, and its
environments are not tasks of the suite.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

#: the env's own uint8 Box observations, passed through
UINT8 = "uint8"
#: discrete observations as gymnasium's flattened 0/1 vector
ONE_HOT = "one_hot"
#: any other flattenable observation as the bytes of its float32 vector
FLOAT32_BYTES = "float32_bytes"

#: little-endian float32, the byte layout of ``float32_bytes`` on every machine
_F32 = np.dtype("<f4")


def _discrete_only(space: gym.Space) -> bool:
    """Whether ``space`` holds nothing but discrete values (so it flattens to 0/1 indicators)."""
    if isinstance(space, (spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary)):
        return True
    if isinstance(space, spaces.Tuple):
        return all(_discrete_only(s) for s in space.spaces)
    if isinstance(space, spaces.Dict):
        return all(_discrete_only(s) for s in space.spaces.values())
    return False


class ObservationCodec:
    """One environment's observation space, and its ``uint8`` and agent-side forms."""

    def __init__(self, env_space: gym.Space):
        #: the environment's own observation space
        self.env_space = env_space
        if isinstance(env_space, spaces.Box) and env_space.dtype == np.uint8:
            self.kind = UINT8
            self.suite_space: spaces.Box = env_space
            self.agent_space: spaces.Box = env_space
            return
        flat = spaces.flatten_space(env_space)  # NotImplementedError / a non-Box: no codec (codec_for)
        if not isinstance(flat, spaces.Box):
            raise NotImplementedError(f"{env_space} does not flatten to a Box")
        size = int(np.prod(flat.shape))
        if _discrete_only(env_space):
            self.kind = ONE_HOT
            self.suite_space = spaces.Box(0, 1, (size,), np.uint8)
            self.agent_space = spaces.Box(0.0, 1.0, (size,), np.float32)
        else:
            self.kind = FLOAT32_BYTES
            self.suite_space = spaces.Box(0, 255, (size * _F32.itemsize,), np.uint8)
            low = np.asarray(flat.low, dtype=np.float32).reshape(size)
            high = np.asarray(flat.high, dtype=np.float32).reshape(size)
            self.agent_space = spaces.Box(low, high, (size,), np.float32)

    def encode(self, obs: Any) -> np.ndarray:
        """One observation of the environment as the suite env's ``uint8`` array."""
        if self.kind == UINT8:
            return np.asarray(obs, dtype=np.uint8)
        flat = spaces.flatten(self.env_space, obs)
        if self.kind == ONE_HOT:
            return np.asarray(flat, dtype=np.uint8)
        return np.ascontiguousarray(np.asarray(flat, dtype=_F32).reshape(-1)).view(np.uint8)

    def decode(self, batch: np.ndarray) -> np.ndarray:
        """A batch of the suite env's observations (``(n, ...)``) as agents get them: a new array."""
        if self.kind == UINT8:
            return np.array(batch, dtype=np.uint8)
        batch = np.ascontiguousarray(batch, dtype=np.uint8)
        if self.kind == ONE_HOT:
            return batch.astype(np.float32)
        return batch.view(_F32).astype(np.float32)


def codec_for(space: gym.Space) -> ObservationCodec | None:
    """The codec of an observation space, or None when the suite cannot carry it."""
    try:
        return ObservationCodec(space)
    except NotImplementedError:
        return None
