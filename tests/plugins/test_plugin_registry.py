"""The typed registry facade: lookup, typed creation, port checks (R-ARCH-3, R-ARCH-5)."""

from __future__ import annotations

from datetime import UTC
from pathlib import Path

import pytest

from memory_core.ports.clock import DomainClock, InfraClock
from memory_core.ports.secrets import SecretPolicy
from memory_plugins import hookimpl
from memory_plugins.builtin import clocks as builtin_clocks
from memory_plugins.builtin import secret_policies as builtin_secret_policies
from memory_plugins.context import FactoryContext
from memory_plugins.errors import DuplicatePluginError, PluginLoadError, PluginNotFound
from memory_plugins.hookspecs import PORT_FAMILIES
from memory_plugins.loader import load_plugins
from memory_plugins.registry import PluginFailure, PluginRegistry, Registration


class _OnlyMonotonic:
    def monotonic(self) -> float:
        return 1.0


class _NotAStore:
    def insert(self) -> None:  # one ClaimStore member of many
        return None


class _Plugin:
    """Registrations exercising the port checks."""

    @hookimpl
    def agent_memory_register_clocks(self, register):
        register("monotonic-only", lambda context: _OnlyMonotonic())

    @hookimpl
    def agent_memory_register_claim_stores(self, register):
        register("wrong-shape", lambda context: _NotAStore(), description="not a ClaimStore")
        register("crashing", _crash)


def _crash(context: FactoryContext) -> object:
    raise OSError("disk on fire")


@pytest.fixture
def registry() -> PluginRegistry:
    result = load_plugins(
        strict=True,
        entry_points=False,
        plugins=[builtin_clocks, builtin_secret_policies, _Plugin()],
    )
    return result.registry


@pytest.fixture
def context(tmp_path: Path) -> FactoryContext:
    return FactoryContext(data_dir=tmp_path)


def test_builtin_system_clock_satisfies_both_clock_ports(registry, context):
    """R-ARCH-5: the composition root builds ports from registrations by name."""
    domain = registry.create_domain_clock("system", context)
    infra = registry.create_infra_clock("system", context)

    assert isinstance(domain, DomainClock)
    assert isinstance(infra, InfraClock)
    assert domain.now().tzinfo is UTC
    assert domain.timezone() == "UTC"
    assert infra.monotonic() <= infra.monotonic()


def test_clock_options_choose_the_timezone(registry, tmp_path):
    clock = registry.create_domain_clock(
        "system", FactoryContext(data_dir=tmp_path, options={"timezone": "Asia/Shanghai"})
    )

    assert clock.timezone() == "Asia/Shanghai"


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"timezone": "Mars/Olympus"}, "plugins.clock.options.timezone: unknown IANA time zone"),
        ({"timezone": 8}, "plugins.clock.options.timezone: expected a string, got integer"),
        ({"tz": "UTC"}, "plugins.clock.options.tz: unknown key"),
    ],
)
def test_bad_clock_options_fail_naming_the_option_and_the_plugin(
    registry, tmp_path, options, expected
):
    """R-ARCH-3: a clear error naming the plugin, its distribution and what is wrong."""
    with pytest.raises(PluginLoadError) as raised:
        registry.create_domain_clock("system", FactoryContext(data_dir=tmp_path, options=options))

    assert "clock plugin 'system' from <local>" in str(raised.value)
    assert expected in str(raised.value)


def test_builtin_pattern_secret_policy_is_created_with_its_mode(registry, tmp_path):
    policy = registry.create_secret_policy(
        "patterns", FactoryContext(data_dir=tmp_path, options={"mode": "redact"})
    )

    assert isinstance(policy, SecretPolicy)
    assert policy.check_write("nothing secret here") == "nothing secret here"


def test_bad_secret_policy_mode_names_the_choices(registry, tmp_path):
    with pytest.raises(PluginLoadError, match=r"options\.mode: must be one of 'reject', 'redact'"):
        registry.create_secret_policy(
            "patterns", FactoryContext(data_dir=tmp_path, options={"mode": "ignore"})
        )


def test_product_not_satisfying_the_port_raises_plugin_load_error(registry, context):
    """R-ARCH-3: a factory whose product does not satisfy its family's port is refused."""
    with pytest.raises(PluginLoadError) as raised:
        registry.create_claim_store("wrong-shape", context)

    message = str(raised.value)
    assert "claim_store plugin 'wrong-shape' from <local>" in message
    assert "does not satisfy ClaimStore" in message
    assert "get" in message.split("missing:")[1]  # names what is absent


def test_typed_helper_checks_the_specific_port_within_a_family(registry, context):
    assert isinstance(registry.create("clock", "monotonic-only", context), InfraClock)
    with pytest.raises(PluginLoadError, match="does not satisfy DomainClock"):
        registry.create_domain_clock("monotonic-only", context)


def test_factory_exception_is_wrapped_naming_plugin_and_distribution(registry, context):
    with pytest.raises(PluginLoadError) as raised:
        registry.create_claim_store("crashing", context)

    assert "claim_store plugin 'crashing' from <local> failed to build" in str(raised.value)
    assert "OSError: disk on fire" in str(raised.value)
    assert isinstance(raised.value.__cause__, OSError)


def test_unknown_name_lists_available_names(registry, context):
    with pytest.raises(PluginNotFound) as raised:
        registry.create_domain_clock("sundial", context)

    assert "no clock plugin named 'sundial' (available: monotonic-only, system)" in str(
        raised.value
    )


def test_unknown_name_mentions_plugins_that_failed_to_load():
    """R-ARCH-3: a missing plugin's error names the broken ones that might have provided it."""
    failure = PluginFailure(
        entry_point="fancy",
        distribution="fancy-store",
        version="0.3",
        error="ImportError: no apsw",
    )
    registry = PluginRegistry([], failures=[failure])

    with pytest.raises(PluginNotFound) as raised:
        registry.get("claim_store", "fancy")

    message = str(raised.value)
    assert "(available: none)" in message
    assert "fancy (fancy-store 0.3): ImportError: no apsw" in message


def test_unknown_family_is_refused_naming_the_families(registry):
    with pytest.raises(PluginNotFound, match="no port family 'clocks'"):
        registry.get("clocks", "system")


def test_registrations_are_sorted_and_filterable(registry):
    keys = [(r.family, r.name) for r in registry.registrations()]

    assert keys == sorted(keys)
    assert [r.name for r in registry.registrations("clock")] == ["monotonic-only", "system"]
    assert registry.families() == tuple(sorted(PORT_FAMILIES))


def test_registry_refuses_duplicates_naming_both_distributions():
    """R-ARCH-3: the registry itself never holds two registrations of one name."""

    def make(distribution: str) -> Registration:
        return Registration(
            family="clock",
            name="same",
            factory=lambda context: None,
            distribution=distribution,
            version="1.0",
            module=f"{distribution}.plugin",
        )

    with pytest.raises(DuplicatePluginError) as raised:
        PluginRegistry([make("one"), make("two")])

    assert "one 1.0" in str(raised.value)
    assert "two 1.0" in str(raised.value)
