"""The benchmark reward and the level's end rules, evaluated once per emulator frame.

A Python reimplementation of the contest scenario of stable-retro's Sonic integrations
(``contest.json`` -> ``script.lua``: ``calc_progress``, ``contest_reward``, ``contest_done``),
which is the paper's reward (Nichol et al. 2018):

* progress ``p = clip(x - x0, 0, x_end - x0) / (x_end - x0)``, x0 the player's x at the start;
* reward per frame ``9000 * (p_t - p_{t-1})``: 9000 in total for reaching the end, negative
  when going back (but never below the start: p is clipped at 0);
* on reaching the end, a bonus ``1000 * (1 - t / T)`` with t the frames elapsed and T the time
  limit in frames (18,000 = 4,500 timesteps), so finishing at once earns 1000, at the limit 0.

Reimplemented rather than run as Lua so that the end *reason* is known (the Lua ``done`` is one
boolean) and so that the same code scores test integrations of other games.
``tests/sonic/test_sonic_lua_parity.py`` runs each game's installed script in stable-retro's Lua
engine next to this code and checks that every frame's reward and end agree.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from typing import Protocol as TypingProtocol

from benchgen_sonic.levels import Level
from benchgen_sonic.protocol import SonicProtocol

#: end reasons this module decides; the env adds "time_limit"
COMPLETED = "completed"
LIFE_LOST = "life_lost"
SPECIAL_STAGE = "special_stage"
TIME_LIMIT = "time_limit"

_COMPARE = {"==": operator.eq, "!=": operator.ne}


class RamView(TypingProtocol):
    """Named RAM variables (``stable_retro.data.GameData`` or a dict in unit tests)."""

    def __getitem__(self, name: str) -> int: ...


class ProgressTracker:
    """Per-episode state of the contest reward for one level.

    Call :meth:`reset` after the emulator is reset and :meth:`frame` after every emulator frame;
    ``frame`` returns the frame's reward and, if the frame ends the episode, why.
    """

    def __init__(self, level: Level, protocol: SonicProtocol = SonicProtocol()):
        self.level = level
        self.rules = level.rules
        self.protocol = protocol
        self.progress = 0.0
        self.max_progress = 0.0
        self.bonus = 0.0
        self.frames = 0

    #: the per-episode values, what a saved state of the level carries besides the emulator's
    #: (``act`` and ``screen_x`` exist on levels whose x restarts at an act change)
    EPISODE_VALUES: tuple[str, ...] = (
        "progress",
        "max_progress",
        "bonus",
        "frames",
        "offset_x",
        "end_dx",
        "lives",
        "act",
        "screen_x",
    )

    def snapshot(self) -> tuple:
        """The :data:`EPISODE_VALUES` now (None for those this level does not keep)."""
        return tuple(getattr(self, name, None) for name in self.EPISODE_VALUES)

    def restore(self, values: tuple) -> None:
        """Go back to a :meth:`snapshot`."""
        for name, value in zip(self.EPISODE_VALUES, values, strict=True):
            if value is not None:
                setattr(self, name, value)

    @property
    def score(self) -> float:
        """The episode's total reward so far, in closed form (no floating-point drift from
        summing per-frame differences): 9000 x progress + the completion bonus."""
        return self.protocol.progress_reward * self.progress + self.bonus

    def reset(self, ram: RamView) -> None:
        """Start an episode from the RAM right after the emulator reset."""
        x0 = int(ram["x"])
        # script.lua: offset_x = -x; end_x = level_max_x[level] - x (relative to the start)
        self.offset_x = -x0
        self.end_dx = self.level.end_x - x0
        if self.end_dx <= 0:
            raise ValueError(f"{self.level.task}: start x {x0} is already past the end offset {self.level.end_x}")
        self.lives = int(ram["lives"])
        if self.rules.act_change_shift:
            self.act, self.screen_x = int(ram["act"]), int(ram["screen_x"])
        self.progress = 0.0
        self.max_progress = 0.0
        self.bonus = 0.0
        self.frames = 0

    def frame(self, ram: RamView) -> tuple[float, str | None]:
        """Reward of the frame just emulated, and the end reason if the episode ends on it."""
        self.frames += 1
        if self.rules.act_change_shift:
            # Sonic 3&K: when the act changes mid-level, x restarts; shift the offset by the
            # camera's jump so that progress continues where it was (calc_progress in script.lua)
            act, screen_x = int(ram["act"]), int(ram["screen_x"])
            if act != self.act:
                self.offset_x -= screen_x - self.screen_x
            self.act, self.screen_x = act, screen_x

        x = int(ram["x"]) + self.offset_x
        progress = min(max(x, 0), self.end_dx) / self.end_dx
        reward = self.protocol.progress_reward * (progress - self.progress)
        self.progress = progress
        self.max_progress = max(self.max_progress, progress)

        lives = int(ram["lives"])
        life_lost = lives < self.lives
        self.lives = lives
        if progress >= 1.0:
            # completion bonus for beating the level quickly (contest_reward); completion wins
            # over a life lost on the same frame because the script pays the bonus then too
            elapsed = min(self.frames / self.protocol.max_frames, 1.0)
            self.bonus = self.protocol.completion_bonus * (1.0 - elapsed)
            return reward + self.bonus, COMPLETED
        if self.rules.special_stage is not None:
            name, op, value = self.rules.special_stage
            if _COMPARE[op](int(ram[name]), value):
                return reward, SPECIAL_STAGE
        if life_lost:
            return reward, LIFE_LOST
        return reward, None


def check_start_level(level: Level, ram: Mapping[str, int] | RamView) -> None:
    """Raise if the save state does not start in the zone/act the end offset belongs to."""
    if level.zone is None:
        return
    zone, act = int(ram["zone"]), int(ram["act"])
    if (zone, act) != (level.zone, level.act):
        raise RuntimeError(
            f"{level.task}: the save state starts in zone {zone} act {act}, but its end offset is "
            f"that of zone {level.zone} act {level.act}; the stable-retro integration changed"
        )
