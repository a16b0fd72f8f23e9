"""The guide's "Agents" section names every check and setting of the agent kit, with its default.

The section is prose in ``benchgen/templates/docs/plugin_authors.md.in``; these tests keep it in
step with ``AGENT_CHECKS`` and ``AgentConformance``.
"""

from __future__ import annotations

import inspect

from benchgen import docs
from benchgen.testing import AGENT_CHECKS, KIT_SUITES, AgentConformance


def _agents_section() -> str:
    text = docs.render()
    start = text.index("\n## Agents\n")
    return text[start : text.index("\n## ", start + 1)]


def test_every_check_is_a_test_of_the_class_and_in_the_guide():
    tests = [name for name, _ in inspect.getmembers(AgentConformance, inspect.isfunction) if name.startswith("test_")]
    assert sorted(tests) == sorted(name for name, _ in AGENT_CHECKS)
    section = _agents_section()
    for name, _ in AGENT_CHECKS:
        assert f"- `{name}`:" in section, name


def test_every_setting_is_in_the_guide_with_its_default():
    section = _agents_section()
    for name, _annotation, default, _doc in docs.attribute_docs(AgentConformance):
        assert f"- `{name}" in section, name
        value = getattr(AgentConformance, name)
        if value not in (None, "") and name != "runs_on":
            assert f"`{name} = {default}`" in section, (name, default)
    assert f"`runs_on = {tuple(KIT_SUITES)!r}`".replace("'", '"') in section


def test_the_guide_shows_new_agent_and_the_kit_suites():
    section = _agents_section()
    assert "benchgen new-agent myagent" in section
    for suite in KIT_SUITES:
        assert f"`{suite}`" in section
