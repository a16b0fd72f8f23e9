"""The Python reward and end rules against stable-retro's own contest scenario (Lua), per frame.

Each game's installed ``script.lua`` runs in stable-retro's Lua engine on the Airstriker test
integration, its level table lookup replaced by the test level's end offset, and the RAM
variables Airstriker lacks (zone, act, screen_x, game_mode, special_stage) read from a RAM word
that stays 0. :class:`~benchgen_sonic.progress.ProgressTracker` must give the same reward and
the same end on every frame.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import stable_retro
import stable_retro.data as retro_data

from benchgen_sonic.levels import GAME_RULES, GAMES, Level
from benchgen_sonic.progress import ProgressTracker
from benchgen_sonic.protocol import SonicProtocol
from benchgen_sonic.testing import AIRSTRIKER, AIRSTRIKER_INFO, AIRSTRIKER_START_X, buttons

#: a RAM word Airstriker never writes (0 throughout play)
ZERO_WORD = 0xFFFFFC

END_X = AIRSTRIKER_START_X + 100


@pytest.fixture
def integration(tmp_path):
    """(data.json, contest.json) for Airstriker running ``game``'s contest script."""

    def make(game: str) -> tuple[str, str]:
        script = Path(retro_data.get_file_path(game, "script.lua", retro_data.Integrations.STABLE)).read_text()
        assert script.count("level_max_x[level_key()]") >= 1
        (tmp_path / "script.lua").write_text(script.replace("level_max_x[level_key()]", str(END_X)))
        contest = json.loads(
            Path(retro_data.get_file_path(game, "contest.json", retro_data.Integrations.STABLE)).read_text()
        )
        (tmp_path / "contest.json").write_text(json.dumps(contest))
        info = json.loads(AIRSTRIKER_INFO.read_text())
        for name, kind in (
            ("zone", "|u1"),
            ("act", "|u1"),
            ("screen_x", ">u2"),
            ("game_mode", "|u1"),
            ("special_stage", "|i1"),
        ):
            info["info"][name] = {"address": ZERO_WORD, "type": kind}
        (tmp_path / "data.json").write_text(json.dumps(info))
        return str(tmp_path / "data.json"), str(tmp_path / "contest.json")

    return make


@pytest.mark.parametrize("game", GAMES)
def test_frame_rewards_and_ends_match_the_lua_contest_script(game, integration):
    info, scenario = integration(game)
    env = stable_retro.make(
        AIRSTRIKER, info=info, scenario=scenario, render_mode=None, use_restricted_actions=stable_retro.Actions.ALL
    )
    try:
        tracker = ProgressTracker(Level(AIRSTRIKER, "Level1", END_X, rules=GAME_RULES[game]), SonicProtocol())
        right, left, noop = buttons("RIGHT"), buttons("LEFT"), buttons()
        episodes = {
            "completed": [right] * 8 + [left] * 12 + [right] * 100,  # forward, back past the start, to the end
            "life_lost": [noop] * 1000,  # an idle ship is shot down
        }
        for expected_end, actions in episodes.items():
            env.reset()
            tracker.reset(env.data)
            for frame, action in enumerate(actions):
                _, lua_reward, lua_done, _, _ = env.step(action)
                reward, end = tracker.frame(env.data)
                assert reward == pytest.approx(lua_reward, abs=1e-3), (expected_end, frame)
                assert (end is not None) == lua_done, (expected_end, frame)
                if lua_done:
                    assert end == expected_end
                    break
            else:
                pytest.fail(f"the {expected_end} episode did not end")
    finally:
        env.close()
