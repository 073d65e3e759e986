"""PluginConformance catches the ways a plugin is commonly wired wrong, and says which.

R-ARCH-3: each broken plugin below is installed as a throwaway distribution and checked
by the suite in one pytester run; every defect fails exactly the test meant to catch it,
with a message naming the plugin and the problem.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from memory_plugins.loader import load_plugins

pytest_plugins = ["pytester"]

# Inner runs load only what they test: no cache files, and no hypothesis plugin (pytester
# drops the modules a run imported, so every run would import and rewrite hypothesis again).
QUIET = ("-p", "no:cacheprovider", "-p", "no:hypothesispytest")

HEADER = """
from memory_plugins import hookimpl
from memory_contracts.fake_providers import FakeEmbeddingProvider
"""

PLUGINS = {
    # distribution: (module source, conformance class body)
    "misspelt-hook": """
@hookimpl
def agent_memory_register_embeding_providers(register):
    register("misspelt", lambda context: FakeEmbeddingProvider(), description="x")
""",
    "registers-nothing": """
def agent_memory_register_embedding_providers(register):  # no @hookimpl
    register("forgotten", lambda context: FakeEmbeddingProvider(), description="x")
""",
    "wrong-product": """
@hookimpl
def agent_memory_register_embedding_providers(register):
    register("not-an-embedder", lambda context: object(), description="returns nothing useful")
""",
    "zzz-shadow": """
@hookimpl
def agent_memory_register_embedding_providers(register):
    register("hashing", lambda context: FakeEmbeddingProvider(), description="a clash")
""",
    "undescribed": """
@hookimpl
def agent_memory_register_embedding_providers(register):
    register("quiet", lambda context: FakeEmbeddingProvider())
""",
}

SUITE = """
from memory_contracts.plugin import PluginConformance

class TestMisspelt(PluginConformance):
    entry_point = "misspelt-hook"

class TestNothing(PluginConformance):
    entry_point = "registers-nothing"

class TestWrongProduct(PluginConformance):
    entry_point = "wrong-product"

class TestShadow(PluginConformance):
    entry_point = "zzz-shadow"

class TestUndescribed(PluginConformance):
    distribution = "undescribed"
    options = {"quiet-typo": {"dimensions": 3}}

class TestNotInstalled(PluginConformance):
    entry_point = "no-such-plugin"
"""


def _install(site: Path, distribution: str, source: str) -> None:
    module = distribution.replace("-", "_") + "_plugin"
    (site / f"{module}.py").write_text(HEADER + textwrap.dedent(source), encoding="utf-8")
    info = site / f"{distribution.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        f"[agent_memory]\n{distribution} = {module}\n", encoding="utf-8"
    )


@pytest.fixture(autouse=True)
def _native_modules_stay_imported() -> None:
    # pytester drops the modules an in-process run imported; a native extension (duckdb)
    # imported again in one process aborts it. Import every first-party plugin first.
    load_plugins(strict=True, distributions=["agent-memory"])


@pytest.fixture
def report(pytester: pytest.Pytester) -> pytest.RunResult:
    site = pytester.mkdir("site")
    for distribution, source in PLUGINS.items():
        _install(site, distribution, source)
    pytester.syspathinsert(site)
    pytester.makepyfile(test_conformance=SUITE)
    return pytester.runpytest("-q", *QUIET, "-rfE")


def _failed(result: pytest.RunResult) -> set[str]:
    return {
        line.split("::", 1)[1].split(" ", 1)[0]
        for line in result.outlines
        if line.startswith(("FAILED ", "ERROR "))
    }


def test_each_defect_fails_the_test_meant_to_catch_it(report: pytest.RunResult) -> None:
    """R-ARCH-3: a misspelt hook, a missing @hookimpl, a product that is not the port, a
    name another distribution owns, an undescribed registration, a misspelt options key
    and a plugin that is not installed each fail their own check, saying so."""
    failed = _failed(report)
    assert {
        "TestMisspelt::test_it_loads_in_strict_mode_without_unknown_hooks",
        "TestNothing::test_it_registers_at_least_one_implementation",
        "TestWrongProduct::test_every_registration_builds_an_object_satisfying_its_port",
        "TestShadow::test_it_coexists_with_every_installed_plugin",
        "TestUndescribed::test_every_registration_is_well_formed",
        "TestUndescribed::test_options_name_registrations_of_the_plugin",
        "TestNotInstalled::test_the_plugin_is_installed_in_the_agent_memory_group",
    } <= failed
    # A plugin that cannot be found or loaded fails one test; the rest error at setup.
    assert report.parseoutcomes()["failed"] == 8
    # The sound parts of a broken plugin still pass: failures are specific, not wholesale.
    assert "TestShadow::test_every_registration_passes_its_family_smoke_check" not in failed
    assert "TestUndescribed::test_every_registration_passes_its_family_smoke_check" not in failed

    # The messages a plugin author reads name the plugin and the problem.
    report.stdout.fnmatch_lines(
        [
            "*misspelt-hook*implements unknown hook 'agent_memory_register_embeding_providers'"
            " (did you mean 'agent_memory_register_embedding_providers'?)*",
        ],
        consecutive=False,
    )
    text = report.stdout.str()
    assert "registers-nothing 1.0 (registers-nothing) registered nothing" in text
    assert "'not-an-embedder' from wrong-product 1.0 produced object, which does not " in text
    assert (
        "embedding_provider plugin 'hashing' is registered twice: by agent-memory 0.1.0 "
        "(memory_plugins.builtin.embedders) and by zzz-shadow 1.0 (zzz_shadow_plugin)" in text
    )
    assert "embedding_provider 'quiet': no description" in text
    assert "options for unknown registrations: ['quiet-typo']" in text
    assert "no entry point 'no-such-plugin' in the 'agent_memory' entry-point group" in text
