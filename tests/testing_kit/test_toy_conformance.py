"""The conformance kit, run on the scripted toy suite exactly as a plugin's own tests run it."""

from __future__ import annotations

from benchgen.testing import SuiteConformance
from tests.fixture_plugins import toy_suite


class TestToySuiteConformance(SuiteConformance):
    plugin = toy_suite
    suite_name = "toy"
    episode_tasks = ["count-20"]
