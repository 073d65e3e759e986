"""Plugin loading: entry points, broken plugins, duplicates, misspelt hooks (R-ARCH-3)."""

from __future__ import annotations

import logging
import types

import pytest

from memory_plugins import hookimpl
from memory_plugins.builtin import clocks as builtin_clocks
from memory_plugins.builtin.clocks import SystemClocks
from memory_plugins.errors import DuplicatePluginError, PluginLoadError
from memory_plugins.loader import load_plugins
from memory_plugins.registry import LOCAL_DISTRIBUTION

BROKEN_MODULE = """
    raise ImportError("needs libfoo >= 2")
"""


def _clock_plugin(name: str) -> object:
    """A plugin object (not a module) registering one working clock."""

    class Plugin:
        @hookimpl
        def agent_memory_register_clocks(self, register):
            register(name, lambda context: SystemClocks())

    Plugin.__name__ = f"Plugin_{name}"
    return Plugin()


def test_builtin_clocks_are_discovered_through_the_entry_point_group():
    """R-ARCH-3: first-party adapters register through `agent_memory` entry points, with
    their distribution recorded like any third-party plugin."""
    result = load_plugins(distributions=["agent-memory"])

    system = result.registry.get("clock", "system")
    assert system.distribution == "agent-memory"
    assert system.version
    assert system.module == "memory_plugins.builtin.clocks"


def test_broken_plugin_is_reported_with_distribution_and_version_and_skipped(
    fake_dist, clock_plugin_source, caplog
):
    """R-ARCH-3: a plugin that fails to import is reported (name, distribution, version,
    error) and skipped; the other plugins still load."""
    fake_dist(
        "broken-plugin",
        "2.3.1",
        entry_points={"broken": "am_broken_mod"},
        files={"am_broken_mod": BROKEN_MODULE},
    )
    fake_dist(
        "good-plugin",
        "1.0",
        entry_points={"good": "am_good_mod"},
        files={"am_good_mod": clock_plugin_source("good-clock")},
    )

    with caplog.at_level(logging.WARNING, logger="memory_plugins.loader"):
        result = load_plugins(distributions=["broken-plugin", "good-plugin"])

    [failure] = result.failures
    assert failure.entry_point == "broken"
    assert failure.distribution == "broken-plugin"
    assert failure.version == "2.3.1"
    assert failure.error == "ImportError: needs libfoo >= 2"
    assert result.registry.failures == result.failures
    assert result.registry.get("clock", "good-clock").distribution == "good-plugin"
    assert "broken-plugin 2.3.1" in caplog.text


def test_broken_plugin_raises_in_strict_mode_naming_entry_point_distribution_and_error(
    fake_dist,
):
    """R-ARCH-3: strict mode raises instead of skipping."""
    fake_dist(
        "broken-plugin",
        "2.3.1",
        entry_points={"broken": "am_broken_mod2"},
        files={"am_broken_mod2": BROKEN_MODULE},
    )

    with pytest.raises(PluginLoadError) as raised:
        load_plugins(strict=True, distributions=["broken-plugin"])

    message = str(raised.value)
    assert "'broken'" in message
    assert "broken-plugin 2.3.1" in message
    assert "ImportError: needs libfoo >= 2" in message


def test_distribution_filter_loads_nothing_else(fake_dist, clock_plugin_source):
    fake_dist(
        "good-plugin",
        "1.0",
        entry_points={"good": "am_good_mod3"},
        files={"am_good_mod3": clock_plugin_source("good-clock")},
    )

    result = load_plugins(distributions=["Good_Plugin"])  # normalised like packaging does

    assert [r.name for r in result.registry.registrations()] == ["good-clock"]
    assert result.failures == ()


def test_duplicate_name_in_strict_mode_names_both_distributions(fake_dist, clock_plugin_source):
    """R-ARCH-3: a duplicate (family, name) is an error naming both distributions."""
    fake_dist(
        "alpha-clocks",
        "1.0",
        entry_points={"a": "am_alpha"},
        files={"am_alpha": clock_plugin_source("shared")},
    )
    fake_dist(
        "beta-clocks",
        "2.0",
        entry_points={"b": "am_beta"},
        files={"am_beta": clock_plugin_source("shared")},
    )

    with pytest.raises(DuplicatePluginError) as raised:
        load_plugins(strict=True, distributions=["alpha-clocks", "beta-clocks"])

    assert "'shared'" in str(raised.value)
    assert "alpha-clocks 1.0" in str(raised.value)
    assert "beta-clocks 2.0" in str(raised.value)


def test_duplicate_name_keeps_the_first_distribution_by_name_when_not_strict(
    fake_dist, clock_plugin_source
):
    """R-ARCH-3: non-strict mode reports the duplicate and keeps one, deterministically."""
    # Created in reverse order so sys.path/discovery order cannot be what decides.
    fake_dist(
        "zulu-clocks",
        "1.0",
        entry_points={"z": "am_zulu"},
        files={"am_zulu": clock_plugin_source("shared", "from zulu")},
    )
    fake_dist(
        "alpha-clocks",
        "1.0",
        entry_points={"a": "am_alpha2"},
        files={"am_alpha2": clock_plugin_source("shared", "from alpha")},
    )

    result = load_plugins(distributions=["zulu-clocks", "alpha-clocks"])

    assert result.registry.get("clock", "shared").distribution == "alpha-clocks"
    [failure] = result.failures
    assert failure.distribution == "zulu-clocks"
    assert "alpha-clocks 1.0" in failure.error
    assert "zulu-clocks 1.0" in failure.error


