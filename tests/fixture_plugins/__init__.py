"""Fixture plugins for the tests: small suites, scorers and agents registered by the tests
(``BENCHGEN_PLUGINS=tests.fixture_plugins.toy_suite``), not tests of the ``plugins/`` folder."""
