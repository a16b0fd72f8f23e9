"""A test integration: the free Airstriker ROM scored by the Sonic suite's own reward code.

The Sonic ROMs are commercial and absent from test machines; ``Airstriker-Genesis-v0`` ships with
stable-retro. ``data/testing/airstriker.json`` is a RAM map for it that names the player ship's
horizontal position ``x`` (it starts at 272 and moves 5 per frame while RIGHT is held, up to
412) and keeps Airstriker's ``lives``. A :class:`~benchgen_sonic.levels.Level` over that map runs
through exactly the code the 58 Sonic levels use: sticky frame skip, the progress reward, the
completion bonus, the life-lost and time-limit ends, the subprocess vector env.
"""

from __future__ import annotations

import numpy as np

from benchgen_sonic.env import button_mask, mask_to_buttons
from benchgen_sonic.levels import DATA_DIR, Level

AIRSTRIKER = "Airstriker-Genesis-v0"

#: the ship's x when the Level1 save state is loaded
AIRSTRIKER_START_X = 272

#: the RAM map naming ``x`` and ``lives`` for Airstriker
AIRSTRIKER_INFO = DATA_DIR / "testing" / "airstriker.json"


def airstriker_level(end_dx: int = 100) -> Level:
    """Airstriker's first level as a "Sonic level" that ends ``end_dx`` pixels right of the start.

    The ship cannot go past x = 412, so ``end_dx > 140`` makes a level that is never completed
    (its episodes end by a lost life or the time limit).
    """
    return Level(
        game=AIRSTRIKER,
        state="Level1",
        end_x=AIRSTRIKER_START_X + end_dx,
        split="test",
        info_path=str(AIRSTRIKER_INFO),
        slug="airstriker" if end_dx == 100 else f"airstriker{end_dx}",
    )


def buttons(*names: str) -> np.ndarray:
    """The 12-button vector (a single env's action) pressing ``names``, e.g. ``buttons("RIGHT")``;
    the vector env takes :func:`benchgen_sonic.env.button_mask` integers instead."""
    return mask_to_buttons(button_mask(*names))