def test_misspelt_hook_is_caught_by_check_pending_in_strict_mode():
    """R-ARCH-3: `check_pending()` turns a misspelt hook into an error naming the hook."""
    typo = types.ModuleType("typo_plugin")

    @hookimpl
    def agent_memory_register_embeding_providers(register):  # sic
        register("never", lambda context: None)

    typo.agent_memory_register_embeding_providers = agent_memory_register_embeding_providers

    with pytest.raises(PluginLoadError) as raised:
        load_plugins(strict=True, entry_points=False, plugins=[typo])

    message = str(raised.value)
    assert "agent_memory_register_embeding_providers" in message
    assert "typo_plugin" in message
    assert "did you mean 'agent_memory_register_embedding_providers'" in message


def test_plugin_with_misspelt_hook_is_skipped_entirely_when_not_strict():
    """R-ARCH-3: the offending plugin is reported and unregistered, its other hooks too."""

    class HalfRight:
        @hookimpl
        def agent_memory_register_clocks(self, register):
            register("half-right", lambda context: SystemClocks())

        @hookimpl
        def agent_memory_register_extractor(self, register):  # should be ..._extractors
            register("x", lambda context: None)

    result = load_plugins(entry_points=False, plugins=[HalfRight(), builtin_clocks])

    assert result.registry.names("clock") == ("system",)
    [failure] = result.failures
    assert failure.entry_point == "HalfRight"
    assert "agent_memory_register_extractor" in failure.error


def test_explicit_plugin_objects_register_as_local_distribution():
    """R-ARCH-3: hosts and tests hand plugin objects in; they register the same way."""
    result = load_plugins(
        entry_points=False, plugins=[builtin_clocks, _clock_plugin("one"), _clock_plugin("two")]
    )

    assert result.registry.names("clock") == ("one", "system", "two")
    system = result.registry.get("clock", "system")
    assert system.distribution == LOCAL_DISTRIBUTION
    assert system.version is None
    assert system.capabilities == frozenset({"domain", "infra"})
    assert result.failures == ()


def test_same_class_registered_twice_gets_distinct_plugin_names():
    result = load_plugins(entry_points=False, plugins=[_clock_plugin("a"), _clock_plugin("a")])

    assert result.registry.names("clock") == ("a",)
    [failure] = result.failures  # the second offers a duplicate, and that is reported
    assert "registered twice" in failure.error


@pytest.mark.parametrize("bad_name", ["", "Upper", "has space", "-leading", "x" * 65, 7])
def test_invalid_registration_name_is_rejected(bad_name):
    class Plugin:
        @hookimpl
        def agent_memory_register_clocks(self, register):
            register(bad_name, lambda context: SystemClocks())

    with pytest.raises(PluginLoadError, match="invalid clock plugin name"):
        load_plugins(strict=True, entry_points=False, plugins=[Plugin()])


def test_non_callable_factory_is_rejected():
    class Plugin:
        @hookimpl
        def agent_memory_register_clocks(self, register):
            register("not-callable", SystemClocks())

    with pytest.raises(PluginLoadError, match="factory is not callable"):
        load_plugins(strict=True, entry_points=False, plugins=[Plugin()])


def test_hook_that_raises_is_skipped_and_reported_when_not_strict():
    class Exploding:
        @hookimpl
        def agent_memory_register_clocks(self, register):
            register("early", lambda context: SystemClocks())
            raise RuntimeError("boom")

    result = load_plugins(entry_points=False, plugins=[Exploding()])

    # Nothing from a half-finished hook is kept.
    assert result.registry.registrations() == ()
    [failure] = result.failures
    assert failure.error == "RuntimeError: boom"
    assert failure.distribution == LOCAL_DISTRIBUTION


def test_hook_with_an_argument_the_spec_lacks_is_reported():
    class WrongSignature:
        @hookimpl
        def agent_memory_register_clocks(self, register, settings):
            register("x", lambda context: SystemClocks())

    result = load_plugins(entry_points=False, plugins=[WrongSignature()])

    [failure] = result.failures
    assert "settings" in failure.error


def test_each_load_uses_a_fresh_plugin_manager():
    first = load_plugins(entry_points=False, plugins=[_clock_plugin("only-first")])
    second = load_plugins(entry_points=False, plugins=[])

    assert first.registry.names("clock") == ("only-first",)
    assert second.registry.registrations() == ()


def test_same_entry_point_name_in_two_distributions_is_not_a_conflict(
    fake_dist, clock_plugin_source
):
    fake_dist(
        "first-dist",
        "1.0",
        entry_points={"plugin": "am_first"},
        files={"am_first": clock_plugin_source("first")},
    )
    fake_dist(
        "second-dist",
        "1.0",
        entry_points={"plugin": "am_second"},
        files={"am_second": clock_plugin_source("second")},
    )

    result = load_plugins(strict=True, distributions=["first-dist", "second-dist"])

    assert result.registry.names("clock") == ("first", "second")
    assert result.registry.get("clock", "second").distribution == "second-dist"
