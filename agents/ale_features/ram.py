"""RAM features: the console's 1,024 bits of memory and the logical AND of every pair of them
(Bellemare et al. 2013, section 3.1.1 and appendix A.5).

Appendix A.5: "The first part of the generated feature vector simply includes the 1024 bits of
RAM ... the logical-AND of all possible bit pairs is appended to the feature vector." Bit ``k``
(least significant first) of byte ``b`` is feature ``8 * b + k``; the pair of bits ``i < j`` is
feature ``1024 + i*(2048 - i - 1)/2 + (j - i - 1)``, so 1,024 + 523,776 = 524,800 features.
Only the console's own 128 bytes are read (footnote 7: cartridge RAM such as the Super Chip's is
left out).
"""

from __future__ import annotations

import numpy as np

from benchgen_agents.ale_features.common import num_with_pairs, pair_indices

#: the Atari 2600 console RAM, bytes
RAM_BYTES = 128
RAM_BITS = 8 * RAM_BYTES


class RamFeatures:
    """RAM bits and their pairwise ANDs."""

    inputs = "ram"
    uses_background = False
    num_features = num_with_pairs(RAM_BITS)

    def reset(self) -> None:
        """Nothing to forget between episodes."""

    def __call__(self, ram: np.ndarray, background: np.ndarray | None = None) -> np.ndarray:
        """Active features of ``ram`` (128 ``uint8`` bytes); sorted ``int64``."""
        ram = np.asarray(ram, dtype=np.uint8)
        if ram.shape != (RAM_BYTES,):
            raise ValueError(f"the RAM features read the console's {RAM_BYTES} bytes, got shape {ram.shape}")
        bits = np.flatnonzero(np.unpackbits(ram, bitorder="little"))
        return np.concatenate([bits, pair_indices(bits, RAM_BITS)])
