"""Every paper section a protocol preset cites exists in that paper and says what it is cited for
(issue 29 item 7, an audit of the papers against the code). The section numbers below are the
papers' own headings (SABER: Toromanoff et al. 2019; Machado et al. 2018's extended abstract;
Bellemare et al. 2013), copied from their texts."""

from __future__ import annotations

import re

import pytest

from benchgen_atari_saber.protocols import ALE2013, DQN2015, MACHADO2018, PRESETS, SABER

#: the numbered sections and appendices each paper has
SECTIONS = {
    "SABER": {"1", "1.1", "2", "2.1", "2.2", "2.3", "3", "3.1", "3.2", "4", "5", "5.1", "5.2", "5.3", "6"}
    | {"A", "A.1", "A.2", "B", "B.1", "B.2", "B.3", "C", "D", "D.1", "D.2", "D.3", "E"},
    "Machado": {"1", "2", "3", "4", "4.1", "4.2", "5", "6"},
    "Bellemare": {"1", "2", "2.1", "2.2", "2.3", "3", "3.1", "3.1.1", "3.1.2", "3.1.3", "3.2", "3.2.1", "3.2.2"}
    | {"3.2.3", "4", "4.1", "4.1.1", "4.1.2", "4.1.3", "4.2", "4.2.1", "4.2.2", "4.2.3", "4.3", "5", "5.1", "5.2"}
    | {"6", "7", "A", "B", "C", "D"},
}
_PAPER = {"SABER": "SABER", "Toromanoff": "SABER", "Machado": "Machado", "Bellemare": "Bellemare"}
_CITE = re.compile(r"(section|appendix) ([0-9A-E](?:\.[0-9]+)*)", re.IGNORECASE)


def _citations(text: str) -> list[tuple[str, str]]:
    """(paper, section) for each section cited in ``text``, the paper being the last one named before it."""
    out = []
    for match in _CITE.finditer(text):
        before = text[: match.start()]
        named = [(before.rfind(word), paper) for word, paper in _PAPER.items() if word in before]
        if named:
            out.append((max(named)[1], match.group(2)))
    return out


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_cited_section_exists_in_its_paper(name):
    preset = PRESETS[name]
    cited = [(key, c) for key, text in {**preset.sources, **preset.open_values}.items() for c in _citations(text)]
    for key, (paper, section) in cited:
        assert section in SECTIONS[paper], f"{name}.{key} cites {paper} section {section}, which it does not have"


def test_the_audited_citations():
    # SABER's frame skip: its appendix B.1 (action repeat 4), Rainbow's and IQN's setting (section 5)
    assert "appendix B.1" in SABER.sources["frameskip"] and "section 5" in SABER.sources["frameskip"]
    # infinite gameplay: section 3.2 (capped at 200% in the mean) and appendix E (Table 6)
    assert "section 3.2" in SABER.sources["infinite_gameplay"]
    assert "appendix E" in SABER.sources["infinite_gameplay"]
    # the ALE 2013 full action set: section 2.2 (the joystick's 18 actions; the paper has no 3.3)
    assert "section 2.2" in ALE2013.sources["full_action_space"]
    # Machado et al.'s stickiness 0.25: section 4.2 and Table 1
    assert "section 4.2 and Table 1" in MACHADO2018.sources["sticky_action_probability"]
    assert "section 2.1, 'Action set'" in DQN2015.sources["full_action_space"]


def test_the_citation_reader_finds_bad_sections():
    assert _citations("Bellemare et al. 2013, section 3.3 (x); SABER appendix B.1") == [
        ("Bellemare", "3.3"),
        ("SABER", "B.1"),
    ]
    assert "3.3" not in SECTIONS["Bellemare"]
