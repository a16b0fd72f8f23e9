"""Machado et al. 2018, Table 1 (``data/machado2018_table1.csv``) as shipped, checked against the
paper: its shape, the claims the paper makes from it, and (where the paper's text is at hand)
every number."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchgen_atari_saber.tables import machado2018_table1

PAPER = Path(__file__).resolve().parents[3] / "shared" / "papers" / "revisiting_ale_2018_machado.txt"
GAMES = ("asterix", "beam_rider", "freeway", "seaquest", "space_invaders")  # Bellemare et al.'s training games


def test_the_table_has_every_cell_of_the_paper_once():
    rows = machado2018_table1()
    cells = {(r.game, r.agent, r.sticky_action_probability) for r in rows}
    assert len(rows) == len(cells) == 5 * 3 * 2
    assert {r.game for r in rows} == set(GAMES)
    # "the average over 24 trials for Sarsa(lambda) + Blob-PROST and the Brute, and ... 5 trials for DQN"
    assert {r.trials for r in rows if r.agent == "dqn"} == {5}
    assert {r.trials for r in rows if r.agent != "dqn"} == {24}


def test_the_papers_claim_holds_in_the_table_the_brute_collapses_under_sticky_actions():
    """Section 4.2: the Brute's performance 'critically depends on the environment's determinism';
    in Table 1 it falls on every game with sticky actions, to under 60% of its deterministic score."""
    by = {(r.game, r.agent, r.sticky_action_probability): r.mean for r in machado2018_table1()}
    for game in GAMES:
        assert by[(game, "brute", 0.25)] < 0.6 * by[(game, "brute", 0.0)]


@pytest.mark.skipif(not PAPER.is_file(), reason="the paper's text is not on this machine")
def test_every_number_matches_the_papers_text():
    names = {"ASTERIX": "asterix", "BEAM RIDER": "beam_rider", "Freeway": "freeway", "SEAQUEST": "seaquest"}
    names["SPACE INVADERS"] = "space_invaders"
    agents = ("brute", "sarsa_blob_prost", "dqn")
    expected = {(r.game, r.agent, r.sticky_action_probability): (r.mean, r.std) for r in machado2018_table1()}
    found = 0
    for line in PAPER.read_text().splitlines():
        name = line.split("\t")[0]
        if name not in names:
            continue
        numbers = [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", line[len(name) :])]
        assert len(numbers) == 12, line
        for i, agent in enumerate(agents):
            for j, sticky in enumerate((0.0, 0.25)):
                mean, std = numbers[4 * i + 2 * j], numbers[4 * i + 2 * j + 1]
                assert expected[(names[name], agent, sticky)] == (mean, std), (name, agent, sticky)
                found += 1
    assert found == 30
