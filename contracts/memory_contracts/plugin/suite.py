"""The conformance suite itself: one test per promise a plugin distribution makes."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import pytest

from memory_contracts.fakes import ManualClock
from memory_contracts.plugin.discovery import (
    PluginUnderTest,
    _same_name,
    conformance_context,
    find_plugin,
    load_strictly,
)
from memory_contracts.plugin.smoke import (
    _close,
    _smoke,
)
from memory_core.ports.providers import TextProvider
from memory_plugins.errors import PluginError
from memory_plugins.hookspecs import PORT_FAMILIES
from memory_plugins.loader import load_plugins
from memory_plugins.registry import PLUGIN_NAME_PATTERN, PluginRegistry, Registration

__all__ = ["PluginConformance"]


# --- the suite -----------------------------------------------------------------------------
class PluginConformance:
    """Subclass as `Test…` and set `entry_point` (or `distribution`) and `options`."""

    entry_point: ClassVar[str | None] = None
    distribution: ClassVar[str | None] = None
    #: Factory options per registration name (or "family:name").
    options: ClassVar[Mapping[str, Mapping[str, Any]]] = {}
    #: Seconds one registration's smoke check may take.
    smoke_timeout_seconds: ClassVar[float] = 10.0

    @pytest.fixture
    def plugin(self) -> PluginUnderTest:
        return self._find()[0]

    @pytest.fixture
    def registry(self, plugin: PluginUnderTest) -> PluginRegistry:
        try:
            return load_strictly(plugin.distribution)
        except PluginError as exc:
            pytest.fail(f"{plugin.origin} does not load in strict mode: {exc}", pytrace=False)

    @pytest.fixture
    def registrations(self, registry: PluginRegistry) -> tuple[Registration, ...]:
        """The registrations of the entry point(s) under test."""
        _, entry_points = self._find()
        if self.entry_point is None:
            return registry.registrations()
        # A distribution may ship several entry points: load just these modules (in a
        # manager of their own) to learn which registrations are theirs.
        own = load_plugins(
            strict=True, entry_points=False, plugins=[ep.load() for ep in entry_points]
        ).registry
        return tuple(registry.get(r.family, r.name) for r in own.registrations())

    @pytest.fixture
    def conformance_clock(self) -> ManualClock:
        return ManualClock()

    @pytest.fixture
    def conformance_text_provider(self) -> TextProvider | None:
        """Handed to extractor factories as `FactoryContext.text_provider`."""
        return None

    def _find(self) -> tuple[PluginUnderTest, list[Any]]:
        return find_plugin(entry_point=self.entry_point, distribution=self.distribution)

    def _options(self, registration: Registration) -> Mapping[str, Any]:
        qualified = f"{registration.family}:{registration.name}"
        return self.options.get(qualified, self.options.get(registration.name, {}))

    def _build(
        self,
        registry: PluginRegistry,
        registration: Registration,
        tmp_path: Path,
        clock: ManualClock,
        text_provider: TextProvider | None,
    ) -> object:
        context = conformance_context(
            tmp_path / "data" / registration.family / registration.name,
            family=registration.family,
            options=self._options(registration),
            clock=clock,
            text_provider=text_provider,
        )
        try:
            return registry.create(registration.family, registration.name, context)
        except PluginError as exc:
            pytest.fail(str(exc), pytrace=False)

    # --- tests ---------------------------------------------------------------------------
    def test_the_plugin_is_installed_in_the_agent_memory_group(self) -> None:
        """R-ARCH-3: found through the `agent_memory` entry-point group, with its version."""
        plugin, _ = self._find()  # not the fixture: a missing plugin fails here, not errors
        assert plugin.entry_points
        assert plugin.version, f"{plugin.distribution} has no version in its metadata"

    def test_it_loads_in_strict_mode_without_unknown_hooks(self, plugin: PluginUnderTest) -> None:
        """R-ARCH-3: imports cleanly, every hook is a known spec (`check_pending()`), every
        hook takes only the spec's arguments, and no name is registered twice."""
        try:
            result = load_plugins(strict=True, distributions=[plugin.distribution])
        except PluginError as exc:
            pytest.fail(f"{plugin.origin} does not load in strict mode: {exc}", pytrace=False)
        assert result.failures == ()

    def test_it_registers_at_least_one_implementation(
        self, plugin: PluginUnderTest, registrations: tuple[Registration, ...]
    ) -> None:
        """R-ARCH-3: a plugin that registers nothing is almost certainly misspelt."""
        assert registrations, (
            f"{plugin.origin} ({', '.join(plugin.entry_points)}) registered nothing; does "
            "it decorate `agent_memory_register_*` functions with memory_plugins.hookimpl?"
        )

    def test_every_registration_is_well_formed(
        self, plugin: PluginUnderTest, registrations: tuple[Registration, ...]
    ) -> None:
        """R-ARCH-3: config-friendly names, known families, callable factories, a
        description for `agent-memory plugins`, attributed to the distribution."""
        problems = []
        for registration in registrations:
            label = f"{registration.family} {registration.name!r}"
            if registration.family not in PORT_FAMILIES:
                problems.append(f"{label}: unknown family")
            if not PLUGIN_NAME_PATTERN.fullmatch(registration.name):
                problems.append(f"{label}: name does not match {PLUGIN_NAME_PATTERN.pattern}")
            if not callable(registration.factory):
                problems.append(f"{label}: factory is not callable")
            if not registration.description.strip():
                problems.append(f"{label}: no description (shown by `agent-memory plugins`)")
            if not _same_name(registration.distribution, plugin.distribution):
                problems.append(f"{label}: attributed to {registration.origin}")
        assert not problems, "; ".join(problems)

    def test_options_name_registrations_of_the_plugin(
        self, registrations: tuple[Registration, ...]
    ) -> None:
        """A misspelt key in `options` would silently build with defaults."""
        known = {r.name for r in registrations} | {f"{r.family}:{r.name}" for r in registrations}
        unknown = sorted(set(self.options) - known)
        assert not unknown, f"options for unknown registrations: {unknown} (known: {sorted(known)})"

    def test_every_registration_builds_an_object_satisfying_its_port(
        self,
        registry: PluginRegistry,
        registrations: tuple[Registration, ...],
        tmp_path: Path,
        conformance_clock: ManualClock,
        conformance_text_provider: TextProvider | None,
    ) -> None:
        """R-ARCH-5: the factory builds from a FactoryContext and the product satisfies the
        family's port (checked by the registry, as the composition root checks it)."""
        for registration in registrations:
            product = self._build(
                registry, registration, tmp_path, conformance_clock, conformance_text_provider
            )
            asyncio.run(_close(product))

    def test_every_registration_passes_its_family_smoke_check(
        self,
        registry: PluginRegistry,
        registrations: tuple[Registration, ...],
        tmp_path: Path,
        conformance_clock: ManualClock,
        conformance_text_provider: TextProvider | None,
    ) -> None:
        """R-ARCH-2, R-ARCH-6: one round trip through the port under a deadline."""
        for registration in registrations:
            product = self._build(
                registry, registration, tmp_path, conformance_clock, conformance_text_provider
            )
            seconds = self.smoke_timeout_seconds
            try:
                asyncio.run(_smoke(product, registration.family, conformance_clock, seconds))
            except AssertionError as exc:
                pytest.fail(
                    f"{registration.family} {registration.name!r} from {registration.origin}: "
                    f"{exc}",
                    pytrace=False,
                )
            except TimeoutError:
                pytest.fail(
                    f"{registration.family} {registration.name!r}: the smoke check did not "
                    f"finish within {seconds} s",
                    pytrace=False,
                )

    def test_it_coexists_with_every_installed_plugin(
        self, plugin: PluginUnderTest, registrations: tuple[Registration, ...]
    ) -> None:
        """R-ARCH-3: loaded next to everything installed (first-party plugins included),
        none of its names is shadowed by another distribution and it breaks nothing."""
        result = load_plugins()
        ours = [
            failure
            for failure in result.failures
            if _same_name(failure.distribution, plugin.distribution)
            or plugin.distribution in failure.error  # a duplicate names both distributions
        ]
        assert not ours, "; ".join(failure.describe() for failure in ours)
        for registration in registrations:
            chosen = result.registry.get(registration.family, registration.name)
            assert _same_name(chosen.distribution, plugin.distribution), (
                f"{registration.family} {registration.name!r} is shadowed by {chosen.origin}; "
                "choose a name no installed plugin uses"
            )
