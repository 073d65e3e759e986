"""The opt-in pytest plugin of the contract suites: capabilities and strict expected failures.

R-HOST-3: a plugin author declares what an implementation can do and which suite tests it
is known to fail, in one place; missing capabilities deselect with a reported reason,
expected failures are strict, and nothing is silently skipped.
"""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

# Inner runs load only what they test: no cache files, and no hypothesis plugin (pytester
# drops the modules a run imported, so every run would import and rewrite hypothesis again).
QUIET = ("-p", "no:cacheprovider", "-p", "no:hypothesispytest")

CONFTEST = 'pytest_plugins = ["memory_contracts.pytest_plugin"]\n'

SUITE = """
import pytest
from memory_contracts.pytest_plugin import require_declared, requires_capability


class ToyContract:
    capabilities = frozenset({"persistence"})

    def test_round_trip(self):
        assert True

    @requires_capability("persistence")
    def test_survives_a_reopen(self):
        require_declared(self, "persistence")

    @pytest.mark.requires_capability("teleport")
    def test_teleports(self):
        assert True

    def test_known_bug(self):
        assert False, "the implementation gets this wrong"
"""


def _suite(pytester: pytest.Pytester, body: str, *, conftest: bool = True) -> None:
    if conftest:
        pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_suite=SUITE + body)


def test_a_missing_capability_deselects_with_the_reason_in_the_summary(
    pytester: pytest.Pytester,
) -> None:
    """R-HOST-3: lacking "persistence" deselects the reopen test, and says why."""
    _suite(
        pytester,
        """
class TestVolatile(ToyContract):
    capabilities = frozenset({"teleport"})
    expected_failures = {"test_known_bug": "issue 7"}
""",
    )
    result = pytester.runpytest(*QUIET)
    result.assert_outcomes(passed=2, xfailed=1, deselected=1)
    result.stdout.fnmatch_lines(
        [
            "*deselected for capabilities not declared*",
            "*TestVolatile::test_survives_a_reopen: needs capability 'persistence' (data "
            "survives a close and a reopen); TestVolatile.capabilities does not declare it",
        ]
    )


def test_an_expected_failure_that_passes_fails_the_run(pytester: pytest.Pytester) -> None:
    """R-HOST-3: expected failures are xfail(strict=True), so a fix surfaces."""
    _suite(
        pytester,
        """
class TestFixed(ToyContract):
    capabilities = frozenset({"persistence", "teleport"})
    expected_failures = {"test_round_trip": "was broken before 1.2"}
""",
    )
    result = pytester.runpytest(*QUIET)
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(["*XPASS(strict)*expected failure: was broken before 1.2*"])


def test_an_expected_failure_naming_no_test_is_a_usage_error(pytester: pytest.Pytester) -> None:
    """A misspelt entry would otherwise hide nothing and mislead everyone."""
    _suite(
        pytester,
        """
class TestTypo(ToyContract):
    expected_failures = {"test_round_trip_typo": "reason"}
""",
    )
    result = pytester.runpytest(*QUIET)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*TestTypo.expected_failures names 'test_round_trip_typo'*"])


def test_a_declared_capability_that_skips_fails_instead(pytester: pytest.Pytester) -> None:
    """R-HOST-3: a declared capability is a promise; a skip under it is an error."""
    _suite(
        pytester,
        """
class TestPromises(ToyContract):
    capabilities = frozenset({"persistence", "teleport"})
    expected_failures = {"test_known_bug": "known"}

    @requires_capability("stalling")
    def test_needs_a_stalling_provider(self, stalling_provider_factory):
        pass

    @pytest.fixture
    def stalling_provider_factory(self):
        pytest.skip("capability not provided: stalling_provider_factory")

TestPromises.capabilities = TestPromises.capabilities | {"stalling"}
""",
    )
    result = pytester.runpytest(*QUIET)
    result.assert_outcomes(passed=3, xfailed=1, errors=1)
    result.stdout.fnmatch_lines(
        ["*test_needs_a_stalling_provider skipped although its class declares stalling*"]
    )


def test_undeclared_capabilities_keep_the_suites_run_time_skips(
    pytester: pytest.Pytester,
) -> None:
    """Without a declaration (None) nothing is deselected; the suite checks at run time."""
    _suite(
        pytester,
        """
class TestUndeclared(ToyContract):
    capabilities = None

    def test_known_bug(self):
        pass
""",
    )
    result = pytester.runpytest(*QUIET)
    result.assert_outcomes(passed=4)


def test_without_the_plugin_a_missing_capability_still_skips(pytester: pytest.Pytester) -> None:
    """Projects that do not opt in keep the old behaviour: a reasoned skip, not a failure."""
    _suite(
        pytester,
        """
class TestNoPlugin(ToyContract):
    capabilities = frozenset()

    def test_known_bug(self):
        pass
""",
        conftest=False,
    )
    result = pytester.runpytest(*QUIET, "-rs", "-W", "ignore::pytest.PytestUnknownMarkWarning")
    result.assert_outcomes(passed=3, skipped=1)
    result.stdout.fnmatch_lines(["*needs capability 'persistence'*"])


def test_optional_provider_fixtures_count_as_capabilities(pytester: pytest.Pytester) -> None:
    """R-HOST-3: a provider that cannot stall or fail declares neither, and the suite's
    stalling/failing checks are deselected instead of skipped."""
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        test_provider="""
import pytest
from memory_contracts.fake_providers import FakeEmbeddingProvider
from memory_contracts.providers import SENTINEL_SECRET, EmbeddingProviderContract


class TestLocalEmbedder(EmbeddingProviderContract):
    capabilities = frozenset()

    @pytest.fixture
    def embedding_provider_factory(self):
        return lambda: FakeEmbeddingProvider(api_key=SENTINEL_SECRET)
"""
    )
    result = pytester.runpytest(*QUIET)
    outcomes = result.parseoutcomes()
    assert outcomes["deselected"] == 3
    assert "skipped" not in outcomes and "failed" not in outcomes
    result.stdout.fnmatch_lines(
        ["*test_a_stalled_call_ends_at_its_deadline: needs capability 'stalling'*"]
    )


def test_tests_that_need_nothing_ignore_an_unrelated_capabilities_attribute(
    pytester: pytest.Pytester,
) -> None:
    """Loading the plugin never breaks a project's other tests: only tests that need a
    capability read `capabilities`, whatever it means elsewhere."""
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        test_other="""
class TestUnrelated:
    capabilities = 42  # this project's own meaning

    def test_plain(self):
        assert self.capabilities == 42
"""
    )
    result = pytester.runpytest(*QUIET)
    result.assert_outcomes(passed=1)
