"""Image augmentation of replayed observations (DrQ, Kostrikov, Yarats, Fergus 2021, "Image
Augmentation Is All You Need", section 3.1 and its Atari 100K setup).

:func:`shift_intensity` is what the learner applies to a sampled batch's states and next states
when ``augmentation="shift_intensity"``: a random shift (each image padded by 4 pixels with its
edge pixels repeated, then cropped back to its size at a uniformly random offset; the frames of
one stacked observation move together) followed by the intensity scaling that Dopamine's
``labs/atari_100k`` DrQ and SPR (Schwarzer et al. 2021) add: every image multiplied by
``1 + 0.05 * clip(n, -2, 2)`` with ``n ~ N(0, 1)``.

Written with numpy on the replay's uint8 arrays because the batch is still numpy at that point
and torch has no per-sample random crop; the draws come from the agent's numpy generator, which
checkpoints save, so a resumed run augments as the uninterrupted one would.
"""

from __future__ import annotations

import numpy as np

#: pixels of padding on each side (DrQ: 4)
PAD = 4
#: standard deviation of the intensity factor (SPR, Dopamine's DrQ: 0.05)
INTENSITY_SCALE = 0.05


def random_shift(images: np.ndarray, rng: np.random.Generator, pad: int = PAD) -> np.ndarray:
    """``images`` (B, C, H, W) shifted by up to ``pad`` pixels in each direction, one offset per
    sample; same dtype. Pixels shifted in repeat the edge (DrQ's replicate padding)."""
    b, c, h, w = images.shape
    padded = np.pad(images, ((0, 0), (0, 0), (pad, pad), (pad, pad)), mode="edge")
    top = rng.integers(0, 2 * pad + 1, size=b)
    left = rng.integers(0, 2 * pad + 1, size=b)
    rows = (top[:, None] + np.arange(h))[:, None, :, None]
    cols = (left[:, None] + np.arange(w))[:, None, None, :]
    return padded[np.arange(b)[:, None, None, None], np.arange(c)[None, :, None, None], rows, cols]


def random_intensity(images: np.ndarray, rng: np.random.Generator, scale: float = INTENSITY_SCALE) -> np.ndarray:
    """``images`` as float32 (same 0-255 scale), each sample multiplied by ``1 + scale * clip(n, -2, 2)``."""
    factor = 1.0 + scale * np.clip(rng.standard_normal(images.shape[0]), -2.0, 2.0)
    return images.astype(np.float32) * factor.astype(np.float32).reshape(-1, *([1] * (images.ndim - 1)))


def shift_intensity(images: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """:func:`random_shift`, then :func:`random_intensity` (float32, 0-255 scale)."""
    return random_intensity(random_shift(images, rng), rng)


def augment_batch(batch: dict[str, np.ndarray], kind: str, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """A replay batch with its ``obs`` and ``next_obs`` augmented (each its own draws) when
    ``kind`` is "shift_intensity" and the observations are images; otherwise ``batch`` itself."""
    if kind == "none" or batch["obs"].ndim != 4:
        return batch
    return {**batch, "obs": shift_intensity(batch["obs"], rng), "next_obs": shift_intensity(batch["next_obs"], rng)}
